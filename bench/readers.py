"""A lab on one link (issue 61): 100 Locust readers of a finished run's view
link (its dashboard, and its replies grid's first two pages) against the
documented team deployment: gunicorn as ``gunicorn.conf.py`` sets it up
(2 workers x 4 threads), PostgreSQL and Redis. Locust runs on the same
machine, so the figures are the capacity of the whole box.

The run: ``sample_data.jsonl`` (9 sessions) with suites alignment and
quality against the scripted judge at 50 ms, evaluated by the app in
embedded mode on the same PostgreSQL schema before gunicorn starts (a
reader's request never needs a worker). Each reader is a browser: the
first visit of a page is a full answer; later visits send
``If-None-Match`` with the ``ETag`` it was given (``DRILL_CONDITIONAL=0``
makes every visit a first one). Think time 0.1-0.9 s (``DRILL_WAIT_S``).

Target: >= 150 requests/s, p95 <= 500 ms, no failed request.

Environment: ``BENCH_POSTGRES_URL`` (default the CI's database ``test`` on
127.0.0.1, a throwaway schema is created and dropped), ``BENCH_REDIS_URL``
(default ``redis://127.0.0.1:6379/13``), ``READERS_SECONDS`` (default 60),
``READERS_USERS`` (default 100), ``READERS_DRILLS`` (default
``browser,first_visits``).
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import threading
import time
import uuid
from pathlib import Path

import requests

from bench.judge_orchestration import cpu_seconds, start_judge
from bench.load import (
    FINAL,
    UPLOAD,
    drill,
    solo_ms,
    start_server,
    stop,
    upload,
    wait_until,
)

POSTGRES = os.environ.get(
    "BENCH_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
REDIS = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/13")
USERS = int(os.environ.get("READERS_USERS", "100"))
SECONDS = int(os.environ.get("READERS_SECONDS", "60"))
SPAWN_RATE = 20
WAIT_S = os.environ.get("DRILL_WAIT_S", "0.1,0.9")
DRILLS = os.environ.get("READERS_DRILLS", "browser,first_visits").split(",")
TARGET = {"rps": 150, "p95_ms": 500, "failures": 0}


def _schema(statement: str) -> None:
    from sqlalchemy import create_engine, text

    engine = create_engine(POSTGRES)
    with engine.begin() as conn:
        conn.execute(text(statement))
    engine.dispose()


class HealthProbe:
    """``/healthz`` asked every 0.25 s beside the readers (the operator's
    liveness probe under the same load): its p50/p95 in ms."""

    def __init__(self, url: str) -> None:
        self.url, self.times = url, []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._probe, daemon=True)

    def __enter__(self) -> HealthProbe:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=60)

    def _probe(self) -> None:
        while not self._stop.wait(0.25):
            started = time.perf_counter()
            try:
                requests.get(self.url, timeout=30).raise_for_status()
            except requests.RequestException:
                self.times.append(float("inf"))  # counted, never hidden
                continue
            self.times.append(1000 * (time.perf_counter() - started))

    def percentiles(self) -> list[float] | None:
        if len(self.times) < 20:
            return None
        cuts = statistics.quantiles(self.times, n=20)
        return [round(statistics.median(self.times), 1), round(cuts[18], 1)]


def gunicorn_cpu(master: int) -> float:
    """CPU seconds of gunicorn's master and its workers."""
    children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    return sum(cpu_seconds(pid) for pid in (master, *children))


def finished_run(workdir: Path, database_url: str) -> str:
    """Evaluate ``sample_data.jsonl`` in embedded mode into the schema; its
    view token."""
    judge, url = start_judge(0.05)
    env = {
        "DATABASE_URL": database_url,
        "DB_AUTO_UPGRADE": "true",
        "JUDGE_API_URL": url,
        "JUDGE_MODEL": "scripted",
        "QUEUE_FOLDER": str(workdir / "queue"),
    }
    server = None
    try:
        server, base = start_server(workdir, env)
        token = upload(base, UPLOAD, "alignment,quality")
        wait_until(base, token, FINAL.__contains__, 600)
    finally:
        if server is not None:
            stop(server)
        stop(judge)
    return token


def run() -> dict:
    schema = f"bench_readers_{uuid.uuid4().hex[:8]}"
    database_url = f"{POSTGRES}?options=-csearch_path%3D{schema}"
    _schema(f'CREATE SCHEMA "{schema}"')
    result: dict = {
        "name": f"readers (Locust): {USERS} readers of a finished run's view link "
        "and replies grid, gunicorn 2x4 + PostgreSQL + Redis",
        "users": USERS,
        "seconds": SECONDS,
        "wait_s": WAIT_S,
        "target": TARGET,
        "cores": os.cpu_count(),
    }
    try:
        with tempfile.TemporaryDirectory() as tmp:
            workdir = Path(tmp)
            token = finished_run(workdir, database_url)
            team = {
                "DATABASE_URL": database_url,
                "REDIS_URL": REDIS,
                "QUEUE_FOLDER": str(workdir / "queue"),
            }
            server, base = start_server(workdir, team, gunicorn=True)
            try:
                for name, path in (
                    ("dashboard", f"/r/{token}"),
                    ("replies", f"/r/{token}/replies"),
                    ("healthz", "/healthz"),
                ):
                    result[f"solo_{name}_ms"] = solo_ms(base + path, 10)
                os.environ["DRILL_WAIT_S"] = WAIT_S
                for tag, conditional in (("browser", "1"), ("first_visits", "0")):
                    if tag not in DRILLS:
                        continue
                    os.environ["DRILL_CONDITIONAL"] = conditional
                    users = ("ViewLinkReader", USERS, SPAWN_RATE, SECONDS)
                    before = gunicorn_cpu(server.pid)
                    with HealthProbe(f"{base}/healthz") as probe:
                        found = drill(tag, base, server, *users, token, workdir)
                    used = gunicorn_cpu(server.pid) - before
                    found[f"{tag}_healthz_during_p50/p95_ms"] = probe.percentiles()
                    # drill() counts the master only; its workers do the work
                    found[f"{tag}_server_cores"] = round(used / SECONDS, 2)
                    result.update(found)
            finally:
                stop(server)
    finally:
        _schema(f'DROP SCHEMA "{schema}" CASCADE')
    return result


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
