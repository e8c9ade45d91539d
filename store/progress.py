"""A run's progress counters while its chunks evaluate (``storage.progress``).

``runs.done`` is what a status poll shows. It only grows, and it counts
each unit once, because it is the sum of the chunks' ``items``:

* a running chunk reports how many of its units are done (throttled by the
  worker, ``pipeline/progress.py``); ``items`` keeps the highest count any
  attempt reported, capped at ``units - 1``, and ``done`` grows by what
  ``items`` gained;
* finishing a chunk (``finish_chunk``) sets ``items = units`` and adds the
  rest, once;
* a retried or redelivered chunk starts counting from zero again, but its
  reports add to ``done`` only beyond what an earlier attempt reached.

Every change reads and writes the chunk's row in one transaction that first
locks it with an UPDATE (a row lock on PostgreSQL, the write lock on SQLite),
so two workers on the same chunk never both count the same gain, and the run
is changed with ``SET done = done + n`` so workers on different chunks never
lose each other's updates. The chunk's row is always locked before the run's,
as in ``claim_chunks``, so these transactions cannot deadlock.
"""

from __future__ import annotations

from functools import cache
from typing import Any, cast

from sqlalchemy import ColumnElement, Row, Table, case, func, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection

from core import usage
from core.status import ACTIVE_RUN, ChunkState
from store.database import Repository
from store.models import JudgeUsage, Run, RunChunk, utcnow

_ACTIVE = [status.value for status in ACTIVE_RUN]


def lock_chunk(
    conn: Connection, run_id: str, chunk: int, *conditions: ColumnElement[bool]
) -> Row[int, int] | None:
    """Lock a chunk's row (refreshing its heartbeat) and return its
    ``items`` and ``units``; None when no row matches ``conditions``."""
    stmt = (
        update(RunChunk)
        .where(RunChunk.run_id == run_id, RunChunk.chunk == chunk, *conditions)
        .values(beat_at=utcnow())
        .returning(RunChunk.items, RunChunk.units)
    )
    return conn.execute(stmt).first()


def held_by(lease: int) -> list[ColumnElement[bool]]:
    """The conditions of a chunk running under the lease ``lease``."""
    return [RunChunk.state == ChunkState.RUNNING.value, RunChunk.lease == lease]


def add_to_run(conn: Connection, run_id: str, **increments: int) -> None:
    """``SET x = x + n`` on the run for every nonzero increment; the judge
    counters per model (``core.usage.key``) go to ``judge_usage``."""
    own, models = usage.split(increments)
    values: dict[str, Any] = {
        name: getattr(Run, name) + n for name, n in own.items() if n
    }
    moved = values or any(any(counts.values()) for counts in models.values())
    if moved:  # no longer stalled (pipeline/stalls.py)
        values.update(moved_at=utcnow(), stall=None)
        conn.execute(update(Run).where(Run.id == run_id).values(**values))
    for model, counts in models.items():
        add_judge_usage(conn, run_id, model, counts)


def add_judge_usage(
    conn: Connection, run_id: str, model: str, counts: dict[str, int]
) -> None:
    """Insert the model's row, or add to it (``SET x = x + n``)."""
    values = {field: int(counts.get(field, 0)) for field in usage.FIELDS}
    stmt = _usage_upsert(conn.dialect.name)
    conn.execute(stmt, {"run_id": run_id, "model": model, **values})


@cache
def _usage_upsert(dialect: str) -> postgresql.Insert | sqlite.Insert:
    # built once per dialect (each chunk adds to its judges' usage): its
    # ``excluded`` alias cost more CPU than the write
    table = cast(Table, JudgeUsage.__table__)
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    stmt = insert(table)
    return stmt.on_conflict_do_update(
        index_elements=["run_id", "model"],
        set_={field: table.c[field] + stmt.excluded[field] for field in usage.FIELDS},
    )


