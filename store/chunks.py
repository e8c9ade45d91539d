"""A run's chunks: the source of truth of its work (``storage.chunks``).

Every chunk of a run is planned when the run is created (``pending``). The
dispatcher hands pending chunks to the queue fairly: each run, and each
client's runs together, have at most a few chunks in the queue or on a worker
at once, so a small run is served while a large one evaluates. A worker marks
its chunk ``running`` and beats while it works; a chunk is counted ``done``
once.

A worker's claim on a chunk is a lease: ``store/leases.py``.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import cast

from sqlalchemy import Row, func, select, text, update
from sqlalchemy.engine import Connection

from core.status import ACTIVE_RUN, BatchStage, ChunkState, RunStatus
from store.batch_models import BatchRun
from store.database import Repository
from store.models import Run, RunChunk, RunSession, utcnow
from store.progress import add_to_run, held_by, lock_chunk

IN_FLIGHT = (ChunkState.SENT.value, ChunkState.RUNNING.value)
FINISHED = (ChunkState.DONE.value, ChunkState.FAILED.value)
_DISPATCH_LOCK_ID = 730_113  # PostgreSQL advisory lock: one dispatcher at a time
# a pending chunk a dispatcher may send: (run_id, chunk, the run's client)
Candidate = Row[str, int, str | None]


@dataclass(frozen=True)
class Chunk:
    run_id: str
    chunk: int
    start: int
    end: int
    units: int
    attempts: int = 0  # the send a task is matched against
    lease: int = 0  # the fencing token of the claim that returned it
    claims: int = 0  # claims made on it so far (this one included)
    holder: str | None = None


class ChunkQueries(Repository):
    """Chunk bookkeeping: the plan, claims and completions."""

    _dispatch_lock = threading.Lock()  # one dispatcher per process (SQLite)

    def plan_chunks(
        self, run_id: str, chunks: Iterable[tuple[int, int, int, int]]
    ) -> None:
        """``(index, start, end, units)`` of every chunk; planning twice keeps
        the first plan (and any progress on it)."""
        entries = [
            {
                "run_id": run_id,
                "chunk": i,
                "start": a,
                "end": b,
                "units": u,
                "state": ChunkState.PENDING.value,
                "items": 0,
                "attempts": 0,
            }
            for i, a, b, u in chunks
        ]
        if entries:
            stmt = self._insert(RunChunk).on_conflict_do_nothing(
                index_elements=["run_id", "chunk"]
            )
            with self.engine.begin() as conn:
                conn.execute(stmt, entries)

    def chunk_states(self, run_id: str) -> dict[str, int]:
        query = (
            select(RunChunk.state, func.count())
            .where(RunChunk.run_id == run_id)
            .group_by(RunChunk.state)
        )
        with self.engine.connect() as conn:
            return {state: count for state, count in conn.execute(query)}

    def finished_chunks(self, run_id: str) -> set[int]:
        query = select(RunChunk.chunk).where(
            RunChunk.run_id == run_id, RunChunk.state.in_(FINISHED)
        )
        with self.engine.connect() as conn:
            return set(conn.scalars(query))

    # -- dispatch ----------------------------------------------------------
    def claim_chunks(self, per_run: int, per_client: int) -> list[Chunk]:
        """Pending chunks to send now, round-robin over the active runs, so
        that no run has more than ``per_run`` and no client more than
        ``per_client`` chunks in flight. The claimed chunks are ``sent``."""
        with self._dispatch_lock, self.engine.begin() as conn:
            if conn.dialect.name == "postgresql":
                conn.execute(text(f"SELECT pg_advisory_xact_lock({_DISPATCH_LOCK_ID})"))
            flying, clients = _in_flight(conn)
            picked = _round_robin(
                _candidates(conn, per_run), flying, clients, per_run, per_client
            )
            return _mark_sent(conn, picked)

    def finish_chunk(
        self,
        run_id: str,
        chunk: int,
        units: int,
        state: str = ChunkState.DONE,
        lease: int | None = None,
    ) -> bool:
        """Record a planned chunk as finished once, counting into the run's
        progress the units its partial count had not (``store/progress.py``);
        False for a redelivered chunk, a ``lease`` no longer held, or a chunk
        no one planned (every run's chunks are planned at dispatch)."""
        values = {"state": str(state), "items": units, "beat_at": utcnow()}
        held = [] if lease is None else held_by(lease)
        with self.engine.begin() as conn:
            found = lock_chunk(
                conn, run_id, chunk, RunChunk.state.not_in(FINISHED), *held
            )
            if found is None:
                return False
            conn.execute(
                update(RunChunk)
                .where(RunChunk.run_id == run_id, RunChunk.chunk == chunk)
                .values(**values)
            )
            add_to_run(conn, run_id, done=units - min(found.items, units))
        return True

    def sessions_between(self, run_id: str, start: int, end: int) -> list[str]:
        """Ids of the sessions stored in a byte range of the run's upload."""
        query = (
            select(RunSession.session_id)
            .where(
                RunSession.run_id == run_id,
                RunSession.start >= start,
                RunSession.start < end,
            )
            .order_by(RunSession.position)
        )
        with self.engine.connect() as conn:
            return list(conn.scalars(query))


def _in_flight(conn: Connection) -> tuple[dict[str, int], dict[str | None, int]]:
    """Chunks in flight per active run, and per client."""
    query = (
        select(RunChunk.run_id, Run.client, func.count())
        .join(Run, Run.id == RunChunk.run_id)
        .where(
            RunChunk.state.in_(IN_FLIGHT), Run.status.in_([s.value for s in ACTIVE_RUN])
        )
        .group_by(RunChunk.run_id, Run.client)
    )
    per_run: dict[str, int] = {}
    per_client: dict[str | None, int] = defaultdict(int)
    for run_id, client, count in conn.execute(query):
        per_run[run_id] = count
        per_client[client] += count
    return per_run, per_client


# batch-mode runs whose answers are not all in: their chunks wait
# (``store/judge_batches.py``)
_waiting_for_batches = select(BatchRun.run_id).where(
    BatchRun.stage != BatchStage.ANSWERED.value
)


def _candidates(conn: Connection, per_run: int) -> list[Candidate]:
    """The first ``per_run`` pending chunks of every active run, oldest run first."""
    ranked = (
        select(
            RunChunk.run_id,
            RunChunk.chunk,
            func.row_number()
            .over(partition_by=RunChunk.run_id, order_by=RunChunk.chunk)
            .label("rank"),
        )
        .where(RunChunk.state == ChunkState.PENDING.value)
        .subquery()
    )
    query = (
        select(ranked.c.run_id, ranked.c.chunk, Run.client)
        .join(Run, Run.id == ranked.c.run_id)
        .where(
            ranked.c.rank <= per_run,
            Run.status.in_([s.value for s in ACTIVE_RUN]),
            ranked.c.run_id.not_in(_waiting_for_batches),
        )
        .order_by(Run.created_at, ranked.c.chunk)
    )
    return list(conn.execute(query))


def _round_robin(
    candidates: list[Candidate],
    flying: dict[str, int],
    clients: dict[str | None, int],
    per_run: int,
    per_client: int,
) -> list[Candidate]:
    """One chunk per run per pass, runs with the fewest in flight first."""
    queues: dict[str, list[Candidate]] = defaultdict(list)
    for row in candidates:
        queues[row.run_id].append(row)
    order = sorted(queues, key=lambda run: flying.get(run, 0))  # stable: oldest first
    picked: list[Candidate] = []
    while True:
        progressed = False
        for run_id in order:
            queue = queues[run_id]
            if not queue:
                continue
            client = queue[0].client
            if flying.get(run_id, 0) >= per_run or clients[client] >= per_client:
                continue
            picked.append(queue.pop(0))
            flying[run_id] = flying.get(run_id, 0) + 1
            clients[client] += 1
            progressed = True
        if not progressed:
            return picked


def _mark_sent(conn: Connection, picked: list[Candidate]) -> list[Chunk]:
    claimed: list[Chunk] = []
    now = utcnow()
    for row in picked:
        stmt = (
            update(RunChunk)
            .where(
                RunChunk.run_id == row.run_id,
                RunChunk.chunk == row.chunk,
                RunChunk.state == ChunkState.PENDING.value,
            )
            .values(
                state=ChunkState.SENT.value, sent_at=now, attempts=RunChunk.attempts + 1
            )
            .returning(RunChunk.start, RunChunk.end, RunChunk.units, RunChunk.attempts)
        )
        found = conn.execute(stmt).first()
        if found is not None:
            start, end, units, attempts = found
            # a pending chunk was planned with its byte range (only rows of
            # the first release, all finished, have none)
            span = cast(int, start), cast(int, end)
            claimed.append(Chunk(row.run_id, row.chunk, *span, units, attempts))
    started = {chunk.run_id for chunk in claimed}
    if started:
        conn.execute(
            update(Run)
            .where(Run.id.in_(started), Run.status == RunStatus.QUEUED.value)
            .values(status=RunStatus.RUNNING.value, started_at=now)
        )
    return claimed
