"""Planning a run's chunks and handing them to the queue fairly.

A run's chunks are planned when it is created (from the session index the
validator recorded) and handed out by :func:`dispatch`: at most
``RUN_INFLIGHT_CHUNKS`` per run and ``CLIENT_INFLIGHT_CHUNKS`` per client in
the queue or on a worker at once, round-robin over the active runs. Anything
that frees a slot (a chunk finishing, a run starting, the watchdog) calls
:func:`dispatch` again. ``store/chunks.py`` holds the bookkeeping.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import dataset
from core.clock import utcnow
from core.problems import Problem
from core.status import ChunkState, RunStatus
from metrics import engine
from pipeline.names import (
    BATCH_STEP,
    COMPARE_RUNS,
    COMPUTE_AGREEMENT,
    EVALUATE_CHUNK,
    FINALIZE_RUN,
)
from store.uploads import upload_path

if TYPE_CHECKING:
    from store import StorageLike
    from store.models import Run

Send = Callable[..., None]  # (task name, *args) -> None


def plan_run(
    storage: StorageLike,
    config: dict[str, Any],
    run: Run,
    spans: Iterable[tuple[str, int, int, int]],
) -> int:
    """Record the session index and the chunks of a run; returns the units.
    ``spans`` are ``(session id, byte start, byte end, rounds)``."""
    spans = list(spans)
    storage.chunks.record_sessions(
        run.id, ((i, sid, start, end) for i, (sid, start, end, _) in enumerate(spans))
    )
    chunks: list[tuple[int, int, int]] = engine.plan_chunks(
        [
            (start, end, engine.units(rounds, run.methods))
            for _, start, end, rounds in spans
        ],
        config["CHUNK_UNITS"],
    )
    storage.chunks.plan_chunks(
        run.id, ((i, a, b, u) for i, (a, b, u) in enumerate(chunks))
    )
    total = sum(units for _, _, units in chunks)
    storage.runs.update_run(run.id, total=total, chunks_planned=len(chunks))
    return total


def dispatch(storage: StorageLike, config: dict[str, Any], send: Send) -> int:
    """Send the chunks that may run now, the comparisons of finished runs
    waiting for a worker, the cancelled runs whose rows wait to be
    summarized, the batch-mode runs' next steps and the agreements whose
    labels changed; returns how many chunks were sent."""
    claimed = storage.chunks.claim_chunks(
        per_run=config["RUN_INFLIGHT_CHUNKS"],
        per_client=config["CLIENT_INFLIGHT_CHUNKS"],
    )
    for chunk in claimed:  # a task of an earlier send of it is then void
        send(EVALUATE_CHUNK, chunk.run_id, chunk.chunk, chunk.attempts)
    stale = utcnow() - timedelta(seconds=config["COMPARE_STALE_S"])
    for key in storage.comparisons.claim_comparisons(sent_before=stale):
        send(COMPARE_RUNS, key)
    for run_id in storage.runs.claim_cancelled():  # its stored rows, summarized
        send(FINALIZE_RUN, run_id)
    for run_id in storage.batches.claim_due(sent_before=stale):  # batch mode
        send(BATCH_STEP, run_id)
    # labels changed: their agreement (a bootstrap: seconds) off the page views
    # (imported here: light commands load this module, and no SQLAlchemy)
    from store.annotations import claim_agreements

    for run_id in claim_agreements(storage.engine, sent_before=stale):
        send(COMPUTE_AGREEMENT, run_id)
    return len(claimed)


def finalize_when_complete(storage: StorageLike, run_id: str, send: Send) -> bool:
    """Send the run's finalization once every chunk is done or given up."""
    states = storage.chunks.chunk_states(run_id)
    unfinished = sum(
        n for s, n in states.items() if s not in (ChunkState.DONE, ChunkState.FAILED)
    )
    if states and not unfinished:
        send(FINALIZE_RUN, run_id)
        return True
    return False


def fail_run(storage: StorageLike, run_id: str, code: str, **params: Any) -> None:
    """End a run ``failed`` with a translatable reason (a problem code)."""
    problem = Problem.make(None, "", code, **params)
    storage.runs.set_status(
        run_id,
        RunStatus.FAILED,
        error=problem.message,
        failure={"code": code, "params": problem.params},
    )


# -- recovery ------------------------------------------------------------------
def plan_from_upload(storage: StorageLike, config: dict[str, Any], run: Run) -> None:
    """Plan a run from its stored upload (a retry, or a run whose chunks
    were never recorded: the sweep); an unreadable upload fails it."""
    path = upload_path(config["UPLOAD_FOLDER"], run.upload_id)
    try:
        spans = list(dataset.session_spans(path))
    except OSError as exc:
        fail_run(storage, run.id, "upload_unreadable", detail=exc.strerror or str(exc))
        return
    plan_run(storage, config, run, spans)
