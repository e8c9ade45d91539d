"""The storage layer on SQLite and PostgreSQL (the ``any_storage`` fixture):
its engine and repositories (``store/database.py``), chunks
(``store/chunks.py``) and result rows (``store/result_rows.py``)."""

from __future__ import annotations

import threading

import pytest

RUN_FIELDS = {
    "file_name": "对话日志.jsonl",
    "file_sha256": "0" * 64,
    "upload_id": "u1",
    "methods": ["Base", "Ours"],
    "suites": ["alignment"],
}


def row(session="s1", round_=1, method="Ours", metric="al", value=80.0, **extra):
    return {
        "session_id": session,
        "round": round_,
        "method": method,
        "metric": metric,
        "value": value,
        "status": "ok",
        **extra,
    }


def test_run_round_trip_keeps_cjk_text(any_storage):
    run = any_storage.runs.create_run(**RUN_FIELDS, judge={"model": "判定-모델"})
    loaded = any_storage.runs.get_run_by_token(run.token)
    assert loaded.id == run.id
    assert loaded.file_name == "对话日志.jsonl"
    assert loaded.judge == {"model": "判定-모델"}
    assert loaded.status == "queued"


def test_tokens_are_long_and_unique(any_storage):
    tokens = {any_storage.runs.create_run(**RUN_FIELDS).token for _ in range(20)}
    assert len(tokens) == 20
    assert all(len(token) >= 22 for token in tokens)  # >= 128 bits


def test_unknown_token_is_none(any_storage):
    assert any_storage.runs.get_run_by_token("nope") is None


def test_upsert_is_idempotent_on_the_natural_key(any_storage):
    run = any_storage.runs.create_run(**RUN_FIELDS)
    rows = [row(run_id=run.id), row(run_id=run.id, method="Base", value=50.0)]
    any_storage.rows.upsert_rows(rows)
    any_storage.rows.upsert_rows(rows)  # a redelivered chunk
    any_storage.rows.upsert_rows([row(run_id=run.id, value=90.0, note="re-judged")])
    stored = any_storage.rows.rows(run.id)
    assert len(stored) == 2
    ours = any_storage.rows.rows(run.id, method="Ours")[0]
    assert (ours.value, ours.note) == (90.0, "re-judged")


def test_session_level_rows_and_samples_are_distinct_keys(any_storage):
    run = any_storage.runs.create_run(**RUN_FIELDS)
    any_storage.rows.upsert_rows(
        [
            row(run_id=run.id, round_=0, metric="jera"),
            row(run_id=run.id, round_=1, metric="al", sample=0),
            row(run_id=run.id, round_=1, metric="al", sample=1),
        ]
    )
    assert any_storage.rows.count_rows(run.id) == 3


def test_unscored_rows_keep_null_values_and_detail(any_storage):
    run = any_storage.runs.create_run(**RUN_FIELDS)
    detail = {"raw": "I cannot rate this. 我无法评分"}
    any_storage.rows.upsert_rows(
        [row(run_id=run.id, value=None, status="unscored", detail=detail)]
    )
    stored = any_storage.rows.rows(run.id)[0]
    assert stored.value is None
    assert stored.detail == detail


def test_chunk_progress_counts_once(any_storage):
    run = any_storage.runs.create_run(**RUN_FIELDS, total=10)
    any_storage.chunks.plan_chunks(run.id, [(0, 0, 6, 6), (1, 6, 10, 4)])
    assert any_storage.chunks.finish_chunk(run.id, 0, 6) is True
    assert any_storage.chunks.finish_chunk(run.id, 0, 6) is False  # redelivered
    assert any_storage.chunks.finish_chunk(run.id, 1, 4) is True
    assert any_storage.runs.get_run(run.id).done == 10


def test_a_chunk_no_one_planned_is_not_counted(any_storage):
    run = any_storage.runs.create_run(**RUN_FIELDS, total=10)
    assert any_storage.chunks.finish_chunk(run.id, 7, 6) is False
    assert any_storage.runs.get_run(run.id).done == 0


def test_run_state_is_status_done_and_total(any_storage):
    run = any_storage.runs.create_run(**RUN_FIELDS, total=10)
    any_storage.chunks.plan_chunks(run.id, [(0, 0, 6, 6)])
    any_storage.chunks.finish_chunk(run.id, 0, 6)
    assert any_storage.runs.run_state(run.id) == ("queued", 6, 10)
    assert any_storage.runs.run_state("nope") is None


def test_counters_are_atomic_under_concurrency(any_storage):
    run = any_storage.runs.create_run(**RUN_FIELDS)

    def bump():
        for _ in range(25):
            any_storage.runs.add_counters(run.id, judge_calls=1, prompt_tokens=10)

    threads = [threading.Thread(target=bump) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    loaded = any_storage.runs.get_run(run.id)
    assert (loaded.judge_calls, loaded.prompt_tokens) == (100, 1000)


def test_status_transitions_stamp_finish_time(any_storage):
    run = any_storage.runs.create_run(**RUN_FIELDS)
    assert [r.id for r in any_storage.runs.unfinished_runs()] == [run.id]
    any_storage.runs.set_status(run.id, "done")
    loaded = any_storage.runs.get_run(run.id)
    assert loaded.status == "done"
    assert loaded.finished_at is not None
    assert any_storage.runs.unfinished_runs() == []


def test_judge_cache_stores_first_entry_only(any_storage):
    entry = {
        "key": "a" * 64,
        "prompt_version": "alignment_v1",
        "reply": "Total: \\boxed{80}",
        "parsed": {"total": 80},
    }
    any_storage.judge_cache.cache_put([entry])
    any_storage.judge_cache.cache_put([{**entry, "reply": "other"}])
    found = any_storage.judge_cache.cache_get(["a" * 64, "b" * 64])
    assert list(found) == ["a" * 64]
    assert found["a" * 64].reply == "Total: \\boxed{80}"


@pytest.mark.postgres
def test_postgres_uses_jsonb(postgres_storage):
    from sqlalchemy import inspect

    columns = {
        c["name"]: c for c in inspect(postgres_storage.engine).get_columns("runs")
    }
    assert type(columns["methods"]["type"]).__name__ == "JSONB"


def test_verdicts_of_a_deleted_run_leave_no_cache_entry(any_storage, tmp_path):
    from sqlalchemy import func, select

    from store.models import JudgeCacheEntry, RunCacheKey
    from store.storage import JudgeCache

    run = any_storage.runs.create_run(
        file_name="f.jsonl",
        file_sha256="0" * 64,
        upload_id="gone",
        sessions=1,
        rounds=1,
        methods=["A"],
        suites=["alignment"],
        status="running",
    )
    cache = JudgeCache(any_storage.judge_cache, run.id)
    entry = {"key": "k1", "prompt_version": "p", "parsed": {"total": 1}, "reply": "r"}
    cache.put([entry])
    any_storage.runs.delete_run(run, tmp_path)
    cache.put([{**entry, "key": "k2"}])  # a chunk still finishing after the 204
    with any_storage.engine.connect() as conn:
        for model in (JudgeCacheEntry, RunCacheKey):
            assert conn.execute(select(func.count()).select_from(model)).scalar() == 0
