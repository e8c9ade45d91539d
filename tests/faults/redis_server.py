"""A private ``redis-server`` for the fault drills: its own free port and
folder, no persistence (``--save ''``, ``--appendonly no``: a restart loses
every queued task, the harder case), stopped and started again on the same
port. The shared Redis on 6379 is never touched."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
import redis


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class PrivateRedis:
    def __init__(self, folder: Path):
        self.folder = folder
        self.port = free_port()
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 30.0) -> None:
        """Start it and wait until it answers PING."""
        binary = shutil.which("redis-server")
        if binary is None:  # as tests/services.py: a skip locally, under CI a failure
            if os.environ.get("CI"):
                pytest.fail("redis-server is not installed (required under CI)")
            pytest.skip("redis-server is not installed")
        self.folder.mkdir(parents=True, exist_ok=True)
        with (self.folder / "redis.log").open("ab") as log:
            where = ["--port", str(self.port), "--bind", "127.0.0.1"]
            # nothing kept: a restart starts empty
            volatile = ["--save", "", "--appendonly", "no", "--dir", str(self.folder)]
            self.process = subprocess.Popen(
                [binary, *where, *volatile],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:  # the port was taken meanwhile
                raise AssertionError((self.folder / "redis.log").read_text())
            try:
                with redis.Redis.from_url(self.url, socket_connect_timeout=1) as c:
                    c.ping()
                return
            except redis.RedisError:
                assert time.monotonic() < deadline, "redis-server did not start"
                time.sleep(0.1)

    def stop(self, timeout: float = 30.0) -> None:
        """SIGTERM (it saves nothing) and wait until it has exited."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=timeout)
