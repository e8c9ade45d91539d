"""Application factory and the module-level ``app`` / ``celery_app``: wiring only.

``python app.py``, ``flask --app app run`` or ``gunicorn app:app`` serve the
web app; ``celery -A app:celery_app worker`` runs a worker against
``REDIS_URL``. Each subsystem has an ``init_app``, as in Flask's tutorial.
"""

from __future__ import annotations

import sys
from pathlib import Path

from flask import Flask

import cli
import config as settings
import store
import translations
import web
from core import logs
from evaluator import JudgePool
from metrics import lexicon
from pipeline import queue, worker_process
from pipeline.execution import Context
from pipeline.resume import BrokerEpoch, EmbeddedResume
from pipeline.runs import RunService
from pipeline.watchdog import Watchdog
from pipeline.worker_process import WorkerProcess


def create_app(config: dict | None = None) -> Flask:
    app = Flask(__name__, instance_relative_config=True)
    instance = Path((config or {}).get("INSTANCE_PATH", app.instance_path))
    app.config.update(settings.load(instance, config))
    logs.configure(app.config["LOG_FORMAT"])
    instance.mkdir(parents=True, exist_ok=True)
    for folder in ("UPLOAD_FOLDER", "RESULTS_FOLDER"):
        Path(app.config[folder]).mkdir(parents=True, exist_ok=True)
    lexicon.configure(app.config["NLTK_DATA"])
    storage = store.init_app(app)
    service = app.extensions["runs"] = RunService(storage, app.config, None)
    translations.init_app(app)
    web.init_app(app)
    cli.init_app(app)
    _wire_queue_and_resume(app, service, instance)
    return app


def _wire_queue_and_resume(app: Flask, service: RunService, instance: Path) -> None:
    """The queue, the judge pool and the watchdog of this process.

    Unfinished runs are resumed exactly once per start (pipeline/resume.py):
    embedded, by the serving process on its first request; team mode, once
    per broker lifetime, by the first worker to start or the next submission.
    The watchdog runs beside every worker: the embedded one, or each
    ``celery worker`` process."""
    app.extensions["judge_pool"] = JudgePool(app.config["JUDGE_CONCURRENCY"])
    watchdog = app.extensions["watchdog"] = Watchdog(
        lambda: Context.of(app), app.config["WATCHDOG_INTERVAL_S"]
    )
    if queue.is_embedded(app.config) and app.config["EMBEDDED_WORKER"] == "process":
        # evaluation in a supervised worker process (pipeline/worker_process.py);
        # it resumes unfinished runs, so this process starts it on first use
        supervisor = app.extensions["queue"] = WorkerProcess(app.config, instance)
        service.queue = supervisor

        def evaluate_here() -> None:
            """For the CLI's evaluate: the command is itself a process for one
            run (and its --concurrency sizes this process's judge pool)."""
            service.queue = queue.init_app(app, on_embedded_start=watchdog.start)

        app.extensions["evaluate_here"] = evaluate_here

        @app.before_request
        def start_worker_on_first_request() -> None:
            supervisor.ensure_started()  # a no-op once it runs

        return
    if queue.is_embedded(app.config):
        service.queue = queue.init_app(app, on_embedded_start=watchdog.start)
        resume = app.extensions["resume"] = EmbeddedResume(service, instance)

        @app.before_request
        def resume_on_first_request() -> None:
            resume()  # a no-op after the first call

        return
    epoch = service.broker_check = BrokerEpoch(service, app.config["REDIS_URL"])

    def worker_ready() -> None:
        epoch()
        watchdog.start()

    service.queue = queue.init_app(app, on_worker_ready=worker_ready)


app = create_app()


def __getattr__(name: str):
    """``celery_app`` for ``celery -A app:celery_app worker``, made on demand."""
    if name == "celery_app":
        return app.extensions["queue"].celery
    raise AttributeError(name)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:  # the embedded mode's worker process
        worker_process.run(create_app, sys.argv[2])  # never returns
    if "resume" in app.extensions:
        app.extensions["resume"]()
    if isinstance(app.extensions["queue"], WorkerProcess):
        app.extensions["queue"].ensure_started()  # it resumes unfinished runs
    app.run(host="127.0.0.1", port=5000)
