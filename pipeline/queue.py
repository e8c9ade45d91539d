"""Celery wiring (Flask's ``celery_init_app`` pattern), the embedded worker,
and the queue the run service sends tasks through (by name).

Without ``REDIS_URL`` the broker is ``memory://`` and a worker thread inside
this process consumes it, started on the first task sent. With ``REDIS_URL``
tasks go to Redis and separate ``celery -A app:celery_app worker`` processes
run them. The Celery app is made on first use, so commands that queue
nothing do not import Celery.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from core import logs
from pipeline.names import TASKS_MODULE


def celery_settings(config: dict) -> dict:
    broker = config.get("REDIS_URL") or "memory://"
    visibility = config["CELERY_VISIBILITY_TIMEOUT_S"]
    return {
        "broker_url": broker,
        "task_ignore_result": True,  # results of record live in the database
        "task_serializer": "json",
        "accept_content": ["json"],
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "worker_prefetch_multiplier": 1,
        "broker_connection_retry_on_startup": True,
        # Above the longest task, so Redis does not redeliver a running chunk.
        "broker_transport_options": {
            "visibility_timeout": visibility,
            # kombu sweeps for unacked tasks of dead workers every interval x
            # throttle seconds (10 x 10 by default): tie it to the timeout so a
            # crashed worker's tasks come back soon after they become due.
            "unacked_restore_interval": max(1, min(60, visibility // 2)),
            "unacked_restore_throttle": 1,
            # The in-memory transport polls (default 1 s per hop); Redis blocks.
            "polling_interval": 0.01,
        },
        "task_publish_retry_policy": {
            "max_retries": 2,
            "interval_start": 0,
            "interval_step": 0.2,
        },
        "worker_hijack_root_logger": False,
    }


def is_embedded(config: dict) -> bool:
    return not config.get("REDIS_URL")


class EmbeddedWorker:
    """A threads-pool Celery worker in this process, started once, on demand."""

    def __init__(self, celery_app, concurrency: int = 4):
        self.celery_app = celery_app
        self.concurrency = concurrency
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._worker: Any = None  # celery's WorkController (celery ships no types)
        self._stopping = False

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def ensure_started(self) -> None:
        with self._lock:
            if self.running or self._stopping:
                return
            self._worker = self.celery_app.WorkController(
                pool="threads", concurrency=self.concurrency, loglevel="WARNING"
            )
            self._thread = threading.Thread(
                target=self._worker.start, name="embedded-celery-worker", daemon=True
            )
            self._thread.start()

    def stop(self) -> None:
        """Stop the worker and wait for its tasks. Not under the lock: a task
        finishing meanwhile may send another (``ensure_started``), which must
        not wait for the stop that waits for it; that message stays queued
        for the next start (the runs' state is in the database)."""
        with self._lock:
            worker, thread = self._worker, self._thread
            self._stopping = True
        try:
            if worker is not None:
                worker.stop(in_sighandler=False)
            if thread is not None:
                thread.join(timeout=10)
        finally:
            with self._lock:
                self._worker = self._thread = None
                self._stopping = False


class Queue:
    """Sends tasks by name; starts the embedded worker first when there is one.

    Raises the broker's error (kombu ``OperationalError``, redis errors,
    ``OSError``) when a task cannot be published.
    """

    def __init__(
        self,
        make_celery: Callable,
        embedded_threads: int | None,
        on_embedded_start: Callable[[], None] | None = None,
    ):
        self._make_celery = make_celery
        self._on_embedded_start = on_embedded_start
        self._embedded_threads = embedded_threads
        self._lock = threading.Lock()
        self._celery = None
        self._embedded: EmbeddedWorker | None = None

    @property
    def celery(self):
        with self._lock:
            if self._celery is None:
                self._celery = self._make_celery()
                if self._embedded_threads:
                    self._embedded = EmbeddedWorker(
                        self._celery, self._embedded_threads
                    )
            return self._celery

    @property
    def embedded(self) -> EmbeddedWorker | None:
        """The in-process worker (embedded mode, once the queue was used)."""
        return self._embedded

    def send(self, task_name: str, *args) -> None:
        celery = self.celery
        if self._embedded is not None and not self._embedded.running:
            self._embedded.ensure_started()
            if self._on_embedded_start is not None:
                self._on_embedded_start()  # e.g. the watchdog beside the worker
        celery.send_task(task_name, args=list(args))

    def stop_embedded(self) -> None:
        if self._embedded is not None:
            self._embedded.stop()


def make_celery(app, on_worker_ready: Callable | None = None):
    """The Celery app: tasks run inside the Flask app's context."""
    from celery import Celery, Task
    from celery.signals import worker_ready

    class FlaskTask(Task):
        def __call__(self, *args, **kwargs):
            with app.app_context():
                return self.run(*args, **kwargs)

    # Workers import the tasks module (``include``); this module only sends
    # tasks by name, so nothing here imports the tasks.
    celery_app = Celery(app.import_name, task_cls=FlaskTask, include=[TASKS_MODULE])
    celery_app.config_from_object(celery_settings(app.config))
    celery_app.set_default()  # without it a threads-pool worker never runs tasks

    if on_worker_ready is not None:
        worker_ready.connect(lambda **_kwargs: on_worker_ready(), weak=False)
    if app.config["LOG_FORMAT"] == "json":
        # A worker would replace the root handlers with its own text format;
        # with a receiver connected it leaves logging as the app set it.
        from celery.signals import setup_logging

        setup_logging.connect(lambda **_kwargs: logs.configure("json"), weak=False)
    return celery_app


def init_app(
    app,
    on_worker_ready: Callable | None = None,
    on_embedded_start: Callable | None = None,
) -> Queue:
    threads = app.config["EMBEDDED_WORKER_THREADS"] if is_embedded(app.config) else None
    queue = Queue(lambda: make_celery(app, on_worker_ready), threads, on_embedded_start)
    app.extensions["queue"] = queue
    return queue
