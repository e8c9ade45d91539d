"""Chunk leases (``storage.chunks``): claim, renew, release, and the
fenced writes of a chunk's holder.

A worker's claim on a chunk is a lease (``start_chunk``) with a fencing
token, ``lease``, grown at every claim and release: its rows, its progress
and its end are written only while that token is the chunk's
(``fenced``), so a worker whose lease was taken (it was stopped, or starved,
past the lease) cannot write over the next holder's work. A lease lasts
``CHUNK_STALL_S`` from its last renewal (``beat_at``); renewals come from
the holder's work and from its process's watchdog (``renew``). Expiry is
the one recovery path: an expired lease's chunk goes back to ``pending``
(``release_chunk``) or is claimed again by a redelivered task, and after
``MAX_CHUNK_ATTEMPTS`` claims it is given up (``failed``: its rows are
errors).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.engine import Connection, Engine

from core.clock import aware
from core.holders import gone
from core.status import ACTIVE_RUN, Cancelled, ChunkState, LeaseLost
from store.chunks import FINISHED, IN_FLIGHT, Chunk
from store.database import Repository
from store.models import Run, RunChunk, utcnow
from store.progress import held_by, lock_chunk
from store.sql import AnyRow

_ACTIVE = {status.value for status in ACTIVE_RUN}
ORPHAN_GRACE_S = 10.0  # a claim of this process not held for this long: orphaned


class LeaseQueries(Repository):
    """Chunk leases: start, heartbeat, renewal, release, fencing."""

    def start_chunk(
        self,
        run_id: str,
        chunk: int,
        holder: str | None = None,
        expired_before: datetime | None = None,
    ) -> Chunk | None:
        """Claim a chunk's lease: mark it ``running``, grow its token and its
        claims. None when it is finished already, unknown, or running under
        a lease renewed since ``expired_before``. Any of a chunk's tasks may
        claim it (one redelivered, one of an earlier send): the first runs
        it, the others find it taken, so a chunk sent again never waits
        behind its own copies."""
        free = RunChunk.state != ChunkState.RUNNING.value
        if expired_before is not None:
            free = free | (RunChunk.beat_at < expired_before)
        stmt = (
            update(RunChunk)
            .where(
                RunChunk.run_id == run_id,
                RunChunk.chunk == chunk,
                RunChunk.state.not_in(FINISHED),
                free,
            )
            .values(
                state=ChunkState.RUNNING.value,
                beat_at=utcnow(),
                holder=holder,
                lease=RunChunk.lease + 1,
                claims=RunChunk.claims + 1,
            )
            .returning(
                RunChunk.start,
                RunChunk.end,
                RunChunk.units,
                RunChunk.attempts,
                RunChunk.lease,
                RunChunk.claims,
            )
        )
        with self.engine.begin() as conn:
            found = conn.execute(stmt).first()
        if found is None or found.start is None:
            return None
        return Chunk(
            run_id,
            chunk,
            found.start,
            found.end,
            found.units,
            found.attempts,
            found.lease,
            found.claims,
            holder,
        )

    def beat(self, run_id: str, chunk: int, lease: int | None = None) -> bool:
        """Renew a running chunk's lease; False when ``lease`` is no longer
        its token (taken, released or finished)."""
        held = [] if lease is None else [RunChunk.lease == lease]
        stmt = (
            update(RunChunk)
            .where(
                RunChunk.run_id == run_id,
                RunChunk.chunk == chunk,
                RunChunk.state == ChunkState.RUNNING.value,
                *held,
            )
            .values(beat_at=utcnow())
        )
        with self.engine.begin() as conn:
            return conn.execute(stmt).rowcount > 0

    def renew(
        self, leases: Iterable[tuple[str, int, int]]
    ) -> set[tuple[str, int, int]]:
        """Renew the leases a process holds (``(run_id, chunk, lease)``), in
        one transaction; returns those another claim or a sweep took (their
        token grew). A chunk its holder has just finished is not taken."""
        lost: set[tuple[str, int, int]] = set()
        with self.engine.begin() as conn:
            for run_id, chunk, lease in leases:
                if lock_chunk(conn, run_id, chunk, *held_by(lease)) is None:
                    lost.add((run_id, chunk, lease))
            if lost:
                query = select(RunChunk.run_id, RunChunk.chunk, RunChunk.lease).where(
                    RunChunk.run_id.in_({run_id for run_id, _, _ in lost})
                )
                now = {(r.run_id, r.chunk): r.lease for r in conn.execute(query)}
                lost = {key for key in lost if now.get(key[:2], key[2]) != key[2]}
        return lost

    def release_chunk(
        self, run_id: str, chunk: int, error: str, lease: int | None = None
    ) -> bool:
        """Back to ``pending`` for another claim, its token grown (whatever
        its holder still sends is refused): by the holder that failed on it,
        or by a sweep that found its lease expired (``lease``: the token it
        saw, so a lease renewed meanwhile is kept)."""
        held = [] if lease is None else [RunChunk.lease == lease]
        stmt = (
            update(RunChunk)
            .where(
                RunChunk.run_id == run_id,
                RunChunk.chunk == chunk,
                RunChunk.state.not_in(FINISHED),
                *held,
            )
            .values(
                state=ChunkState.PENDING.value,
                error=error[:2000],
                holder=None,
                lease=RunChunk.lease + 1,
            )
        )
        with self.engine.begin() as conn:
            return conn.execute(stmt).rowcount > 0

    def held_chunks(self, run_id: str) -> list[Chunk]:
        """The run's chunks in work (``running``), with their holders."""
        query = select(
            RunChunk.chunk,
            RunChunk.start,
            RunChunk.end,
            RunChunk.units,
            RunChunk.attempts,
            RunChunk.lease,
            RunChunk.claims,
            RunChunk.holder,
        ).where(RunChunk.run_id == run_id, RunChunk.state == ChunkState.RUNNING.value)
        with self.engine.connect() as conn:
            return [
                Chunk(
                    run_id,
                    row.chunk,
                    row.start or 0,
                    row.end or 0,
                    row.units,
                    row.attempts,
                    row.lease,
                    row.claims,
                    row.holder,
                )
                for row in conn.execute(query)
            ]

    def last_error(self, run_id: str) -> str | None:
        """Why a chunk of the run waiting for a worker was handed back, if
        one was (its error)."""
        query = select(RunChunk.error).where(
            RunChunk.run_id == run_id,
            RunChunk.state.not_in(FINISHED),
            RunChunk.error.is_not(None),
        )
        with self.engine.connect() as conn:
            return conn.scalars(query.limit(1)).first()

    def fenced(
        self, run_id: str, chunk: int, lease: int
    ) -> AbstractContextManager[Connection]:
        return fenced(self.engine, run_id, chunk, lease)

    def stale_chunks(
        self,
        sent_before: datetime,
        beat_before: datetime,
        held_here: Iterable[tuple[str, int]] = (),
        holder: str | None = None,
        unclaimed: Iterable[tuple[str, int]] = (),
    ) -> list[Chunk]:
        """The chunks of active runs whose lease is void, but those
        ``held_here`` (the sweeping process is alive, so its own leases are
        not a dead worker's however slowly it runs). A lease is void when:

        * the chunk was sent and no worker took it by ``sent_before`` (its
          task was lost, or waits behind others: a copy is harmless, the
          first task to come claims the chunk);
        * it was not renewed since ``beat_before`` (its worker was killed,
          or stopped past it);
        * its holder is known gone (a process of this host that ended:
          :func:`core.holders.gone`), whenever it was renewed;
        * ``holder`` (this process) claimed it and no longer holds it (its
          worker failed and could not even hand it back: a full disk), so
          it is tried again as soon as a write succeeds;
        * it is still sent and among ``unclaimed``: this process took its
          task and could not claim it (the database refused the claim), so
          no task is left for it.
        """
        query = (
            select(
                RunChunk.run_id,
                RunChunk.chunk,
                RunChunk.start,
                RunChunk.end,
                RunChunk.units,
                RunChunk.attempts,
                RunChunk.lease,
                RunChunk.claims,
                RunChunk.holder,
                RunChunk.state,
                RunChunk.sent_at,
                RunChunk.beat_at,
            )
            .join(Run, Run.id == RunChunk.run_id)
            .where(
                RunChunk.state.in_(IN_FLIGHT),
                Run.status.in_([s.value for s in ACTIVE_RUN]),
            )
        )
        orphaned = utcnow() - timedelta(seconds=ORPHAN_GRACE_S)
        mine, lost = set(held_here), set(unclaimed)

        def void(row: AnyRow) -> bool:
            if row.state == ChunkState.SENT.value:
                return (
                    row.sent_at is None
                    or aware(row.sent_at) < sent_before
                    or (row.run_id, row.chunk) in lost
                )
            beat = aware(row.beat_at) if row.beat_at else None
            return (
                beat is None
                or beat < beat_before
                or (row.holder is not None and gone(row.holder))
                or (holder is not None and row.holder == holder and beat < orphaned)
            )

        with self.engine.connect() as conn:
            return [
                Chunk(
                    row.run_id,
                    row.chunk,
                    row.start or 0,
                    row.end or 0,
                    row.units,
                    row.attempts,
                    row.lease,
                    row.claims,
                    row.holder,
                )
                for row in conn.execute(query)
                if (row.run_id, row.chunk) not in mine and void(row)
            ]


