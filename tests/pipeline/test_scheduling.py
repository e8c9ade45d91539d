"""Fair scheduling, one judge pool, and no run ever stuck (the watchdog, chunk
retries, giving up with error rows)."""

from __future__ import annotations

import json
import time
from datetime import timedelta

import pytest

from pipeline.worker.execution import Context, sweep
from store.models import RunChunk
from testing.judge_server import ScriptedJudge
from tests import crafted
from tests.pipeline_support import submit, wait_for


def sessions(count: int, rounds: int = 5, prefix: str = "s") -> list[dict]:
    return [
        crafted.session(
            f"{prefix}{i:05d}",
            {
                "Base": [f"Sure, round {k} of {i}." for k in range(rounds)],
                "Ours": [f"Happy to help with {k}, {i}!" for k in range(rounds)],
            },
        )
        for i in range(count)
    ]


def test_a_small_run_finishes_while_a_large_one_evaluates(app_factory, tmp_path):
    app = app_factory(CHUNK_UNITS=40)
    storage = app.extensions["storage"]
    big = submit(
        app,
        crafted.write(tmp_path / "big.jsonl", sessions(2000)),
        None,
        suites=["quality"],
    )
    deadline = time.monotonic() + 60
    while storage.runs.get_run(big).done == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    small = submit(
        app,
        crafted.write(tmp_path / "small.jsonl", sessions(3, prefix="t")),
        None,
        suites=["quality"],
    )
    document = wait_for(app, small, timeout=600)
    large = storage.runs.get_run(big)
    assert document["run"]["status"] == "done"
    assert large.status == "running" and large.done < large.total / 2
    app.extensions["runs"].cancel(large)


def test_one_pool_holds_the_concurrency_per_judge_model_across_runs(
    app_factory, tmp_path
):
    with ScriptedJudge(latency=0.05) as judge:
        app = app_factory(
            JUDGE_API_URL=judge.url,
            JUDGE_MODEL="judge-a",
            JUDGE_MODELS=["judge-a", "judge-b"],
            JUDGE_CONCURRENCY=3,
        )
        path = crafted.write(tmp_path / "c.jsonl", crafted.alignment_sessions())
        service = app.extensions["runs"]
        from pipeline.service.runs import RunRequest

        ids = []
        for model in ("judge-a", "judge-b"):
            with path.open("rb") as stream:
                run = service.create(
                    stream,
                    path.name,
                    RunRequest(suites=["alignment"], judge_model=model),
                )
            ids.append(run.id)
        service.enqueue()
        documents = [wait_for(app, run_id, timeout=600) for run_id in ids]
        assert [d["run"]["status"] for d in documents] == ["done", "done"]
        assert judge.state.models == {"judge-a": 40, "judge-b": 40}
        # each model has its own 3 slots (a slow one never takes another's)
        most = judge.state.max_in_flight_of
        assert set(most) == {"judge-a", "judge-b"} and max(most.values()) <= 3
    assert app.extensions["judge_pool"].in_flight == 0  # every call ended with its run


def test_judge_models_come_from_configuration(app_factory, tmp_path):
    app = app_factory(JUDGE_API_URL="http://127.0.0.1:9/v1", JUDGE_MODEL="judge-a")
    client = app.test_client()
    path = crafted.write(tmp_path / "c.jsonl", crafted.alignment_sessions())
    body = {"file": (path.open("rb"), "c.jsonl"), "judge_model": "my-own-model"}
    response = client.post(
        "/api/v1/runs", data=body, content_type="multipart/form-data"
    )
    assert response.status_code == 400
    assert response.get_json()["errors"][0]["code"] == "bad_judge_model"


def _chunks(storage, run_id):
    with storage.engine.connect() as conn:
        return list(
            conn.execute(RunChunk.__table__.select().where(RunChunk.run_id == run_id))
        )


def _age(storage, run_id, **columns):
    """Make a run's in-flight chunks look old (a lost task, a silent worker)."""
    from sqlalchemy import update

    with storage.engine.begin() as conn:
        conn.execute(
            update(RunChunk).where(RunChunk.run_id == run_id).values(**columns)
        )


