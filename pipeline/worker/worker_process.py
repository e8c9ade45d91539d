"""Embedded mode's Celery worker: a child process the app starts and
supervises (``EMBEDDED_WORKER=process``, the default), consuming the local
broker (``pipeline/worker/local_broker.py``) as team mode's workers consume Redis.

Why a process: evaluation is CPU work in Python (prompt building, reply
parsing, the deterministic suites). In the web process it held the GIL while
pages waited (20 readers of a run page saw p95 latencies of seconds). In its
own process, at a lower CPU priority (``nice`` 10), it leaves the web
process to serve pages and uses the machine's second core.

One worker per instance and database: the process that holds the lock
beside the database's queue folder (``instance/queue.lock``)
supervises it (another gunicorn worker or a CLI command on the same
instance sends its tasks to that one, and takes over within
``TAKEOVER_S`` if the holder ends). The child is spawned (``python app.py
--worker``; a web process and a command alike) and gets the app's settings
in a file it deletes at once (they hold the secret key). It has a pipe whose
end of file tells it the app is gone: it exits, no orphan.

Crash safety: a worker starts on an empty queue and takes back what was in
flight (:func:`begin`); if it dies, the supervisor starts another after a
short back-off, which does the same. Finished chunks are kept.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from evaluator import warm_up_judge

if TYPE_CHECKING:
    from flask import Flask

# the app's factory (app.create_app): settings -> the app built from them
CreateApp = Callable[[dict[str, Any]], "Flask"]

log = logging.getLogger(__name__)
ROOT = Path(__file__).resolve().parents[2]
NICE = 10  # lower CPU priority than the web process
RESTART_BACKOFF_S = (0.5, 1, 2, 5, 10, 30)
STEADY_S = 60.0  # a worker that lived this long restarts without back-off growth
TAKEOVER_S = 5.0  # a process without the lock checks this often for it
STOP_TIMEOUT_S = 15.0


def worker_config(config: dict[str, Any]) -> dict[str, Any]:
    """The settings the worker process builds its app from: every JSON value
    of this app's (the web process may have been given overrides that are
    not in the environment)."""
    chosen = {}
    for key, value in config.items():
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            continue  # e.g. Flask's timedelta settings: the worker's defaults do
        chosen[key] = value
    return chosen


class WorkerProcess:
    """The supervisor, in the app's process: starts the worker on first use,
    restarts it when it dies, stops it with the app."""

    def __init__(self, config: dict[str, Any], instance: Path):
        self.config = config
        self.instance = Path(instance)
        # what is spawned, followed by the settings file's path
        self.command = [sys.executable, str(ROOT / "app.py"), "--worker"]
        self.config_path: Path | None = None  # the latest worker's settings
        # beside the database's queue: another database of the same checkout
        # has a worker of its own (config.queue_folder)
        self.lock_path = Path(config["QUEUE_FOLDER"]).with_suffix(".lock")
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._process: subprocess.Popen[bytes] | None = None
        self._lock_descriptor: int | None = None  # held: this process supervises
        self._stopping = False
        self._watcher: threading.Thread | None = None
        self.restarts = 0

    @property
    def pid(self) -> int | None:
        process = self._process
        return process.pid if process is not None and process.poll() is None else None

    def ensure_started(self) -> None:
        """Cheap once running: called before every task is sent."""
        if self._watcher is not None or self._stopping:
            return
        with self._lock:
            if self._watcher is None and not self._stopping:
                if self._take_lock():
                    self._spawn()
                self._watcher = threading.Thread(
                    target=self._supervise, name="worker-supervisor", daemon=True
                )
                self._watcher.start()

    def _take_lock(self) -> bool:
        """Become this instance's supervisor, for the life of this process."""
        if self._lock_descriptor is not None:
            return True
        descriptor = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(descriptor)
            return False
        # not inherited by the spawned child: the lock must end with this
        # process, not with its worker
        self._lock_descriptor = descriptor
        return True

    def _spawn(self) -> None:
        # A file per worker (0600): a fixed name let the worker of a command
        # that had just exited read, then remove, the next command's.
        self._forget_config()  # a dead worker's, if it never read it
        descriptor, name = tempfile.mkstemp(
            prefix="worker-config-", suffix=".json", dir=self.instance
        )
        self.config_path = Path(name)
        with os.fdopen(descriptor, "w", encoding="utf-8") as sink:
            sink.write(json.dumps(worker_config(self.config)))
        self._process = subprocess.Popen(
            [*self.command, str(self.config_path)],
            cwd=ROOT,
            stdin=subprocess.PIPE,  # its end of file: this process is gone
            stdout=2,  # onto our stderr: our stdout is the CLI's results document
        )
        log.info("worker process %d started", self._process.pid)

    def _supervise(self) -> None:
        failures = 0
        while not self._stopping:
            process = self._process
            if process is None:  # another process supervises: wait for the lock
                self._wake.wait(TAKEOVER_S)
                with self._lock:
                    if not self._stopping and self._take_lock():
                        self._spawn()
                continue
            started = time.monotonic()
            code = process.wait()
            if process.stdin is not None:
                process.stdin.close()
            if self._stopping:
                return
            log.warning("worker process %d ended (%s); restarting", process.pid, code)
            if time.monotonic() - started > STEADY_S:
                failures = 0  # it had been running: not a crash loop
            self._wake.wait(
                RESTART_BACKOFF_S[min(failures, len(RESTART_BACKOFF_S) - 1)]
            )
            failures += 1
            with self._lock:
                if not self._stopping:
                    self._spawn()
                    self.restarts += 1

    def stop(self) -> None:
        """End the worker; what it had is taken back by the next start."""
        with self._lock:
            self._stopping = True
            process = self._process
        self._wake.set()
        if process is not None:
            if process.stdin is not None:
                process.stdin.close()  # end of file: the worker exits
            try:
                process.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self._forget_config()
        if self._lock_descriptor is not None:  # another process may supervise now
            os.close(self._lock_descriptor)
            self._lock_descriptor = None

    def _forget_config(self) -> None:
        if self.config_path is not None:
            self.config_path.unlink(missing_ok=True)  # it holds the secret key


