"""Application factory and the module-level ``app`` / ``celery_app``: wiring only.

``flask --app app run`` or ``python app.py`` serves the web app;
``celery -A app:celery_app worker`` runs a worker against ``REDIS_URL``.
"""

from __future__ import annotations

from pathlib import Path

from flask import Flask

import cli
import config as settings
import jobs
import runs
import storage
import tasks  # noqa: F401  (registers the Celery tasks)
import translations
import web
from metrics import lexicon


def create_app(config: dict | None = None) -> Flask:
    app = Flask(__name__, instance_relative_config=True)
    instance = Path((config or {}).get("INSTANCE_PATH", app.instance_path))
    app.config.update(settings.load(instance, config))
    instance.mkdir(parents=True, exist_ok=True)
    for folder in ("UPLOAD_FOLDER", "RESULTS_FOLDER"):
        Path(app.config[folder]).mkdir(parents=True, exist_ok=True)
    lexicon.configure(app.config["NLTK_DATA"])
    storage.init_app(app)
    jobs.init_app(app)
    cli.init_app(app)
    translations.init_app(app)
    web.init_app(app)
    return app


app = create_app()
celery_app = app.extensions["celery"]

if __name__ == "__main__":
    with app.app_context():
        runs.resume_unfinished()
    app.run(host="127.0.0.1", port=5000)