@contextmanager
def fenced(engine: Engine, run_id: str, chunk: int, lease: int) -> Iterator[Connection]:
    """A transaction in which the chunk's lease is ``lease`` and its run is
    still active: the chunk's row is locked first, so no claim or release
    comes between; raises :class:`LeaseLost` otherwise, or
    :class:`Cancelled` for a run cancelled meanwhile (nothing written: the
    summary of a cancelled run counts the rows stored before the cancel,
    and a chunk under way must not add to them after it; the cancel waits
    for the chunks' locks, ``lock_in_flight``)."""
    with engine.begin() as conn:
        if lock_chunk(conn, run_id, chunk, *held_by(lease)) is None:
            raise LeaseLost(f"chunk {chunk} of run {run_id}")
        status = conn.execute(select(Run.status).where(Run.id == run_id)).scalar()
        if status not in _ACTIVE:
            raise Cancelled(f"run {run_id} is {status}")
        yield conn


def lock_in_flight(conn: Connection, run_id: str) -> None:
    """Lock the run's chunks in flight (in chunk order), so a cancel in the
    same transaction waits for their fenced writes under way, and those
    after it see the run cancelled (``fenced``)."""
    query = (
        select(RunChunk.id)
        .where(RunChunk.run_id == run_id, RunChunk.state.in_(IN_FLIGHT))
        .order_by(RunChunk.chunk)
        .with_for_update()
    )
    conn.execute(query).all()