class ProgressQueries(Repository):
    """A run's progress and its judge usage per model."""

    def judge_usage(self, run_id: str) -> dict[str, dict[str, int]]:
        """``{model: {field: n}}`` of a run, models in name order."""
        return self.judge_usage_of([run_id]).get(run_id, {})

    def judge_usage_of(
        self, run_ids: list[str]
    ) -> dict[str, dict[str, dict[str, int]]]:
        """``{run_id: {model: {field: n}}}`` of several runs, in one query."""
        table = JudgeUsage.__table__
        query = (
            select(table)
            .where(table.c.run_id.in_(list(run_ids)))
            .order_by(table.c.run_id, table.c.model)
        )
        found: dict[str, dict[str, dict[str, int]]] = {}
        with self.engine.connect() as conn:
            for row in conn.execute(query) if run_ids else ():
                counts = {field: getattr(row, field) for field in usage.FIELDS}
                found.setdefault(row.run_id, {})[row.model] = counts
        return found

    def workspace_usage(
        self, workspace_id: str | None, models: list[str], protocol: str
    ) -> dict[str, dict[str, int]]:
        """What ``models`` used over the finished runs of a workspace judged
        with the protocol of SHA-256 ``protocol`` (another protocol asks
        other modes with other prompts: its replies and cache say nothing of
        this one's), the history the estimate before a run reads
        (``pipeline/service/budget.py``); models with no such run absent. Per model:
        ``runs``, their ``calls`` and ``completion_tokens``; the runs sent
        online (``online_runs``: no request in a batch file) with their
        ``prompt_tokens`` and ``cached_tokens``; and the runs that sent
        batch files (``batch_runs``) with the ``batch_prompt_tokens`` and
        ``batch_cached_tokens`` of those files: a batch's prompt cache is
        not an online run's."""
        if workspace_id is None or not models:
            return {}
        table = JudgeUsage.__table__
        online = table.c.batch_calls == 0

        def online_sum(value: ColumnElement[int] | int) -> ColumnElement[int]:
            """The sum over the runs that sent no batch file."""
            return func.sum(case((online, value), else_=0))

        sums = {
            "runs": func.count(),
            "calls": func.sum(table.c.calls),
            "completion_tokens": func.sum(table.c.completion_tokens),
            "online_runs": online_sum(1),
            "prompt_tokens": online_sum(table.c.prompt_tokens),
            "cached_tokens": online_sum(table.c.cached_tokens),
            "batch_runs": func.count() - online_sum(1),
            "batch_prompt_tokens": func.sum(table.c.batch_prompt_tokens),
            "batch_cached_tokens": func.sum(table.c.batch_cached_tokens),
        }
        query = (
            select(table.c.model, *sums.values())
            .join(Run, Run.id == table.c.run_id)
            .where(Run.workspace_id == workspace_id, table.c.model.in_(models))
            .where(Run.status.in_(("done", "partial")), table.c.calls > 0)
            .where(Run.judge[("protocol", "sha256")].as_string() == protocol)
            .group_by(table.c.model)
        )
        with self.engine.connect() as conn:
            return {
                row[0]: dict(zip(sums, map(int, row[1:]), strict=True))
                for row in conn.execute(query)
            }

    def record_progress(
        self,
        run_id: str,
        chunk: int,
        units_done: int,
        lease: int | None = None,
        **counters: int,
    ) -> int:
        """A running chunk has ``units_done`` units done; ``counters`` are
        judge counters gained since the last report (``judge_calls``, ...),
        added as they are (the calls were made, whoever holds the chunk).
        Returns the units ``done`` gained (0 when the count is not above the
        chunk's high-water mark, the chunk is not running under ``lease``,
        or the run is no longer active)."""
        active = select(Run.id).where(Run.id == run_id, Run.status.in_(_ACTIVE))
        held = [] if lease is None else [RunChunk.lease == lease]
        with self.engine.begin() as conn:
            found = lock_chunk(
                conn,
                run_id,
                chunk,
                RunChunk.state == ChunkState.RUNNING.value,
                active.exists(),
                *held,
            )
            reached = min(units_done, found.units - 1) if found is not None else 0
            gained = max(reached - found.items, 0) if found is not None else 0
            if gained:
                conn.execute(
                    update(RunChunk)
                    .where(RunChunk.run_id == run_id, RunChunk.chunk == chunk)
                    .values(items=reached)
                )
            add_to_run(conn, run_id, done=gained, **counters)
        return gained
