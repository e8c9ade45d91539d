"""A full disk (issue 46): an upload is refused with a message and leaves
nothing behind, /readyz says not ready below the free-space floor, and a
chunk whose worker could not even hand it back is tried again at the next
sweep, not after its lease runs out."""

from __future__ import annotations

import errno
import io
from datetime import timedelta

import pytest
from sqlalchemy import event

from core.clock import utcnow
from pipeline.leases import LEASES
from pipeline.worker import execution
from store import uploads
from store.models import RunChunk
from tests import crafted
from tests.pipeline.test_progress import planned_run
from tests.pipeline_support import FAST_JUDGE, evaluate


def test_an_upload_on_a_full_disk_is_refused_and_leaves_no_file(
    app_factory, tmp_path, monkeypatch
):
    app = app_factory()
    folder = tmp_path / "uploads"

    class FullDisk(io.BytesIO):
        def read(self, size=-1):
            if self.tell() > 10:
                raise OSError(errno.ENOSPC, "No space left on device")
            return super().read(4)

    original = uploads.store_upload

    def filling(stream, target):
        return original(FullDisk(stream.read()), target)

    monkeypatch.setattr("pipeline.service.runs.store_upload", filling)
    path = crafted.write(tmp_path / "c.jsonl", crafted.alignment_sessions())
    with path.open("rb") as stream:
        answer = app.test_client().post(
            "/api/v1/runs",
            data={"file": (stream, "c.jsonl"), "suites": "quality"},
            content_type="multipart/form-data",
        )
    assert answer.status_code == 507
    assert answer.get_json()["errors"][0]["code"] == "disk_full"
    assert list(folder.glob("*")) == []  # no orphan, not even a 0-byte one


def test_readyz_is_not_ready_below_the_free_space_floor(app_factory):
    ready = app_factory(MIN_FREE_MB=0).test_client().get("/readyz")
    assert ready.status_code == 200 and ready.get_json()["checks"]["disk"]["ok"]
    full = app_factory(MIN_FREE_MB=10**12).test_client().get("/readyz")
    assert full.status_code == 503
    assert "below" in full.get_json()["checks"]["disk"]["detail"]


def test_a_chunk_this_process_could_not_hand_back_is_released_at_the_next_sweep(
    app_factory,
):
    app = app_factory(MAX_CHUNK_ATTEMPTS=3)
    storage = app.extensions["storage"]
    run = planned_run(storage)
    claimed = storage.chunks.start_chunk(run.id, 0, holder=LEASES.holder)
    assert claimed is not None  # then its worker failed and could not write
    with storage.engine.begin() as conn:  # (a beat older than the grace)
        conn.execute(
            RunChunk.__table__.update()
            .where(RunChunk.run_id == run.id)
            .values(beat_at=utcnow() - timedelta(seconds=30))
        )
    ctx = execution.Context(storage, app.config, lambda *task: None)
    assert execution.sweep(ctx)["stale"] == 1  # not after CHUNK_STALL_S (300 s)
    assert storage.chunks.chunk_states(run.id) in ({"pending": 1}, {"sent": 1})


def test_a_failed_attempts_claims_are_ended_for_the_other_workers(
    app_factory, monkeypatch
):
    """Issue 57: a chunk that failed on a storage error kept its judge
    requests' claims, and another worker's retry waited out their deadline
    (16 minutes at the defaults). The failed attempt ends them; when that
    fails too (the database still down), the next sweep does."""
    from pipeline.batch import run_judge
    from store.call_claims import ClaimQueries

    app = app_factory()
    storage = app.extensions["storage"]
    ctx = execution.Context(storage, app.config, lambda *task: None)
    held = []

    def failing_score(ctx, run, chunk):
        holder = run_judge.attempt_holder(chunk)
        until = utcnow() + timedelta(minutes=16)
        storage.judge_cache.claim_requests([f"k{len(held)}"], holder, until)
        held.append(holder)
        raise RuntimeError("database or disk is full")

    monkeypatch.setattr(execution, "_score", failing_score)
    execution.evaluate_chunk(ctx, planned_run(storage).id, 0)
    assert storage.judge_cache.requests_claimed(["k0"]) == {}

    release = ClaimQueries.release_holder
    monkeypatch.setattr(ClaimQueries, "release_holder", lambda *a: 1 / 0)
    execution.evaluate_chunk(ctx, planned_run(storage).id, 0)
    assert storage.judge_cache.requests_claimed(["k1"]) == {"k1": held[1]}
    monkeypatch.setattr(ClaimQueries, "release_holder", release)  # back
    execution.sweep(ctx)
    assert storage.judge_cache.requests_claimed(["k1"]) == {}