def test_the_watchdog_requeues_lost_chunks_and_the_run_completes(app_factory, tmp_path):
    app = app_factory(CHUNK_UNITS=20, QUEUE_TIMEOUT_S=5.0, CHUNK_STALL_S=5.0)
    storage, service = app.extensions["storage"], app.extensions["runs"]
    app.extensions["test_worker"].ensure_started()  # a watchdog sweeps beside one
    from pipeline.service.runs import RunRequest

    path = crafted.write(tmp_path / "c.jsonl", sessions(6))
    with path.open("rb") as stream:
        run = service.create(stream, path.name, RunRequest(suites=["quality"]))
    claimed = storage.chunks.claim_chunks(per_run=2, per_client=2)  # "sent", then lost
    assert len(claimed) == 2
    old = storage.runs.get_run(run.id).created_at - timedelta(hours=1)
    _age(storage, run.id, sent_at=old)
    found = sweep(Context.of(app))
    assert found["stale"] == 2 and found["given_up"] == 0 and found["sent"] >= 2
    document = wait_for(app, run.id, timeout=600)
    assert document["run"]["status"] == "done"
    assert {c.state for c in _chunks(storage, run.id)} == {"done"}


def test_a_chunk_is_given_up_after_its_attempts_with_error_rows(app_factory, tmp_path):
    app = app_factory(CHUNK_UNITS=1000, MAX_CHUNK_ATTEMPTS=2)
    storage, service = app.extensions["storage"], app.extensions["runs"]
    from pipeline.service.runs import RunRequest

    path = crafted.write(tmp_path / "c.jsonl", sessions(2))
    with path.open("rb") as stream:
        run = service.create(
            stream, path.name, RunRequest(suites=["quality", "alignment"])
        )
    real = storage.rows.upsert_rows

    def scores_fail(rows, **fence):  # the disk fills up for scores; errors still fit
        rows = list(rows)
        if any(row["status"] != "error" for row in rows):
            raise OSError("disk full")
        return real(rows, **fence)

    storage.get().rows.upsert_rows = scores_fail
    try:
        service.enqueue()
        deadline = time.monotonic() + 30
        while (
            storage.runs.get_run(run.id).status == "running"
            and time.monotonic() < deadline
        ):
            time.sleep(0.05)
    finally:
        storage.get().rows.upsert_rows = real
    document = wait_for(app, run.id, timeout=600)
    assert document["run"]["status"] == "partial"
    [chunk] = _chunks(storage, run.id)
    assert (chunk.state, chunk.attempts) == ("failed", 2)
    errors = [r for r in document["rows"] if r["status"] == "error"]
    assert {r["session_id"] for r in errors} == {"s00000", "s00001"}
    assert all("disk full" in r["note"] and "2 attempt" in r["note"] for r in errors)
    assert {r["metric"] for r in errors} == {"coherence", "al"}


def test_a_failing_chunk_is_tried_again(app_factory, tmp_path):
    app = app_factory()
    storage, service = app.extensions["storage"], app.extensions["runs"]
    from pipeline.service.runs import RunRequest

    path = crafted.write(tmp_path / "c.jsonl", sessions(2))
    with path.open("rb") as stream:
        run = service.create(stream, path.name, RunRequest(suites=["quality"]))
    real, calls = storage.rows.upsert_rows, []

    def flaky(rows, **fence):
        calls.append(1)
        if len(calls) == 1:
            raise OSError("database restarted")
        return real(rows, **fence)

    storage.get().rows.upsert_rows = flaky
    try:
        service.enqueue()
        document = wait_for(app, run.id, timeout=600)
    finally:
        storage.get().rows.upsert_rows = real
    assert document["run"]["status"] == "done" and len(calls) == 2


def test_a_retry_already_in_progress_is_refused(embedded_app, tmp_path):
    storage, service = (
        embedded_app.extensions["storage"],
        embedded_app.extensions["runs"],
    )
    path = crafted.write(tmp_path / "c.jsonl", sessions(2))
    run_id = submit(embedded_app, path, None, suites=["quality"])
    run = storage.runs.get_run(run_id)
    service.cancel(run)
    run = storage.runs.get_run(run_id)
    from core.problems import Rejected

    first = service.retry_failed(run)
    service.cancel(first)  # keep it from finishing: still "in progress" is what counts
    storage.runs.set_status(first.id, "running")
    with pytest.raises(Rejected) as refused:
        service.retry_failed(run)
    assert (refused.value.status, refused.value.problems[0].code) == (
        409,
        "retry_in_progress",
    )
    storage.runs.set_status(first.id, "cancelled")
    json.dumps(service.results_document(storage.runs.get_run(first.id)))


