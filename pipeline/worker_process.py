"""Embedded mode's evaluation in a worker process of its own, started and
supervised by the app (``EMBEDDED_WORKER=process``, the default).

Why a process: evaluation is CPU work in Python (prompt building, reply
parsing, the deterministic suites). In the web process it holds the GIL
while pages wait: 20 readers of a run page saw p95 latencies of seconds.
In its own process, at a lower CPU priority (``nice`` 10), it leaves the
web process to serve pages, and uses the machine's second core.

How the two talk: through the database, which already holds the work. A
run's chunks are recorded ``pending`` when it is planned; the worker
process hands them to its own Celery worker (the in-memory broker and
threads pool the embedded mode has always used, so tasks, retries, the
watchdog and crash recovery are the tested ones) and polls for new work.
The web process writes a byte on the worker's stdin when it records new
work, so a run starts at once rather than at the next poll. When the web
process ends, the worker reads end-of-file and stops: no orphan.

No service to install (no broker), and the worker needs nothing the web
process does not have. The price: one more Python process (~150 MB).

Crash safety: if the worker process dies, the supervisor starts a new one
after a short back-off; it resumes unfinished runs as a restarted app
does (chunks in flight go back to pending; finished chunks are kept). At
end-of-file it exits at once, as if it crashed, for the same reason.
"""

from __future__ import annotations

import json
import logging
import os
import select
import subprocess
import sys
import threading
import time
from pathlib import Path

log = logging.getLogger(__name__)
ROOT = Path(__file__).resolve().parents[1]
NICE = 10  # lower CPU priority than the web process
POLL_S = 1.0  # the worker looks for new work at least this often
RESTART_BACKOFF_S = (0.5, 1, 2, 5, 10, 30)
STOP_TIMEOUT_S = 15.0


def worker_config(config: dict) -> dict:
    """The settings the worker process builds its app from: every JSON value
    of this app's (the web process may have been given overrides that are
    not in the environment), with the worker in-process over there."""
    chosen = {}
    for key, value in config.items():
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            continue  # e.g. Flask's timedelta settings: the worker's defaults do
        chosen[key] = value
    return {**chosen, "EMBEDDED_WORKER": "thread"}


class WorkerProcess:
    """The supervisor, in the web process: starts the worker on first use,
    pokes it when there is new work, restarts it when it dies."""

    dispatches_here = False  # the worker process claims and runs the chunks

    def __init__(self, config: dict, instance: Path):
        self.config_path = Path(instance) / "worker-config.json"
        self.config = config
        self._lock = threading.Lock()
        self._process: subprocess.Popen | None = None
        self._stopping = False
        self._watcher: threading.Thread | None = None
        self.restarts = 0

    @property
    def pid(self) -> int | None:
        process = self._process
        return process.pid if process is not None and process.poll() is None else None

    def poke(self) -> None:
        """New work is recorded: make sure a worker runs, and wake it."""
        self.ensure_started()
        process = self._process
        try:
            if process is not None and process.stdin is not None:
                process.stdin.write(b"\n")
                process.stdin.flush()
        except (BrokenPipeError, ValueError):
            pass  # it is exiting; the supervisor restarts it, and it polls

    def ensure_started(self) -> None:
        with self._lock:
            if self._stopping or self.pid is not None:
                return
            self._spawn()
            if self._watcher is None:
                self._watcher = threading.Thread(
                    target=self._supervise, name="worker-supervisor", daemon=True
                )
                self._watcher.start()

    def _spawn(self) -> None:
        settings = json.dumps(worker_config(self.config))
        descriptor = os.open(
            self.config_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600
        )
        with os.fdopen(
            descriptor, "w", encoding="utf-8"
        ) as sink:  # holds the secret key
            sink.write(settings)
        self._process = subprocess.Popen(
            [sys.executable, str(ROOT / "app.py"), "--worker", str(self.config_path)],
            cwd=ROOT,
            stdin=subprocess.PIPE,
        )
        log.info("worker process %d started", self._process.pid)

    def _supervise(self) -> None:
        failures = 0
        while True:
            process = self._process
            if process is None:
                return
            code = process.wait()
            if process.stdin is not None:
                process.stdin.close()
            with self._lock:
                if self._stopping:
                    return
            log.warning("worker process %d ended (%s); restarting", process.pid, code)
            time.sleep(RESTART_BACKOFF_S[min(failures, len(RESTART_BACKOFF_S) - 1)])
            failures += 1
            with self._lock:
                if self._stopping:
                    return
                self._spawn()
                self.restarts += 1

    def stop(self) -> None:
        """End the worker; the chunks it had are taken back by the next
        start (resume), as after a crash."""
        with self._lock:
            self._stopping = True
            process = self._process
        if process is None:
            return
        if process.stdin is not None:
            process.stdin.close()  # end-of-file: the worker stops
        try:
            process.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    stop_embedded = stop  # the name tests and benchmarks call on any queue


def serve(app, stdin=sys.stdin.buffer, poll_s: float = POLL_S) -> None:
    """The worker process's loop: resume, then hand out pending chunks on
    every poke and every ``poll_s``, until the web process goes away."""
    service = app.extensions["runs"]
    # From the start, not with the first chunk it sends: a restarted worker
    # with nothing new to send must still take back the chunks the dead one
    # held (a run once sat "running" for 11 minutes waiting for that).
    app.extensions["watchdog"].start()
    app.extensions["resume"]()  # unfinished runs, once (the process lock)
    service.enqueue()
    while True:
        ready, _, _ = select.select([stdin], [], [], poll_s)
        if ready and not os.read(stdin.fileno(), 4096):
            break  # end-of-file: the web process stopped or died
        try:
            service.enqueue()
        except Exception:  # a database hiccup must not end the worker
            log.exception("handing out chunks failed")


def run(create_app, config_path: str) -> None:
    """The worker process's entry (``python app.py --worker CONFIG``): a
    lower priority, the web process's settings, then :func:`serve`."""
    os.nice(NICE)
    path = Path(config_path)
    settings = json.loads(path.read_text(encoding="utf-8"))
    path.unlink(missing_ok=True)  # it holds the secret key and the judge's key
    serve(create_app(settings))
    # End at once, as a crash would: a warm shutdown would let finishing
    # tasks hand out more chunks to a queue about to vanish, after the next
    # start has already taken the unfinished chunks back (resume).
    os._exit(0)
