"""A private PostgreSQL cluster for the fault drills: ``initdb`` into a
folder of its own, its own free port on 127.0.0.1, trust authentication,
stopped and started again on the same port with ``pg_ctl``. The shared
cluster on 5432 is never touched.

The server binaries come with the PostgreSQL the tests already need
(Debian: ``/usr/lib/postgresql/<version>/bin``, which is not on PATH);
nothing is installed. Missing, the drill is skipped locally and fails under
CI, as a missing shared service does (``tests/services.py``). PostgreSQL
refuses to run as root: as root the cluster belongs to the ``postgres``
user (``runuser``), in a folder that user can reach (a test's ``tmp_path``
is private to root).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from tests.faults.redis_server import free_port

OWNER = "postgres"  # who runs the cluster when the tests run as root


def binaries() -> Path:
    """The folder of ``initdb`` and ``pg_ctl`` (the newest version)."""
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    folders = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda path: int(Path(path).parts[-3]),
    )
    if folders:
        return Path(folders[-1]).parent
    message = "PostgreSQL's server binaries (initdb, pg_ctl) are not installed"
    if os.environ.get("CI"):
        pytest.fail(f"{message} (required under CI)")
    pytest.skip(message)


class PrivatePostgres:
    def __init__(self) -> None:
        self.bin = binaries()
        self.as_user: list[str] = []
        if os.geteuid() == 0:
            try:
                owner = pwd.getpwnam(OWNER)
            except KeyError:
                pytest.fail(f"running as root needs a {OWNER!r} user for initdb")
            self.as_user = ["runuser", "-u", OWNER, "--"]
        self.folder = Path(tempfile.mkdtemp(prefix="pst-postgres-"))
        if self.as_user:
            os.chown(self.folder, owner.pw_uid, owner.pw_gid)
        self.data = self.folder / "data"
        self.port = free_port()
        self.initialized = False

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, *command: str, timeout: float = 120.0) -> None:
        done = subprocess.run(
            [*self.as_user, *command], capture_output=True, text=True, timeout=timeout
        )
        if done.returncode != 0:
            raise AssertionError(f"{command[0]}: {done.stdout}\n{done.stderr}")

    def start(self, timeout: float = 60.0) -> None:
        """Start it (``initdb`` the first time) and wait until it answers."""
        if not self.initialized:
            self._run(
                str(self.bin / "initdb"),
                "-D",
                str(self.data),
                "-U",
                "postgres",
                "--auth=trust",
                "--no-sync",
                "-E",
                "UTF8",
            )
            self.initialized = True
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1"
            f" -c unix_socket_directories={self.folder} -c fsync=off"
        )
        self._run(
            str(self.bin / "pg_ctl"),
            "-D",
            str(self.data),
            "-o",
            options,
            "-l",
            str(self.folder / "postgres.log"),
            "-w",
            "-t",
            str(int(timeout)),
            "start",
            timeout=timeout + 30,
        )
        deadline = time.monotonic() + timeout
        engine = create_engine(self.url, connect_args={"connect_timeout": 2})
        try:
            while True:
                try:
                    with engine.connect() as conn:
                        conn.execute(text("SELECT 1"))
                    return
                except Exception:
                    assert time.monotonic() < deadline, self.log()
                    time.sleep(0.2)
        finally:
            engine.dispose()

    def stop(self, timeout: float = 60.0) -> None:
        """Stop it (fast: its sessions are ended) and wait until it has."""
        if self.initialized and (self.data / "postmaster.pid").exists():
            self._run(
                str(self.bin / "pg_ctl"),
                "-D",
                str(self.data),
                "-m",
                "fast",
                "-w",
                "-t",
                str(int(timeout)),
                "stop",
                timeout=timeout + 30,
            )

    def remove(self) -> None:
        """Stop it and delete its folder."""
        try:
            self.stop()
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)

    def log(self) -> str:
        path = self.folder / "postgres.log"
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""
