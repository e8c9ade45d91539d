"""Application factory and the module-level ``app`` / ``celery_app``: wiring only.

``python app.py``, ``flask --app app run`` or ``gunicorn app:app`` serve the
web app; ``celery -A app:celery_app worker`` runs a worker against
``REDIS_URL``. Each subsystem has an ``init_app``, as in Flask's tutorial.
"""

from __future__ import annotations

import logging
import sys
import threading
from functools import partial
from pathlib import Path

from flask import Flask

import config as settings
import store
import translations
from core import logs
from evaluator import JudgePool, warm_up_judge
from metrics import lexicon
from pipeline.service.runs import RunService
from pipeline.worker import execution, interim, queue, worker_process
from pipeline.worker.execution import Context
from pipeline.worker.watchdog import Watchdog
from pipeline.worker.worker_process import WorkerProcess

log = logging.getLogger(__name__)


def create_app(config: dict | None = None, serve: bool = True) -> Flask:
    """The app from its settings (``config`` over the environment's).
    ``serve=False``: the embedded worker process's, which runs tasks only:
    no pages, no commands, and their modules never loaded (``web`` alone
    was 0.15 s of CPU before the worker's first judge call)."""
    app = Flask(__name__, instance_relative_config=True)
    instance = Path((config or {}).get("INSTANCE_PATH", app.instance_path))
    app.config.update(settings.load(instance, config))
    logs.configure(app.config["LOG_FORMAT"])
    instance.mkdir(parents=True, exist_ok=True)
    for folder in ("UPLOAD_FOLDER", "RESULTS_FOLDER"):
        Path(app.config[folder]).mkdir(parents=True, exist_ok=True)
    lexicon.configure(app.config["NLTK_DATA"])
    storage = store.init_app(app, instance)
    service = app.extensions["runs"] = RunService(storage, app.config, None)
    translations.init_app(app)
    if serve:
        import cli
        import web

        web.init_app(app)
        cli.init_app(app)
    _wire_queue(app, service, instance)
    return app


def _wire_queue(app: Flask, service: RunService, instance: Path) -> None:
    """The queue, the judge pool and the watchdog of this process: tasks go
    to a broker and a Celery worker process runs them, in both modes.

    Embedded (no Redis): the broker is a folder of the instance and this
    process starts the worker as a supervised child (on its first request,
    its first task, or ``python app.py``); the worker takes back the work
    in flight when it starts (pipeline/worker/worker_process.py). Team mode:
    ``celery worker`` processes on Redis. The watchdog runs beside every
    worker: its sweep of void leases is the one recovery path."""
    app.extensions["judge_pool"] = JudgePool(app.config["JUDGE_CONCURRENCY"])
    watchdog = app.extensions["watchdog"] = Watchdog(
        lambda: Context.of(app),
        app.config["WATCHDOG_INTERVAL_S"],
        lease_s=app.config["CHUNK_STALL_S"],
    )
    supervisor, on_reconnect = None, None
    if queue.is_embedded(app.config):
        # a worker on the local broker takes its work back before it consumes
        on_init = partial(worker_process.begin, app)
        on_ready = partial(_ready_embedded, watchdog)
        if app.config["EMBEDDED_WORKER"] == "process":
            supervisor = WorkerProcess(app.config, instance)
            app.before_request(supervisor.ensure_started)  # a no-op once it runs
            service.start_worker = supervisor.ensure_started
    else:
        service.broker_check = partial(queue.ping, app.config["REDIS_URL"])
        on_init, on_ready = None, partial(_ready_on_redis, watchdog)
        on_reconnect = partial(_resend_after_reconnect, app)
    app.extensions["worker"] = supervisor
    service.queue = queue.init_app(app, on_init, on_ready, on_reconnect)


def _ready_embedded(watchdog: Watchdog) -> None:
    watchdog.start()
    _preload()


def _ready_on_redis(watchdog: Watchdog) -> None:
    watchdog.start()
    _preload()


def _preload() -> None:
    """What every run needs (the aggregation's scipy parts, the judge's
    HTTP client), loaded in threads once the worker consumes, not by the
    first chunk or the first finalize."""
    interim.preload()
    warm_up_judge()


def _resend_after_reconnect(app: Flask) -> None:
    """A worker consumes again after losing Redis, which may have restarted
    empty: every chunk sent and not yet taken is sent again now, not after
    ``QUEUE_TIMEOUT_S`` (a sweep for which every task in the queue is
    overdue; a copy is harmless, the first to come claims the chunk). In a
    thread of its own: the consumer goes on consuming meanwhile."""
    ctx = Context.of(app)
    ctx.config = {**ctx.config, "QUEUE_TIMEOUT_S": 0.0}

    def resend() -> None:
        try:
            found = execution.sweep(ctx)
        except Exception:  # the watchdog's next sweep tries again
            log.exception("resending the queue after a reconnection failed")
            return
        log.warning("broker reconnected: %s chunk(s) sent again", found["stale"])

    threading.Thread(target=resend, name="resend-after-reconnect", daemon=True).start()


if __name__ == "__main__" and sys.argv[1:2] == ["--worker"]:
    # the embedded mode's worker process: its app, not the served one
    worker_process.run(partial(create_app, serve=False), sys.argv[2])  # never returns

app = create_app()


def __getattr__(name: str):
    """``celery_app`` for ``celery -A app:celery_app worker``, made on demand."""
    if name == "celery_app":
        return app.extensions["queue"].celery
    raise AttributeError(name)


if __name__ == "__main__":
    if app.extensions["worker"] is not None:
        app.extensions["worker"].ensure_started()  # warm before the first upload
    app.run(host="127.0.0.1", port=app.config["PORT"])
