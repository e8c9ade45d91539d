"""The work a run's tasks do: evaluate one chunk, give up on one, and the
watchdog's sweep (finalizing a run: ``pipeline/worker/finalizer.py``).

Functions take a :class:`Context` (storage, configuration, how to send a
task, the judge pool) explicitly, so they run the same under a Celery task,
in a test, or in a script. Delivery is at-least-once (acks late; Redis
redelivers after a crash), so each step is idempotent: rows are upserted on
their natural key, a chunk is counted once, and finalizing twice computes the
same aggregates. No exception leaves a run hanging: a chunk that fails goes
back for another attempt, then is given up with ``error`` rows; a failed
finalization fails the run with its reason.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta
from functools import partial
from typing import TYPE_CHECKING, Any

import dataset
from core.clock import utcnow
from core.holders import attempt
from core.status import (
    ACTIVE_RUN,
    Cancelled,
    ChunkState,
)
from evaluator import Judge, JudgePanel, JudgePool
from metrics import engine, notes, registry
from metrics.rows import ResultRow
from pipeline import stalls
from pipeline.batch.run_judge import attempt_holder, judge_for, taken_exchanges
from pipeline.dispatch import (
    Send,
    dispatch,
    finalize_when_complete,
    plan_from_upload,
)
from pipeline.leases import LEASES
from pipeline.progress import ChunkProgress, expected_items
from pipeline.service.run_spec import RunSpec
from pipeline.worker import interim
from store.uploads import upload_path

log = logging.getLogger(__name__)

if TYPE_CHECKING:  # the worker builds it; the CLI's validate loads no SQL
    from flask import Flask

    from store import StorageLike
    from store.chunks import Chunk
    from store.models import Run


@dataclass
class Context:
    storage: StorageLike
    config: dict[str, Any]
    send: Send
    pool: JudgePool | None = None

    def dispatch(self) -> int:
        return dispatch(self.storage, self.config, self.send)

    @classmethod
    def of(cls, app: Flask) -> Context:
        """The context of a Flask app (the worker's own, or the embedded one)."""
        extensions = app.extensions
        return cls(
            extensions["storage"],
            app.config,
            extensions["queue"].send,
            extensions["judge_pool"],
        )


def _active(storage: StorageLike, run_id: str) -> Run | None:
    run = storage.runs.get_run(run_id)
    return run if run is not None and run.status in ACTIVE_RUN else None


def evaluate_chunk(ctx: Context, run_id: str, chunk_index: int) -> None:
    """Score one chunk and store its rows; then hand out the next chunks.
    Whichever of the chunk's tasks comes first takes it (``_claim``)."""
    storage = ctx.storage
    try:
        run = _active(storage, run_id)
        chunk = _claim(ctx, run_id, chunk_index) if run else None
    except Exception:  # the database refused the claim: this task is gone
        UNCLAIMED.add((run_id, chunk_index))
        raise
    if run is None or chunk is None:
        return  # cancelled, final, counted, or under a live lease
    LEASES.hold(run_id, chunk_index, chunk.lease)
    try:
        # its judge requests' claims end with it, released or not (a retry
        # here must not wait for the claims a storage error left behind)
        with attempt(attempt_holder(chunk)):
            _score(ctx, run, chunk)
    except Cancelled:
        return  # a cancelled run, or a lease taken: nothing more is stored
    except Exception as exc:  # the chunk goes back, or is given up: never lost
        log.exception("chunk %s of run %s failed", chunk_index, run_id)
        _release_claims(ctx.storage, attempt_holder(chunk))
        _failed_attempt(ctx, run, chunk, f"{type(exc).__name__}: {exc}")
    else:
        if storage.chunks.finish_chunk(
            run_id, chunk_index, chunk.units, lease=chunk.lease
        ):
            _after_chunk(ctx, run_id)
    finally:
        LEASES.drop(run_id, chunk_index)


def _claim(ctx: Context, run_id: str, chunk_index: int) -> Chunk | None:
    """The chunk's lease, unless another worker holds it (a redelivered task)."""
    expired = utcnow() - timedelta(seconds=ctx.config["CHUNK_STALL_S"])
    return ctx.storage.chunks.start_chunk(
        run_id, chunk_index, holder=LEASES.holder, expired_before=expired
    )


def _score(ctx: Context, run: Run, chunk: Chunk) -> None:
    """Each suite's rows are stored before the next suite runs, so a chunk
    holds one suite's rows at a time. (If a later suite fails, the chunk is
    tried again and the upserts repeat.) Progress moves while it works
    (``pipeline/progress.py``); the judge's counters are written whatever
    happens, since its calls were made."""
    storage = ctx.storage
    path = upload_path(ctx.config["UPLOAD_FOLDER"], run.upload_id)
    sessions = dataset.read_sessions(path, chunk.start, chunk.end)
    report = partial(
        storage.progress.record_progress, run.id, chunk.chunk, lease=chunk.lease
    )
    progress = ChunkProgress(report, chunk.units, len(run.suites))
    judge = judge_for(ctx.storage, ctx.config, ctx.pool, run, chunk, progress.add)
    if judge is not None:
        progress.counters = judge.usage.counters
    spec = RunSpec.of(run)
    options, judges = spec.suite_inputs(), len(spec.judge.models)
    truncated = 0
    try:
        for suite in run.suites:
            rows = _suite_rows(
                suite, sessions, run.methods, judge, options, progress, judges
            )
            storage.rows.upsert_rows(
                ({**row, "run_id": run.id, "round": row["round"] or 0} for row in rows),
                fence=(run.id, chunk.chunk, chunk.lease),
                exchanges=taken_exchanges(judge),
            )
            truncated += sum(
                1 for row in rows if (row.get("detail") or {}).get("history_truncated")
            )
            del rows
    finally:
        progress.write()
        if judge is not None:
            judge.release()  # the calls of the cap it reserved and did not use
    storage.runs.add_counters(run.id, history_truncated=truncated)


def _suite_rows(
    name: str,
    sessions: list[dict[str, Any]],
    methods: list[str],
    judge: Judge | JudgePanel | None,
    options: dict[str, Any],
    progress: ChunkProgress,
    judges: int = 1,
) -> list[ResultRow]:
    """One suite's rows of the chunk. A suite asking the judge sees the whole
    chunk (its items go out in batches that keep the judge's pool full) and
    the judge reports each item; any other suite runs session by session,
    each counted as it is done (the suites score sessions independently)."""
    suite = registry.get(name)
    rows: list[ResultRow] = []
    if judge is not None and suite.uses_judge:
        progress.start_suite(expected_items(suite, sessions, methods, options, judges))
        rows = engine.evaluate(sessions, [name], methods, judge, options)
    else:
        progress.start_suite(sum(_units(session, methods) for session in sessions))
        for session in sessions:
            rows += engine.evaluate([session], [name], methods, None, options)
            progress.add(_units(session, methods))
    progress.end_suite()
    return rows


def _units(session: dict[str, Any], methods: list[str]) -> int:
    return engine.units(len(session["rounds"]), methods)


def _failed_attempt(ctx: Context, run: Run, chunk: Chunk, reason: str) -> None:
    if _exhausted(chunk, ctx.config):
        give_up(ctx, run, chunk, reason)
    elif ctx.storage.chunks.release_chunk(
        run.id, chunk.chunk, reason, lease=chunk.lease
    ):
        ctx.dispatch()


# chunks whose task this process took and could not claim (the database
# was down or full): the chunk stays ``sent`` with no task left for it, so
# the next sweep sends it again (not after QUEUE_TIMEOUT_S)
UNCLAIMED: set[tuple[str, int]] = set()

# attempts of this process that failed with their judge requests' claims
# still stored (the release failed too: the database was down or full)
CLAIMS_LEFT: set[str] = set()


def _release_claims(storage: StorageLike, holder: str) -> None:
    """End a failed attempt's claims, so that another worker's retry does
    not wait out their deadline; when that fails too, the watchdog's sweeps
    try again (``sweep``)."""
    try:
        storage.judge_cache.release_holder(holder)
    except Exception:
        log.warning("claims of %s left for the next sweep", holder, exc_info=True)
        CLAIMS_LEFT.add(holder)
    else:
        CLAIMS_LEFT.discard(holder)


def _exhausted(chunk: Chunk, config: dict[str, Any]) -> bool:
    """Given up after ``MAX_CHUNK_ATTEMPTS`` claims (a worker failed on it or
    died holding it). Sends are not counted: a task that waited long in a
    busy queue is sent again, and is not the chunk's fault (a run that lost
    its chunks that way ended partial with 0 errors of its own)."""
    attempts: int = config["MAX_CHUNK_ATTEMPTS"]
    return chunk.claims >= attempts


def give_up(ctx: Context, run: Run, chunk: Chunk, reason: str) -> None:
    """After its attempts, a chunk's rows become ``error`` rows naming the
    reason, so the run still finishes (``partial``) and says what happened."""
    storage = ctx.storage
    note = notes.note("chunk_failed", attempts=chunk.claims, reason=reason[:300])
    rows: list[ResultRow] = []
    for session_id in storage.chunks.sessions_between(run.id, chunk.start, chunk.end):
        session = {"session_id": session_id}
        for name in run.suites:
            rows += engine.failure_rows(
                [session], registry.get(name), run.methods, note
            )
    fence = (run.id, chunk.chunk, chunk.lease)
    try:
        storage.rows.upsert_rows(
            ({**row, "run_id": run.id, "round": 0} for row in rows), fence=fence
        )
    except Cancelled:  # LeaseLost too
        return  # another worker holds it now, or the run was cancelled
    failed = ChunkState.FAILED
    if storage.chunks.finish_chunk(
        run.id, chunk.chunk, chunk.units, failed, chunk.lease
    ):
        _after_chunk(ctx, run.id)


def _after_chunk(ctx: Context, run_id: str) -> None:
    ctx.dispatch()
    if not finalize_when_complete(ctx.storage, run_id, ctx.send):
        interim.refresh(ctx.storage, run_id, ctx.config)


# -- recovery ------------------------------------------------------------------
def sweep(ctx: Context, sole: bool = False) -> dict[str, int]:
    """The one recovery path, the watchdog's round: every chunk whose lease
    is void (``store/leases.py``: its task lost or waiting long in the
    queue, its worker killed, stopped past its lease, or gone) goes back
    for another claim, or is given up after ``MAX_CHUNK_ATTEMPTS``; runs
    never planned are planned; complete runs are finalized; then dispatch.
    ``sole``: this process is the only worker of its database (the embedded
    worker starting, under the queue's lock), so no lease it does not hold
    is alive and none is waited for."""
    storage, config = ctx.storage, ctx.config
    for holder in list(CLAIMS_LEFT):
        _release_claims(storage, holder)
    now = utcnow()
    sent_before = now - timedelta(seconds=config["QUEUE_TIMEOUT_S"])
    beat_before = now - timedelta(seconds=config["CHUNK_STALL_S"])
    unclaimed = set(UNCLAIMED)
    stale = storage.chunks.stale_chunks(
        sent_before=now if sole else sent_before,
        beat_before=now if sole else beat_before,
        held_here=LEASES.keys(),
        holder=LEASES.holder,
        unclaimed=unclaimed,
    )
    UNCLAIMED.difference_update(unclaimed)  # sent again below, or taken meanwhile
    if sole:  # the batch steps the last worker held died with it
        storage.batches.forget_claims()
    given_up = 0
    why = "the worker stopped answering"
    for chunk in stale:
        run = _active(storage, chunk.run_id)
        if run is None:
            continue
        # fenced on the token seen: a lease renewed meanwhile is kept
        if not storage.chunks.release_chunk(
            chunk.run_id, chunk.chunk, why, chunk.lease
        ):
            continue
        if _exhausted(chunk, config):
            claimed = storage.chunks.start_chunk(
                chunk.run_id, chunk.chunk, LEASES.holder
            )
            if claimed is not None:
                give_up(ctx, run, claimed, why)
                given_up += 1
    for run in storage.runs.unfinished_runs():
        if not storage.chunks.chunk_states(
            run.id
        ):  # never planned: plan it, or fail it
            plan_from_upload(storage, config, run)
        finalize_when_complete(storage, run.id, ctx.send)
    found = {"stale": len(stale), "given_up": given_up, "stalled": check_stalls(ctx)}
    return {**found, "sent": ctx.dispatch()}


def check_stalls(ctx: Context) -> int:
    """Each running run that stopped moving for ``RUN_STALL_S`` gets its
    cause recorded (``pipeline/stalls.py``) and, where waiting would not
    help, its chunks handed out again: their holders' leases void, their
    judge requests' claims ended, or given up past their attempts (their
    rows errors naming the stall). Returns the runs found stalled."""
    storage = ctx.storage
    found = 0
    for run, chunks, due in stalls.stalled(storage, ctx.config):
        found += 1
        if not due:
            continue
        why = stalls.reason(storage.runs.get_run(run.id) or run)
        for chunk in chunks:
            if chunk.holder:
                storage.judge_cache.release_holder(attempt_holder(chunk))
            if not storage.chunks.release_chunk(run.id, chunk.chunk, why, chunk.lease):
                continue
            if _exhausted(chunk, ctx.config):
                claimed = storage.chunks.start_chunk(run.id, chunk.chunk, LEASES.holder)
                if claimed is not None:
                    give_up(ctx, run, claimed, why)
    return found
