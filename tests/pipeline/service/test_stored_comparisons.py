"""Comparisons are computed once on a worker and stored: a request answers
"computing" (202) rather than holding a web thread, exactly one request
asks for the work, a dead worker's comparison is asked for again, failures
are stored as their reason, and deleting a run deletes its comparisons
(``store/comparison.py``)."""

from __future__ import annotations

import threading
from datetime import timedelta

from sqlalchemy import func, select, update

from core.status import ComparisonState
from pipeline.service import comparison
from store.models import ComparisonRun, StoredComparison, utcnow
from tests import crafted
from tests.store.test_workspaces import RUN_FIELDS, upload
from tests.web.views.test_api import settled, wait_final


def finished_pair(app, tmp_path, other_sessions=False) -> list[str]:
    client = app.test_client()
    client.get("/")
    sessions = crafted.alignment_sessions()
    tokens = []
    for name in ("one", "two"):
        if other_sessions and name == "two":
            sessions = [{**s, "session_id": f"x-{s['session_id']}"} for s in sessions]
        data = crafted.write(tmp_path / f"{name}.jsonl", sessions).read_bytes()
        tokens.append(upload(client, data, suites="quality", name=name).get_json())
        wait_final(client, tokens[-1]["token"])
    return [made["token"] for made in tokens]


def counted(storage, model) -> int:
    with storage.engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(model)).scalar_one()


def test_a_slow_comparison_answers_computing_then_serves_the_stored_one(
    app_factory, tmp_path, monkeypatch
):
    app = app_factory(COMPARE_WAIT_S=0)
    client = app.test_client()
    runs = ",".join(finished_pair(app, tmp_path))
    release, computed = threading.Event(), []
    real = comparison._compare

    def held(*args):
        assert release.wait(600)
        computed.append(1)
        return real(*args)

    monkeypatch.setattr(comparison, "_compare", held)
    try:
        api = client.get(f"/api/v1/compare?runs={runs}")
        assert api.status_code == 202 and api.headers["Retry-After"] == "2"
        assert api.get_json()["state"] == "computing"
        for url in (
            f"/compare?runs={runs}&lang=ko",
            f"/compare/export.tex?runs={runs}",
        ):
            page = client.get(url)
            assert page.status_code == 202
            text = page.get_data(as_text=True)
            assert 'data-testid="compare-computing"' in text
            assert 'http-equiv="refresh"' in text
        assert "Comparing runs" not in client.get(
            f"/compare?runs={runs}&lang=zh"
        ).get_data(as_text=True)
    finally:
        release.set()  # the worker is never left holding
    assert settled(client, f"/api/v1/compare?runs={runs}").status_code == 200
    assert settled(client, f"/compare?runs={runs}").status_code == 200
    assert computed == [1]  # four requests, one computation


def test_a_stored_failure_is_served_without_computing_again(
    app_factory, tmp_path, monkeypatch
):
    app = app_factory()
    client = app.test_client()
    runs = ",".join(finished_pair(app, tmp_path, other_sessions=True))
    computed = []
    real = comparison._compare
    monkeypatch.setattr(
        comparison, "_compare", lambda *args: computed.append(1) or real(*args)
    )
    for _ in range(2):
        reply = settled(client, f"/api/v1/compare?runs={runs}")
        assert reply.status_code == 400
        assert reply.get_json()["errors"][0]["code"] == "no_shared_sessions"
    assert computed == [1]


def test_a_comparison_whose_worker_died_is_sent_again(app_factory, tmp_path):
    app = app_factory(COMPARE_STALE_S=60)
    storage = app.extensions["storage"]
    tokens = finished_pair(app, tmp_path)
    runs = [storage.runs.find_run(token).item for token in tokens]
    key, digest = comparison.comparison_keys(runs)
    assert storage.comparisons.request_comparison(key, digest, [run.id for run in runs])
    # handed to a worker an hour ago, which died with it
    with storage.engine.begin() as conn:
        conn.execute(
            update(StoredComparison).values(sent_at=utcnow() - timedelta(hours=1))
        )
    app.extensions["runs"].enqueue()  # any dispatch: a new run, the watchdog
    reply = settled(app.test_client(), f"/api/v1/compare?runs={','.join(tokens)}")
    assert reply.status_code == 200
    assert storage.comparisons.stored_comparison(key).state == ComparisonState.DONE


