"""Judge outage drills: an outage inside the retry budget is absorbed; beyond
it rows end as ``error``, the run as ``partial``, and "retry failed rows"
re-asks the judge for exactly those items."""

from __future__ import annotations

import threading
import time

import pytest

from testing.judge_server import ScriptedJudge
from tests import crafted
from tests.pipeline_support import submit, wait_for
from tests.web.views.test_api import results_of, upload, wait_final

pytestmark = pytest.mark.slow


def alignment_rows(document, **match):
    rows = [r for r in document["rows"] if r["metric"] in ("al", "binary")]
    return [r for r in rows if all(r[k] == v for k, v in match.items())]


@pytest.fixture
def deployment_env():
    # Retry-After: 1 s, four retries: the budget outlasts the 1.5 s outage;
    # no call is meant to time out (a starved machine must not make one)
    return {"JUDGE_MAX_RETRIES": "4", "JUDGE_CONCURRENCY": "8", "JUDGE_TIMEOUT_S": "30"}


def _end_outage_after_it_is_seen(judge, seconds: float) -> None:
    """Clear the outage ``seconds`` after its first refusal: the drill
    exercises it however long the worker takes to start."""
    deadline = time.monotonic() + 600
    while judge.state.calls == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(seconds)
    judge.state.outage_status = None


def test_outage_within_the_retry_budget_is_absorbed(deployment, tmp_path):
    """In both modes: the embedded default's worker process, a worker on Redis."""
    app = deployment.app
    path = crafted.write(tmp_path / "c.jsonl", crafted.alignment_sessions())
    with ScriptedJudge() as judge:
        judge.state.outage_status = 503  # every call: 503 with Retry-After: 1
        ender = threading.Thread(target=_end_outage_after_it_is_seen, args=(judge, 1.5))
        ender.start()
        document = wait_for(app, submit(app, path, judge, suites=["alignment"]))
        ender.join()
    assert document["run"]["status"] == "done"
    assert {r["status"] for r in alignment_rows(document)} == {"ok"}
    assert document["summary"]["Ours"]["al_slope"] == pytest.approx(10.0)


def test_failures_beyond_the_budget_then_retry_failed_rows(app_factory, tmp_path):
    sessions = crafted.alignment_sessions()
    for session in sessions:  # Ours fails twice per request, Base is fine
        for round_ in session["rounds"]:
            round_["responses"]["Ours"] += " [[fault=500x2]]"
    path = crafted.write(tmp_path / "c.jsonl", sessions)
    with ScriptedJudge() as judge:
        app = app_factory(
            JUDGE_API_URL=judge.url,
            JUDGE_MODEL="scripted",
            JUDGE_MAX_RETRIES=1,
            JUDGE_CONCURRENCY=8,
        )
        client = app.test_client()
        # the uploader's manage token: it may ask for a retry
        token = upload(client, path.read_bytes(), suites="alignment").get_json()[
            "manage_token"
        ]
        first = wait_final(client, token)["results"]
        assert first["run"]["status"] == "partial"
        assert {r["status"] for r in alignment_rows(first, method="Ours")} == {"error"}
        assert {r["status"] for r in alignment_rows(first, method="Base")} == {"ok"}
        calls_before = judge.state.calls

        response = client.post(f"/api/v1/runs/{token}/retry")
        assert response.status_code == 202
        retry_token = response.get_json()["manage_token"]
        second = wait_final(client, retry_token)["results"]
        asked = judge.state.calls - calls_before

    failed_items = 2 * 5 * 2  # sessions x rounds x (alignment, binary) of Ours
    assert asked == failed_items  # Base verdicts came from the cache
    assert second["run"]["status"] == "done"
    assert second["run"]["counts"]["cache_hits"] == failed_items
    assert second["summary"]["Ours"]["al_slope"] == pytest.approx(10.0)
    again = results_of(client, token)
    assert again["run"]["status"] == "partial"  # the first run is left as it was
    assert client.post(f"/api/v1/runs/{retry_token}/retry").status_code == 409  # done