def test_the_watchdog_plans_or_fails_runs_that_were_never_planned(
    app_factory, tmp_path
):
    app = app_factory()
    storage = app.extensions["storage"]
    app.extensions["test_worker"].ensure_started()  # a watchdog sweeps beside one
    from store.uploads import store_upload

    path = crafted.write(tmp_path / "c.jsonl", sessions(2))
    fields = {
        "file_name": "c.jsonl",
        "file_sha256": "0" * 64,
        "methods": ["Base", "Ours"],
        "suites": ["quality"],
        "sessions": 2,
        "rounds": 10,
    }
    with path.open("rb") as stream:
        upload_id, _, _ = store_upload(stream, app.config["UPLOAD_FOLDER"])
    kept = storage.runs.create_run(
        upload_id=upload_id, **fields
    )  # its planning was lost
    gone = storage.runs.create_run(upload_id="missing", **fields)  # and its upload too
    sweep(Context.of(app))
    assert wait_for(app, kept.id, timeout=600)["run"]["status"] == "done"
    failed = storage.runs.get_run(gone.id)
    assert failed.status == "failed" and failed.failure["code"] == "upload_unreadable"
    page = app.test_client().get(f"/r/{failed.token}?lang=zh").get_data(as_text=True)
    assert "已上传的文件无法再读取" in page  # the reason, translated


@pytest.mark.slow
def test_a_slow_judge_does_not_stall_a_run_on_a_fast_one(app_factory, tmp_path):
    """The red team's drill, scaled: a judge answering in 20 s holds its own
    slots; a run on an instant judge, sent after it, finishes while the
    slow run's first calls are still out (it took 298 s behind a 30 s judge
    when one pool's slots were shared by every model)."""
    with ScriptedJudge(latency=20.0) as slow, ScriptedJudge() as fast:
        app = app_factory(JUDGE_CONCURRENCY=2, JUDGE_TIMEOUT_S=120.0)
        path = crafted.write(tmp_path / "c.jsonl", crafted.alignment_sessions())
        slow_run = submit(app, path, slow, suites=["alignment"])
        storage = app.extensions["storage"]
        while slow.state.in_flight < 2:  # the slow judge's slots are full
            time.sleep(0.05)
        fast_run = submit(app, path, fast, suites=["alignment"])
        document = wait_for(app, fast_run, timeout=600)
        assert document["run"]["status"] == "done"
        assert storage.runs.get_run(slow_run).status == "running"
        assert slow.state.calls == 0  # not one slow reply came back meanwhile
        app.extensions["runs"].cancel(storage.runs.get_run(slow_run))


@pytest.mark.slow
def test_a_slow_judges_many_chunks_leave_a_task_thread_for_another_run(
    app_factory, tmp_path
):
    """A chunk holds a task thread while it waits on its judge: a slow run
    of many chunks holds as many threads as it may have chunks in flight
    (RUN_INFLIGHT_CHUNKS), and the worker has more (EMBEDDED_WORKER_THREADS),
    so a run on another judge still starts and ends (with 4 threads it
    waited behind the slow run's chunks)."""
    sessions = [
        crafted.session(
            f"s{index:02d}",
            {
                "Base": crafted.scores([50] * 5, [1] * 5),
                "Ours": crafted.scores([60] * 5, [1] * 5),
            },
        )
        for index in range(10)
    ]
    with ScriptedJudge(latency=20.0) as slow, ScriptedJudge() as fast:
        app = app_factory(JUDGE_CONCURRENCY=2, JUDGE_TIMEOUT_S=120.0, CHUNK_UNITS=10)
        assert app.config["EMBEDDED_WORKER_THREADS"] > app.config["RUN_INFLIGHT_CHUNKS"]
        many = crafted.write(tmp_path / "many.jsonl", sessions)
        slow_run = submit(app, many, slow, suites=["alignment"])
        storage = app.extensions["storage"]
        running = 0
        while running < app.config["RUN_INFLIGHT_CHUNKS"]:  # each on a thread
            running = storage.chunks.chunk_states(slow_run).get("running", 0)
            time.sleep(0.05)
        path = crafted.write(tmp_path / "c.jsonl", crafted.alignment_sessions())
        fast_run = submit(app, path, fast, suites=["alignment"])
        document = wait_for(app, fast_run, timeout=600)
        assert document["run"]["status"] == "done"
        assert slow.state.calls == 0  # not one slow reply came back meanwhile
        app.extensions["runs"].cancel(storage.runs.get_run(slow_run))