def test_a_worker_on_other_metric_code_says_so_instead_of_computing_forever(
    app_factory, tmp_path, monkeypatch
):
    """A web server and a worker on different releases (a rolling deploy,
    files edited under a running server) disagree on the comparison's key:
    the worker stores why, and the page says it, rather than "computing"."""
    app = app_factory()
    tokens = finished_pair(app, tmp_path)
    real = comparison.code_fingerprint
    monkeypatch.setattr(comparison, "code_fingerprint", lambda: "web " + real())
    storage = app.extensions["storage"]
    runs = [storage.runs.find_run(token).item for token in tokens]
    key, digest = comparison.comparison_keys(runs)
    assert storage.comparisons.request_comparison(key, digest, [run.id for run in runs])
    monkeypatch.setattr(comparison, "code_fingerprint", real)  # the worker's
    comparison.compute(storage, key, app.config["UPLOAD_FOLDER"], app.config)
    stored = storage.comparisons.stored_comparison(key)
    assert stored.state == ComparisonState.FAILED
    [error] = stored.failure["errors"]
    assert (error["code"], stored.failure["http"]) == ("compare_stale", 409)
    monkeypatch.setattr(comparison, "code_fingerprint", lambda: "web " + real())
    page = app.test_client().get(f"/compare?runs={','.join(tokens)}")
    assert page.status_code == 409
    assert "different releases" in page.get_data(as_text=True)


def test_one_request_asks_and_a_newer_comparison_replaces_the_older(any_storage):
    storage = any_storage
    ids = [storage.runs.create_run(**RUN_FIELDS, upload_id="u").id for _ in range(2)]
    asked: list[bool] = []
    threads = [
        threading.Thread(
            target=lambda: asked.append(
                storage.comparisons.request_comparison("k1", "d", ids)
            )
        )
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(asked) == [False, False, False, True]
    assert storage.comparisons.comparison_run_ids("k1") == ids
    hour_ago = utcnow() - timedelta(hours=1)
    claims: list[list[str]] = []
    threads = [
        threading.Thread(
            target=lambda: claims.append(
                storage.comparisons.claim_comparisons(hour_ago)
            )
        )
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(claims) == [[], [], [], ["k1"]]  # sent once
    assert storage.comparisons.claim_comparisons(utcnow() + timedelta(seconds=1)) == [
        "k1"
    ]
    storage.comparisons.finish_comparison("k1", document={"id": "c"})
    assert storage.comparisons.stored_comparison("k1").state == ComparisonState.DONE
    assert storage.comparisons.claim_comparisons(utcnow() + timedelta(hours=1)) == []

    assert storage.comparisons.request_comparison(
        "k2", "d", ids
    )  # the same runs, renamed
    assert storage.comparisons.stored_comparison("k1") is None
    assert counted(storage, StoredComparison) == 1
    assert counted(storage, ComparisonRun) == 2


def test_deleting_a_run_deletes_the_comparisons_that_read_it(any_storage, tmp_path):
    storage = any_storage
    runs = [storage.runs.create_run(**RUN_FIELDS, upload_id="u") for _ in range(3)]
    storage.comparisons.request_comparison("ab", "d1", [runs[0].id, runs[1].id])
    storage.comparisons.request_comparison("bc", "d2", [runs[1].id, runs[2].id])
    storage.runs.delete_run(runs[0], tmp_path)
    assert storage.comparisons.stored_comparison("ab") is None
    assert storage.comparisons.stored_comparison("bc") is not None
    storage.comparisons.finish_comparison(
        "ab", document={"id": "late"}
    )  # its worker ends
    assert counted(storage, StoredComparison) == 1
    assert counted(storage, ComparisonRun) == 2