def begin(app: Flask) -> None:
    """What a worker on the local broker does before it consumes (Celery's
    ``worker_init``, however the worker was started): it is the only worker
    of its database (the queue's lock), so its watchdog's first sweep takes
    back every chunk in flight at once (their tasks were in the queue or on
    the worker that died; a copy of one still queued is harmless), then
    sends what may run."""
    from pipeline.worker import execution

    try:
        execution.sweep(execution.Context.of(app), sole=True)
    except Exception:  # the database away at start: the watchdog's next round
        log.exception("the first sweep failed")
    app.extensions["watchdog"].start()


def _exit_at_end_of_file(lifeline: int) -> None:
    """Exit at once when the app's process is gone, as a crash would: a warm
    shutdown could run chunks long after nobody supervises them."""
    while os.read(lifeline, 4096):
        pass
    os._exit(0)


def run(
    create_app: CreateApp, config_path: str, stdin: BinaryIO = sys.stdin.buffer
) -> None:
    """A spawned worker process (``python app.py --worker CONFIG``): the
    app's settings from the file, which it deletes at once (they hold the
    secret key and the judge's key); its stdin is its lifeline."""
    path = Path(config_path)
    settings = json.loads(path.read_text(encoding="utf-8"))
    path.unlink(missing_ok=True)
    serve(create_app, settings, stdin.fileno())


def serve(create_app: CreateApp, settings: dict[str, Any], lifeline: int) -> None:
    """The worker process: a lower priority, the app's settings,
    then a Celery worker (:func:`begin` runs when it is built)."""
    os.nice(NICE)
    threading.Thread(
        target=_exit_at_end_of_file, args=(lifeline,), name="lifeline", daemon=True
    ).start()
    # The judge's HTTP client loads while the app and Celery start, not when
    # the first chunk asks for it: that import (0.2-0.5 s here) was the wait
    # between the run stored and its first judge call.
    warm_up_judge()
    app = create_app({**settings, "EMBEDDED_WORKER": "none"})
    # Celery warns a worker run as root because a pickled task could run
    # code; this one is the app's own, as privileged as the app that starts
    # it, and accepts JSON only (pipeline/worker/queue.py). The warning was noise
    # on every embedded start, and a second line after a command's error.
    warnings.filterwarnings(
        "ignore", message="You're running the worker with superuser"
    )
    worker = app.extensions["queue"].celery.Worker(
        pool="threads",
        concurrency=app.config["EMBEDDED_WORKER_THREADS"],
        loglevel="WARNING",
        quiet=True,  # no banner
        without_heartbeat=True,
        without_gossip=True,
        without_mingle=True,
    )
    worker.start()
    os._exit(worker.exitcode or 0)
