"""Reaching the real Redis and PostgreSQL used by the tests.

Locally a missing service skips the tests that need it; under CI (the ``CI``
environment variable set) it fails them, so a broken CI machine cannot pass
by skipping.
"""

from __future__ import annotations

import os
import socket
import uuid

import pytest


def _worker_number() -> int:
    """0 in a plain run; N under pytest-xdist's worker ``gwN``."""
    return int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw"))


# One Redis database per xdist worker (15, 14, ...): the Redis drills flush
# theirs, and two workers must never flush each other's queue.
REDIS_URL = os.environ.get(
    "TEST_REDIS_URL", f"redis://127.0.0.1:6379/{15 - _worker_number()}"
)
# What a command a test runs may take: the suite's deadline for a whole test
# (pyproject's `timeout`, 300 s) less a margin, so a hang names the command.
# A guard against hangs, not a speed check: beside 20 busy processes a
# 7 s check of the offline NLP data took more than 120 s.
SUBPROCESS_DEADLINE_S = 280
POSTGRES_URL = os.environ.get(
    "TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)


def port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def require(service: str, host: str, port: int) -> None:
    if port_open(host, port):
        return
    message = f"{service} is not reachable on {host}:{port}"
    if os.environ.get("CI"):
        pytest.fail(f"{message} (required under CI)")
    pytest.skip(message)


def postgres_schema_url() -> tuple[str, str]:
    """A throwaway schema so test runs never touch each other's tables."""
    return POSTGRES_URL, f"pst_{uuid.uuid4().hex[:12]}"
