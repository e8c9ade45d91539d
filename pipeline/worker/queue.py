"""Celery wiring (Flask's ``celery_init_app`` pattern) and the queue the
run service sends tasks through (by name). One path in both modes: tasks
go to a broker and a Celery worker process consumes them.

With ``REDIS_URL`` the broker is Redis and ``celery -A app:celery_app
worker`` processes run the tasks. Without it (the embedded default) the
broker is a folder of the instance (``pipeline/worker/local_broker.py``) and the
app starts and supervises one worker process on it
(``pipeline/worker/worker_process.py``). The Celery app is made on first use, so
commands that queue nothing do not import Celery.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from core import logs
from pipeline.names import TASKS_MODULE

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from celery import Celery  # Celery has no type information: Any
    from flask import Flask


def celery_settings(config: dict[str, Any]) -> dict[str, Any]:
    visibility = config["CELERY_VISIBILITY_TIMEOUT_S"]
    common = {
        "task_ignore_result": True,  # results of record live in the database
        "task_serializer": "json",
        "accept_content": ["json"],
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "worker_prefetch_multiplier": 1,
        "broker_connection_retry_on_startup": True,
        "task_publish_retry_policy": {
            "max_retries": 2,
            "interval_start": 0,
            "interval_step": 0.2,
        },
        "worker_hijack_root_logger": False,
    }
    if is_embedded(config):
        from pipeline.worker import local_broker

        return {**common, **local_broker.settings(config["QUEUE_FOLDER"])}
    from pipeline.worker import redis_broker

    return {
        **common,
        "broker_url": config["REDIS_URL"],
        # kombu's Redis transport, made to survive a Redis restart (issue 57)
        "broker_transport": redis_broker.TRANSPORT,
        # A chunk under way when Redis goes away goes on: its rows and its
        # lease live in the database, not in the broker (the default becomes
        # True in Celery 6, and the threads pool cannot cancel a task anyway).
        "worker_cancel_long_running_tasks_on_connection_loss": False,
        # Above the longest task, so Redis does not redeliver a running chunk.
        "broker_transport_options": {
            "visibility_timeout": visibility,
            # kombu sweeps for unacked tasks of dead workers every interval x
            # throttle seconds (10 x 10 by default): tie it to the timeout so a
            # crashed worker's tasks come back soon after they become due.
            "unacked_restore_interval": max(1, min(60, visibility // 2)),
            "unacked_restore_throttle": 1,
        },
    }


def ping(redis_url: str) -> None:
    """Raise the broker's error when Redis cannot take tasks now."""
    import redis

    with redis.Redis.from_url(redis_url, socket_connect_timeout=2) as client:
        client.ping()


def is_embedded(config: dict[str, Any]) -> bool:
    return not config.get("REDIS_URL")


class Queue:
    """Sends tasks by name.

    Raises the broker's error (kombu ``OperationalError``, redis errors,
    ``OSError``) when a task cannot be published.
    """

    def __init__(self, make_celery: Callable[[], Celery]):
        self._make_celery = make_celery
        self._lock = threading.Lock()
        self._celery: Celery | None = None

    @property
    def celery(self) -> Celery:
        with self._lock:
            if self._celery is None:
                self._celery = self._make_celery()
            return self._celery

    def send(self, task_name: str, *args: Any) -> None:
        self.celery.send_task(task_name, args=list(args))


def make_celery(
    app: Flask,
    on_worker_init: Callable[[], None] | None = None,
    on_worker_ready: Callable[[], None] | None = None,
    on_reconnect: Callable[[], None] | None = None,
) -> Celery:
    """The Celery app: tasks run inside the Flask app's context.
    ``on_worker_init`` runs when a worker of it is built, before it consumes;
    ``on_worker_ready`` once it consumes; ``on_reconnect`` (team mode) each
    time it consumes again after losing Redis."""
    from celery import Celery, Task
    from celery.signals import worker_init, worker_ready

    class FlaskTask(Task):  # type: ignore[misc]  # Celery has no type information
        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            with app.app_context():
                return self.run(*args, **kwargs)

    # Workers import the tasks module (``include``); this module only sends
    # tasks by name, so nothing here imports the tasks.
    celery_app = Celery(app.import_name, task_cls=FlaskTask, include=[TASKS_MODULE])
    celery_app.config_from_object(celery_settings(app.config))
    celery_app.set_default()  # without it a threads-pool worker never runs tasks

    # The signals are global: answer only this app's workers (tests hold
    # several apps in one process).
    for signal, receiver in (
        (worker_init, on_worker_init),
        (worker_ready, on_worker_ready),
    ):
        if receiver is not None:
            signal.connect(_for_app(celery_app, receiver), weak=False)
    if not is_embedded(app.config):
        celery_app.steps["consumer"].add(
            _consumer_step(app.config["REDIS_URL"], on_reconnect)
        )
    if app.config["LOG_FORMAT"] == "json":
        # A worker would replace the root handlers with its own text format;
        # with a receiver connected it leaves logging as the app set it.
        from celery.signals import setup_logging

        setup_logging.connect(lambda **_kwargs: logs.configure("json"), weak=False)
    return celery_app


def _for_app(celery_app: Celery, receiver: Callable[[], None]) -> Callable[..., None]:
    def receive(sender: Any = None, **_kwargs: Any) -> None:
        if getattr(sender, "app", None) is celery_app:
            receiver()

    return receive


def _consumer_step(redis_url: str, on_reconnect: Callable[[], None] | None) -> type:
    """A step of a team-mode worker's consumer, which Celery starts each
    time the consumer connects to Redis (and stops when it loses it): while
    it consumes, it beats (``pipeline/worker_beats.py``, read by
    ``/readyz``); each start after the first calls ``on_reconnect``; a
    clean shutdown says at once that this worker is gone."""
    import redis
    from celery import bootsteps

    from pipeline import worker_beats
    from pipeline.leases import LEASES

    class Liveness(bootsteps.StartStopStep):  # type: ignore[misc]  # no types
        requires = ("celery.worker.consumer.tasks:Tasks",)

        def __init__(self, parent: Any, **kwargs: Any) -> None:
            super().__init__(parent, **kwargs)
            self.starts = 0
            self.entry: Any = None
            self.client = redis.Redis.from_url(
                redis_url, socket_connect_timeout=2, socket_timeout=2
            )

        def start(self, parent: Any) -> None:
            self.starts += 1
            self._beat()
            self.entry = parent.timer.call_repeatedly(worker_beats.BEAT_S, self._beat)
            if self.starts > 1 and on_reconnect is not None:
                on_reconnect()

        def stop(self, parent: Any) -> None:
            if self.entry is not None:
                self.entry.cancel()
                self.entry = None

        def shutdown(self, parent: Any) -> None:
            self.stop(parent)
            with contextlib.suppress(redis.RedisError):  # its key expires anyway
                worker_beats.forget(self.client, LEASES.holder)

        def _beat(self) -> None:
            try:
                worker_beats.beat(self.client, LEASES.holder)
            except redis.RedisError as exc:  # the consumer reconnects on its own
                log.info("worker beat not written: %s", type(exc).__name__)

    return Liveness


def init_app(
    app: Flask,
    on_worker_init: Callable[[], None] | None = None,
    on_worker_ready: Callable[[], None] | None = None,
    on_reconnect: Callable[[], None] | None = None,
) -> Queue:
    queue = Queue(
        lambda: make_celery(app, on_worker_init, on_worker_ready, on_reconnect)
    )
    app.extensions["queue"] = queue
    return queue
