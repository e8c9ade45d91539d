"""A PostgreSQL outage in team mode (issue 57, finding 3): a private
cluster (``tests/faults/postgres_server.py``, never the shared one) is the
deployment's ``DATABASE_URL``; it is stopped for 12 s at a quarter of a
600-request run, then started again on the same port. The run ends ``done``
by itself within two minutes of the database's return, with no request
paid twice beyond ``JUDGE_CONCURRENCY``. While the database is away the
run's status API and page answer 503 with a message saying so and a
``Retry-After`` (they answered 500), and ``/readyz`` names the database.

The web side runs in this process; one Celery worker is started with
docs/team.md's command, on a private Redis (``tests/faults/redis_server.py``:
the shared one's databases are the other tests').
"""

from __future__ import annotations

import html
import time

import pytest

import config
from testing import paid_once
from testing.judge_server import ScriptedJudge
from tests import crafted, workers
from tests.faults.postgres_server import PrivatePostgres
from tests.faults.redis_server import PrivateRedis
from tests.pipeline_support import base_config, submit, wait_for
from tests.worker_support import create_test_app

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

SESSIONS = 30  # x 5 rounds x 2 methods = 300 units, 600 requests
# Longer than store/leases.py's ORPHAN_GRACE_S (10 s): a chunk that could
# not hand itself back is past its grace when the database returns; shorter
# than JUDGE_DEADLINE_S, as the 30 s, so nothing paid is given up.
OUTAGE_S = 12.0
RECOVERY_S = 120.0  # from the database's return to the run's end (issue 57)
ASKED_EVERY_S = 2.0  # how often the web side is asked during the outage
# The recovery settings keep their defaults (WATCHDOG_INTERVAL_S,
# CHUNK_STALL_S, QUEUE_TIMEOUT_S, RUN_STALL_S): the bound holds as shipped.
SETTINGS = {
    "CHUNK_UNITS": "4",
    "JUDGE_CONCURRENCY": "4",
    "JUDGE_TIMEOUT_S": "30",
    "JUDGE_MAX_RETRIES": "1",
}


class Team:
    def __init__(self, app, database: PrivatePostgres, log_path):
        self.app, self.database, self.log_path = app, database, log_path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-6000:]


@pytest.fixture
def team(tmp_path):
    database, broker = PrivatePostgres(), PrivateRedis(tmp_path / "redis")
    worker, app = None, None
    try:
        database.start()
        broker.start()
        env = {
            "REDIS_URL": broker.url,
            "DATABASE_URL": database.url,
            "UPLOAD_FOLDER": str(tmp_path / "uploads"),
            "SECRET_KEY": "test",
            **SETTINGS,
        }
        app = create_test_app({**base_config(tmp_path), **config.from_environ(env)})
        app.config["PROPAGATE_EXCEPTIONS"] = False  # errors are answered, as served
        app.extensions["storage"].upgrade()  # what `flask db upgrade` does
        log_path = tmp_path / "worker.log"
        worker = workers.start_documented_worker(env, log_path)
        yield Team(app, database, log_path)
    finally:
        if worker is not None:
            workers.stop(worker)
        broker.stop()
        if app is not None:
            app.extensions["storage"].engine.dispose()
        database.remove()


def test_a_run_ends_done_after_a_postgres_outage(team, tmp_path):
    app = team.app
    storage, client = app.extensions["storage"], app.test_client()
    path = crafted.write(tmp_path / "p.jsonl", paid_once.sessions(SESSIONS))
    with ScriptedJudge(latency=0.1) as judge:
        run_id = submit(app, path, judge, suites=["alignment"], use_cache=False)
        token = storage.runs.get_run(run_id).token
        paid_once.wait_for_progress(storage, run_id, 0.25, timeout=300)
        team.database.stop()
        back_at = time.monotonic() + OUTAGE_S
        during = []
        while time.monotonic() < back_at:  # the fault itself, asked meanwhile
            during.append(
                [client.get(path) for path in (f"/api/v1/runs/{token}", f"/r/{token}")]
            )
            during[-1].append(client.get("/readyz"))
            time.sleep(ASKED_EVERY_S)
        team.database.start()
        document = wait_for(app, run_id, timeout=RECOVERY_S)
        seen = judge.state.attempts
    for status_api, page, ready in during:
        assert status_api.status_code == 503, status_api.data[:300]
        [error] = status_api.get_json()["errors"]
        assert error["code"] == "database_unavailable", error
        assert "database" in error["message"], error
        assert page.status_code == 503, page.data[:300]
        assert error["message"] in html.unescape(page.get_data(as_text=True))
        assert int(status_api.headers["Retry-After"]) > 0
        assert int(page.headers["Retry-After"]) > 0
        assert ready.status_code == 503
        assert not ready.get_json()["checks"]["database"]["ok"]
    assert document["run"]["status"] == "done", team.log()
    units = SESSIONS * paid_once.ROUNDS * 2
    assert len(seen) == 2 * units  # alignment and binary: every request asked
    paid_twice = sum(n - 1 for n in seen.values())
    assert paid_twice <= int(SETTINGS["JUDGE_CONCURRENCY"]), (paid_twice, team.log())