def test_a_workspace_made_on_a_full_database_disk_is_a_507_not_a_500(app_factory):
    """Issue 57: POST /api/v1/workspaces on a full disk answered 500. SQLite
    is made full on its connections (PRAGMA max_page_count, as a full disk
    makes it: "database or disk is full"); the first refused one says so."""
    app = app_factory(PROPAGATE_EXCEPTIONS=False)  # the 500 path, as served
    client, storage = app.test_client(), app.extensions["storage"]
    assert client.post("/api/v1/workspaces", json={"name": "x"}).status_code == 201

    def full(connection, _record):
        pages = connection.execute("PRAGMA page_count").fetchone()[0]
        connection.execute(f"PRAGMA max_page_count = {pages}")

    event.listen(storage.engine, "connect", full)
    storage.engine.dispose()  # the pooled connections had no limit
    name = "a long name that fills the pages quickly " * 5
    for _ in range(2000):  # a page holds a few rows: the limit comes soon
        answer = client.post("/api/v1/workspaces", json={"name": name})
        if answer.status_code != 201:
            break
    assert answer.status_code == 507, answer.get_data(as_text=True)[:300]
    [error] = answer.get_json()["errors"]
    assert error["code"] == "storage_full" and "disk is full" in error["message"]


def test_a_chunk_whose_claim_the_database_refused_is_sent_again_at_the_next_sweep(
    app_factory, monkeypatch
):
    """Issue 57: a task that could not claim its chunk (the database full or
    down) ended with the chunk still ``sent`` and no task left for it; it was
    sent again only after QUEUE_TIMEOUT_S (5 minutes). The next sweep sends
    it again now."""
    import sqlite3

    from store.leases import LeaseQueries

    app = app_factory()
    storage = app.extensions["storage"]
    sent = []
    ctx = execution.Context(storage, app.config, lambda *task: sent.append(task))
    run = planned_run(storage)
    assert ctx.dispatch() == 1 and storage.chunks.chunk_states(run.id) == {"sent": 1}

    def refused(*args, **kwargs):
        raise sqlite3.OperationalError("database or disk is full")

    with monkeypatch.context() as patched:
        patched.setattr(LeaseQueries, "start_chunk", refused)
        try:
            execution.evaluate_chunk(ctx, run.id, 0)
        except sqlite3.OperationalError:
            pass  # the task fails: Celery logs it
        else:
            raise AssertionError("the refused claim was swallowed")
    assert storage.chunks.chunk_states(run.id) == {"sent": 1}
    assert execution.sweep(ctx)["stale"] == 1  # not after QUEUE_TIMEOUT_S (300 s)
    assert len(sent) == 2  # sent again
    assert execution.sweep(ctx)["stale"] == 0  # once


@pytest.mark.parametrize(
    "refused", ["claim_requests", "reserve_calls", "cache_put", "run_state"]
)
def test_a_storage_error_while_judging_fails_the_attempt_not_the_rows(
    app_factory, judge_server, tmp_path, monkeypatch, refused
):
    """Issue 57: a database error while a suite's judge worked (a request's
    claim, the call allowance, a verdict refused, the chunk's check) was taken for a bug in the
    suite: its rows became ``error`` rows "internal error: OperationalError"
    and the run ended partial for a fault that was over a moment later. The
    attempt fails instead, and its retry scores the rows."""
    import sqlite3
    import threading

    from sqlalchemy.exc import OperationalError

    from store.budget import BudgetQueries
    from store.call_claims import ClaimQueries
    from store.judge_cache import CacheQueries
    from store.runs import RunQueries

    owner = {
        "claim_requests": ClaimQueries,
        "reserve_calls": BudgetQueries,
        "cache_put": CacheQueries,
        "run_state": RunQueries,  # the chunk's check between calls
    }[refused]
    original, lock, failed = getattr(owner, refused), threading.Lock(), []

    def once_full(*args, **kwargs):
        with lock:
            if not failed:
                failed.append(refused)
                full = sqlite3.OperationalError("database or disk is full")
                raise OperationalError("INSERT ...", {}, full)
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, refused, once_full)
    app = app_factory(**FAST_JUDGE, JUDGE_DEADLINE_S=0.5)  # a verdict waits 0.5 s
    path = crafted.write(tmp_path / "a.jsonl", crafted.alignment_sessions())
    document = evaluate(app, path, judge_server, suites=["alignment"])
    assert failed == [refused]
    assert document["run"]["status"] == "done", [
        row["note"] for row in document["rows"] if row["status"] != "ok"
    ]
