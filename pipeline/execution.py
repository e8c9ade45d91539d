"""The work a run's tasks do: plan the chunks, evaluate one, finalize.

Functions take the storage and the configuration explicitly, so they run
the same under a Celery task, in a test, or in a script. Delivery is
at-least-once (acks late; Redis redelivers after a crash), so each step is
idempotent: rows are upserted on their natural key, a chunk is counted once,
and finalizing twice computes the same aggregates.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import dataset
from core.status import ACTIVE_RUN, FAILED_ROWS, Cancelled, RunStatus
from evaluator import Judge, JudgeConfig
from metrics import engine, registry
from store.storage import JudgeCache
from store.uploads import upload_path

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Plan:
    pending: list[tuple[int, int, int]]  # (chunk index, byte start, byte end)
    complete: bool  # every chunk already finished (a re-sent run)


def _active(storage, run_id: str):
    run = storage.get_run(run_id)
    return run if run is not None and run.status in ACTIVE_RUN else None


def plan(storage, config: dict, run_id: str) -> Plan | None:
    """Index the sessions, split them into chunks, mark the run running.
    None when the run is no longer active or its upload is unreadable."""
    run = _active(storage, run_id)
    if run is None:
        return None
    path = upload_path(config["UPLOAD_FOLDER"], run.upload_id)
    try:
        spans = list(dataset.session_spans(path))
    except OSError as exc:
        storage.set_status(
            run_id, RunStatus.FAILED, error=f"upload unreadable: {exc.strerror}"
        )
        return None
    storage.record_sessions(
        run_id, ((i, sid, a, b) for i, (sid, a, b, _) in enumerate(spans))
    )
    chunks = engine.plan_chunks(
        [(a, b, engine.units(rounds, run.methods)) for _, a, b, rounds in spans],
        config["CHUNK_UNITS"],
    )
    storage.update_run(
        run_id,
        status=RunStatus.RUNNING,
        total=sum(units for _, _, units in chunks),
        options={**run.options, "chunks": len(chunks)},
    )
    finished = storage.finished_chunks(run_id)
    pending = [(i, a, b) for i, (a, b, _) in enumerate(chunks) if i not in finished]
    return Plan(pending, complete=len(finished) == len(chunks))


def evaluate_chunk(
    storage, config: dict, run_id: str, chunk: int, start: int, end: int
) -> bool:
    """Score one chunk and store its rows; True when the run is ready to finalize."""
    run = _active(storage, run_id)
    if run is None:
        return False  # cancelled or already final
    path = upload_path(config["UPLOAD_FOLDER"], run.upload_id)
    sessions = dataset.read_sessions(path, start, end)
    judge = judge_for(run, storage, config)
    try:
        rows = engine.evaluate(sessions, run.suites, run.methods, judge, run.options)
    except Cancelled:
        return False  # nothing of a cancelled chunk is stored
    storage.upsert_rows(
        {**row, "run_id": run_id, "round": row["round"] or 0} for row in rows
    )
    if judge is not None:
        storage.add_counters(run_id, **judge.usage.counters())
    units = sum(engine.units(len(s["rounds"]), run.methods) for s in sessions)
    storage.finish_chunk(run_id, chunk, units)
    return len(storage.finished_chunks(run_id)) >= run.options.get("chunks", 0)


def judge_for(run, storage, config: dict):
    """The run's judge, or None when no suite of it asks one or none is configured."""
    if not any(registry.get(name).uses_judge for name in run.suites):
        return None
    judge_config = JudgeConfig.from_settings(config, run.options)
    if judge_config is None:
        return None
    cache = JudgeCache(storage) if run.options.get("use_cache", True) else None
    return Judge(
        judge_config, cache=cache, should_stop=lambda: _cancelled(storage, run.id)
    )


def _cancelled(storage, run_id: str) -> bool:
    run = storage.get_run(run_id)
    return run is None or run.status == RunStatus.CANCELLED


def finalize(storage, run_id: str) -> None:
    """Aggregate a finished run; each suite reads only its own rows."""
    run = _active(storage, run_id)
    if run is None:
        return

    def rows_of(suite):
        for row in storage.iter_rows(run_id, metrics=suite.metrics):
            row["round"] = row["round"] or None
            yield row

    try:
        aggregates = engine.aggregate(rows_of, run.suites, run.methods)
    except Exception as exc:  # never leave a run hanging in "running"
        log.exception("aggregating run %s failed", run_id)
        storage.set_status(
            run_id, RunStatus.FAILED, error=f"aggregation failed: {type(exc).__name__}"
        )
        return
    counts = storage.status_counts(run_id)
    failed = sum(counts.get(status, 0) for status in FAILED_ROWS)
    # Finished runs are immutable: pages read these instead of re-counting rows.
    storage.update_run(run_id, aggregates={**aggregates, "status_counts": counts})
    storage.set_status(run_id, RunStatus.PARTIAL if failed else RunStatus.DONE)
