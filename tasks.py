"""Celery tasks: thin. Each takes ids, loads, calls pure code, stores.

Delivery is at-least-once (acks late; Redis redelivers after a crash), so
every task is idempotent: rows are upserted on their natural key, a chunk is
counted once, and finalising twice computes the same aggregates.
"""

from __future__ import annotations

import json
import logging

from celery import shared_task
from flask import current_app

import runs
from dataset import is_blank, normalize_session
from evaluator import Cancelled, Judge
from metrics import engine
from metrics.registry import SUITES
from storage import JudgeCache

log = logging.getLogger(__name__)
ACTIVE = ("queued", "running")


def _storage():
    return current_app.extensions["storage"]


@shared_task(name="personasteer.start_run")
def start_run(run_id: str) -> None:
    """Plan the chunks and fan them out; re-sent at start-up for unfinished runs."""
    storage = _storage()
    run = storage.get_run(run_id)
    if run is None or run.status not in ACTIVE:
        return
    try:
        spans = session_spans(
            runs.upload_path(current_app.config, run.upload_id), run.methods
        )
    except OSError as exc:
        storage.set_status(run_id, "failed", error=f"upload unreadable: {exc.strerror}")
        return
    storage.record_sessions(
        run_id, ((i, sid, a, b) for i, (sid, a, b, _) in enumerate(spans))
    )
    chunks = engine.plan_chunks(
        [span[1:] for span in spans], current_app.config["CHUNK_UNITS"]
    )
    storage.update_run(
        run_id,
        status="running",
        total=sum(units for _, _, units in chunks),
        options={**run.options, "chunks": len(chunks)},
    )
    finished = storage.finished_chunks(run_id)
    for index, (start, end, _) in enumerate(chunks):
        if index not in finished:
            evaluate_chunk.delay(run_id, index, start, end)
    if len(finished) == len(chunks):
        finalize_run.delay(run_id)


def session_spans(path, methods: list[str]) -> list[tuple[str, int, int, int]]:
    """(session id, byte start, byte end, units) of every session line."""
    spans, offset = [], 0
    with open(path, "rb") as stream:
        for raw in stream:
            if not is_blank(raw):
                session = json.loads(raw.decode("utf-8-sig"))
                units = engine.units(session, methods)
                spans.append((session["session_id"], offset, offset + len(raw), units))
            offset += len(raw)
    return spans


def read_sessions(path, start: int, end: int) -> list[dict]:
    with open(path, "rb") as stream:
        stream.seek(start)
        block = stream.read(end - start).decode("utf-8-sig")
    # Split on "\n" only: str.splitlines() also breaks at U+2028, which JSON
    # allows unescaped inside strings.
    return [
        normalize_session(json.loads(line))
        for line in block.split("\n")
        if not is_blank(line)
    ]


@shared_task(name="personasteer.evaluate_chunk")
def evaluate_chunk(run_id: str, chunk: int, start: int, end: int) -> None:
    storage = _storage()
    run = storage.get_run(run_id)
    if run is None or run.status not in ACTIVE:
        return  # cancelled or already final
    sessions = read_sessions(
        runs.upload_path(current_app.config, run.upload_id), start, end
    )
    judge = _judge_for(run, storage)
    try:
        rows = engine.evaluate(sessions, run.suites, run.methods, judge, run.options)
    except Cancelled:
        return  # nothing of a cancelled chunk is stored
    except Exception as exc:  # a bug in one suite must not lose the run
        log.exception("chunk %s of run %s failed", chunk, run_id)
        rows = _failure_rows(sessions, run.suites, run.methods, exc)
    storage.upsert_rows(
        {**row, "run_id": run_id, "round": row["round"] or 0} for row in rows
    )
    if judge is not None:
        storage.add_counters(run_id, **judge.usage.counters())
    storage.finish_chunk(
        run_id, chunk, sum(engine.units(s, run.methods) for s in sessions)
    )
    if len(storage.finished_chunks(run_id)) >= run.options.get("chunks", 0):
        finalize_run.delay(run_id)


def _judge_for(run, storage) -> Judge | None:
    if not any(SUITES[name].uses_judge for name in run.suites):
        return None
    config = runs.judge_config(current_app.config, run.options)
    if config is None:
        return None
    cache = JudgeCache(storage) if run.options.get("use_cache", True) else None
    return Judge(config, cache=cache, should_stop=lambda: _cancelled(storage, run.id))


def _cancelled(storage, run_id: str) -> bool:
    run = storage.get_run(run_id)
    return run is None or run.status == "cancelled"


def _failure_rows(sessions, suites, methods, exc) -> list[dict]:
    note = f"internal error: {type(exc).__name__}"
    return [
        {"session_id": s["session_id"], "round": 0, "method": m, "metric": suite,
         "value": None, "status": "error", "note": note}
        for s in sessions for m in methods for suite in suites
    ]  # fmt: skip


@shared_task(name="personasteer.finalize_run")
def finalize_run(run_id: str) -> None:
    storage = _storage()
    run = storage.get_run(run_id)
    if run is None or run.status not in ACTIVE:
        return
    rows = storage.row_dicts(run_id)
    for row in rows:
        row["round"] = row["round"] or None
    try:
        aggregates = engine.aggregate(rows, run.suites, run.methods)
    except Exception as exc:  # never leave a run hanging in "running"
        log.exception("aggregating run %s failed", run_id)
        storage.set_status(
            run_id, "failed", error=f"aggregation failed: {type(exc).__name__}"
        )
        return
    counts = storage.status_counts(run_id)
    failed = counts.get("unscored", 0) + counts.get("error", 0)
    # Finished runs are immutable: pages read these instead of re-counting rows.
    storage.update_run(run_id, aggregates={**aggregates, "status_counts": counts})
    storage.set_status(run_id, "partial" if failed else "done")


def cancel_run(run_id: str) -> bool:
    """Queued chunks see the status and skip; returns False if already final."""
    storage = _storage()
    run = storage.get_run(run_id)
    if run is None or run.status not in ACTIVE:
        return False
    storage.set_status(run_id, "cancelled")
    return True