def test_connection_refused_then_back_is_absorbed(app_factory, tmp_path):
    """The judge process disappears (connection refused) and comes back on the
    same port while the run is in flight."""
    path = crafted.write(tmp_path / "c.jsonl", crafted.alignment_sessions())
    first = ScriptedJudge().__enter__()
    port = first.server.server_address[1]
    app = app_factory(
        JUDGE_API_URL=first.url,
        JUDGE_MODEL="scripted",
        JUDGE_MAX_RETRIES=6,
        JUDGE_CONCURRENCY=2,
    )
    client = app.test_client()
    first.__exit__(None, None, None)  # down before the run starts
    revived = []
    threading.Timer(
        1.5, lambda: revived.append(ScriptedJudge(port=port).__enter__())
    ).start()
    try:
        # the uploader's manage token: it may ask for a retry
        token = upload(client, path.read_bytes(), suites="alignment").get_json()[
            "manage_token"
        ]
        body = wait_final(client, token, timeout=120)
    finally:
        for server in revived:
            server.__exit__(None, None, None)
    assert body["status"] == "done"
    assert {r["status"] for r in alignment_rows(body["results"])} == {"ok"}


def test_finished_dashboards_load_while_redis_is_down(app_factory, tmp_path):
    working = app_factory()
    client = working.test_client()
    path = crafted.write(tmp_path / "c.jsonl", crafted.alignment_sessions())
    token = upload(client, path.read_bytes()).get_json()["token"]
    wait_final(client, token)
    broken = app_factory(REDIS_URL="redis://127.0.0.1:1/0")  # same database, no broker
    client = broken.test_client()
    assert client.get(f"/r/{token}").status_code == 200
    assert client.get(f"/api/v1/runs/{token}").get_json()["status"] == "done"
    runs_before = len(broken.extensions["storage"].runs.unfinished_runs())
    refused = upload(client, path.read_bytes())
    assert refused.status_code == 503
    assert "unavailable" in refused.get_json()["errors"][0]["message"]
    # as the README says: checked before anything is stored, so no run at all
    from sqlalchemy import func, select

    from store.models import Run

    with broken.extensions["storage"].engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(Run)).scalar() == 1
    assert len(broken.extensions["storage"].runs.unfinished_runs()) == runs_before


# Connection refused, then 503 + Retry-After: 1, then back. The 503s alone
# outlast the default budget (JUDGE_MAX_RETRIES 4: about 4 s of them), so
# only a budget that covers the outage absorbs it.
REFUSED_S, UNAVAILABLE_S = 4.0, 8.0


def _running(client, token: str, timeout: float = 600.0) -> None:
    """Wait until the run is under way: its worker is asking the judge."""
    deadline = time.monotonic() + timeout
    while client.get(f"/api/v1/runs/{token}").get_json()["status"] != "running":
        assert time.monotonic() < deadline, "the run never started"
        time.sleep(0.05)


def test_a_long_outage_pauses_and_recovers(app_factory, tmp_path):
    """Connection refused for 4 s once the run is under way, then 503 +
    Retry-After for 8 s from the first request it refuses, then back: with
    a retry budget that covers it the run pauses and completes. Each phase
    is timed from when it is exercised, however long the worker takes."""
    path = crafted.write(tmp_path / "c.jsonl", crafted.alignment_sessions())
    probe = ScriptedJudge().__enter__()
    port = probe.server.server_address[1]
    probe.__exit__(None, None, None)  # phase 1: nothing listens (refused)
    app = app_factory(
        JUDGE_API_URL=f"http://127.0.0.1:{port}/v1",
        JUDGE_MODEL="scripted",
        JUDGE_MAX_RETRIES=60,
        JUDGE_CONCURRENCY=4,
    )
    client = app.test_client()
    servers = []
    try:
        # the uploader's manage token: it may ask for a retry
        token = upload(client, path.read_bytes(), suites="alignment").get_json()[
            "manage_token"
        ]
        _running(client, token)
        time.sleep(REFUSED_S)  # the fault itself, not a wait for something
        # phase 2: the judge is back but answers 503 + Retry-After: 1
        servers.append(ScriptedJudge(port=port).__enter__())
        servers[0].state.outage_status = 503
        _end_outage_after_it_is_seen(servers[0], UNAVAILABLE_S)
        body = wait_final(client, token, timeout=180)
    finally:
        for server in servers:
            server.__exit__(None, None, None)
    assert servers[0].state.calls > 0  # some requests were refused with 503s
    assert body["status"] == "done"
    assert {r["status"] for r in alignment_rows(body["results"])} == {"ok"}
    assert body["results"]["summary"]["Ours"]["al_slope"] == pytest.approx(10.0)
