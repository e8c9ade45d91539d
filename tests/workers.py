"""Separate Celery worker processes for the Redis-mode tests."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def start_worker(env: dict[str, str], log_path: Path) -> subprocess.Popen:
    """``celery -A app:celery_app worker`` exactly as the README tells users."""
    celery = Path(sys.executable).with_name("celery")
    with log_path.open("ab") as log:  # the child keeps its own descriptor
        return subprocess.Popen(
            [
                str(celery),
                "-A",
                "app:celery_app",
                "worker",
                "--pool",
                "threads",
                "--concurrency",
                "4",
                "--loglevel",
                "WARNING",
                "--without-heartbeat",
                "--without-gossip",
                "--without-mingle",
            ],
            cwd=ROOT,
            env={**os.environ, **env},
            stdout=log,
            stderr=subprocess.STDOUT,
        )


def kill(process: subprocess.Popen) -> None:
    """SIGKILL: no graceful shutdown, unacked tasks stay unacked."""
    if process.poll() is None:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            kill(process)


# as docs/team.md writes it (tests/faults/test_broker_restart.py checks it is)
DOCUMENTED_COMMAND = (
    "-A app:celery_app worker --pool threads --concurrency 20 --loglevel INFO".split()
)


def start_documented_worker(env: dict[str, str], log_path: Path) -> subprocess.Popen:
    """The worker command of docs/team.md, word for word (heartbeat, gossip
    and mingle on, as a user runs it)."""
    celery = Path(sys.executable).with_name("celery")
    with log_path.open("ab") as log:
        return subprocess.Popen(
            [str(celery), *DOCUMENTED_COMMAND],
            cwd=ROOT,
            env={**os.environ, **env},
            stdout=log,
            stderr=subprocess.STDOUT,
        )
