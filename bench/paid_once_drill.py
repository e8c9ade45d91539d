"""Paid once (issue 46), in both modes, beside four busy CPU loops: the
drill of ``testing/paid_once.py`` (what it does and what it must show are
there) at 100 sessions, on the embedded default's supervised worker and
on two Celery workers on Redis and PostgreSQL, started as the README
tells users. ``python -m bench paid_once_drill``; figures in
``bench/README.md``."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

from testing.judge_server import ScriptedJudge
from testing.paid_once import (
    LATENCY,
    LEASE_S,
    SESSIONS,
    SETTINGS,
    STOP_S,
    drill,
    sessions,
)
from tests import crafted
from tests.pipeline_support import Embedded

REDIS_URL = "redis://127.0.0.1:6379/11"  # not a test session's (15, 14, ...)


# -- the two deployments, for python -m bench ---------------------------------------
class EmbeddedWorkers(Embedded):
    """The embedded default's one supervised worker process."""

    def pid(self, _index: int) -> int:
        return self.app.extensions["worker"].pid

    def kill(self, _index: int) -> None:
        self.kill_worker()


class TeamWorkers:
    """Celery workers on Redis, started as the README tells users."""

    def __init__(self, app, env: dict, log: Path, count: int = 2):
        from tests import workers

        self.app, self.env, self.log, self._workers = app, env, log, workers
        self.processes = [workers.start_worker(env, log) for _ in range(count)]

    def pid(self, index: int) -> int:
        return self.processes[index].pid

    def kill(self, index: int) -> None:
        self._workers.kill(self.processes[index])
        self.processes[index] = self._workers.start_worker(self.env, self.log)

    def stop_all(self) -> None:
        for process in self.processes:
            self._workers.stop(process)


def _base(workdir: Path, judge: ScriptedJudge) -> dict:
    from tests.pipeline_support import GENEROUS_RATE_LIMITS

    return {
        "TESTING": True,
        "SECRET_KEY": "bench",
        "INSTANCE_PATH": str(workdir / "instance"),
        "UPLOAD_FOLDER": str(workdir / "uploads"),
        "RESULTS_FOLDER": str(workdir / "results"),
        "JUDGE_API_URL": judge.url,
        "JUDGE_MODEL": "scripted",
        **GENEROUS_RATE_LIMITS,
        **SETTINGS,
    }


@contextmanager
def embedded(workdir: Path, judge: ScriptedJudge):
    from tests.worker_support import create_test_app, stop_worker

    app = create_test_app(
        {
            **_base(workdir, judge),
            "REDIS_URL": None,
            "DATABASE_URL": f"sqlite:///{workdir / 'db.sqlite3'}",
            "EMBEDDED_WORKER": "process",
        }
    )
    try:
        yield EmbeddedWorkers(app)
    finally:
        stop_worker(app)


@contextmanager
def team(workdir: Path, judge: ScriptedJudge):
    import redis
    from sqlalchemy import create_engine, text

    import config
    from tests import services
    from tests.worker_support import create_test_app

    with redis.Redis.from_url(REDIS_URL) as client:
        client.flushdb()
    url, schema = services.postgres_schema_url()
    admin = create_engine(url)
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    env = {
        "REDIS_URL": REDIS_URL,
        "SECRET_KEY": "bench",
        "DATABASE_URL": f"{url}?options=-csearch_path%3D{schema}",
        "UPLOAD_FOLDER": str(workdir / "uploads"),
        "JUDGE_API_URL": judge.url,
        "JUDGE_MODEL": "scripted",
        **{name: str(value) for name, value in SETTINGS.items()},
    }
    app = create_test_app({**_base(workdir, judge), **config.from_environ(env)})
    app.extensions["storage"].upgrade()
    workers = TeamWorkers(app, env, workdir / "workers.log")
    try:
        yield workers
    finally:
        workers.stop_all()
        app.extensions["storage"].engine.dispose()
        with admin.begin() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


@contextmanager
def busy_loops(count: int = 4):
    loops = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"])
        for _ in range(count)
    ]
    try:
        yield
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()


def run() -> dict:
    results = {}
    with tempfile.TemporaryDirectory() as tmp, ScriptedJudge(latency=LATENCY) as judge:
        path = crafted.write(Path(tmp) / "paid_once.jsonl", sessions())
        with busy_loops():
            for mode, deploy in (("embedded", embedded), ("team", team)):
                workdir = Path(tmp) / mode
                with deploy(workdir, judge) as workers:
                    results[mode] = drill(workers, judge, path)
    return {
        "sessions": SESSIONS,
        "lease_s": LEASE_S,
        "stop_s": STOP_S,
        "latency_s": LATENCY,
        "busy_loops": 4,
        **results,
    }


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=1))
