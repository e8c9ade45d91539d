"""Celery wiring: Flask's ``celery_init_app`` pattern plus the embedded worker.

Without ``REDIS_URL`` the broker is ``memory://`` and a worker thread inside
the web process consumes it (started lazily on the first enqueue). With
``REDIS_URL`` tasks go to Redis and separate ``celery -A app:celery_app worker``
processes run them.
"""

from __future__ import annotations

import threading

from celery import Celery, Task


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


def init_app(app) -> Celery:
    class FlaskTask(Task):
        def __call__(self, *args, **kwargs):
            with app.app_context():
                return self.run(*args, **kwargs)

    celery_app = Celery(app.import_name, task_cls=FlaskTask)
    celery_app.config_from_object(celery_settings(app.config))
    celery_app.set_default()  # without it a threads-pool worker never runs tasks
    app.extensions["celery"] = celery_app
    threads = app.config["EMBEDDED_WORKER_THREADS"]
    app.extensions["embedded_worker"] = EmbeddedWorker(celery_app, threads)
    return celery_app


def is_embedded(config: dict) -> bool:
    return not config.get("REDIS_URL")


class EmbeddedWorker:
    """A threads-pool Celery worker in this process, started once, on demand."""

    def __init__(self, celery_app: Celery, concurrency: int = 4):
        self.celery_app = celery_app
        self.concurrency = concurrency
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._worker = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def ensure_started(self) -> None:
        with self._lock:
            if self.running:
                return
            self._worker = self.celery_app.WorkController(
                pool="threads", concurrency=self.concurrency, loglevel="WARNING"
            )
            self._thread = threading.Thread(
                target=self._worker.start, name="embedded-celery-worker", daemon=True
            )
            self._thread.start()

    def stop(self) -> None:
        with self._lock:
            if self._worker is not None:
                self._worker.stop(in_sighandler=False)
            if self._thread is not None:
                self._thread.join(timeout=10)
            self._worker = self._thread = None
