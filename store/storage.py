"""Results of record: repository functions over the models in ``store.models``.

SQLite under ``instance/`` by default, PostgreSQL when ``DATABASE_URL`` says so.
Workers may deliver a task twice (acks late, redelivery after a crash), so
every write is idempotent: result rows are upserted on their natural key
``(run, session, round, method, metric, sample)``, and progress counts a chunk
only the first time its completion is recorded.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterable, Iterator
from itertools import islice
from typing import cast

from sqlalchemy import Table, create_engine, event, func, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import sessionmaker

from core.status import ACTIVE_RUN
from store import migrate
from store.annotations import AnnotationQueries
from store.budget import BudgetQueries
from store.chunks import ChunkQueries
from store.comparison import ComparisonQueries
from store.deletion import DeletionQueries
from store.interim import InterimQueries
from store.models import (
    ROW_DICT_FIELDS,
    ROW_KEY,
    Base,
    JudgeCacheEntry,
    ResultRow,
    Run,
    RunCacheKey,
    RunSession,
    utcnow,
)
from store.progress import ProgressQueries, add_to_run
from store.suite_rows import key_ordered
from store.workspaces import WorkspaceQueries, new_token

UNFINISHED = tuple(ACTIVE_RUN)
ROW_FILTERS = ("session_id", "method", "metric", "status", "judge")
ROW_SORTS = ("session_id", "round", "method", "metric", "judge", "value", "status")
ROW_DEFAULTS = {
    "sample": 0,
    "judge": "",
    "note": None,
    "detail": None,
    "note_code": None,
    "note_params": None,
}


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    # WAL lets the web thread read while the embedded worker writes.
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    # WAL + NORMAL: no corruption on a crash, only the last commits may roll
    # back on power loss, and an interrupted run resumes those chunks.
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


class Storage(
    ChunkQueries,
    ProgressQueries,
    BudgetQueries,
    WorkspaceQueries,
    DeletionQueries,
    ComparisonQueries,
    InterimQueries,
    AnnotationQueries,
):
    """Engine + repository functions; usable from Flask views and Celery tasks."""

    def __init__(self, url: str, **engine_options):
        self.engine = create_engine(url, pool_pre_ping=True, **engine_options)
        if self.engine.dialect.name == "sqlite":
            event.listen(self.engine, "connect", _sqlite_pragmas)
        self.session = sessionmaker(self.engine, expire_on_commit=False)
        self._insert = (
            postgresql.insert if self.dialect == "postgresql" else sqlite.insert
        )

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    def upgrade(self) -> None:
        """Create or upgrade the schema to the newest migration."""
        migrate.upgrade_if_needed(self.engine)

    # -- runs --------------------------------------------------------------
    def create_run(self, **fields) -> Run:
        """A new run with its view ``token`` and its ``manage_token``."""
        fields.setdefault("manage_token", new_token())
        run = Run(id=uuid.uuid4().hex, token=new_token(), **fields)
        with self.session.begin() as db:
            db.add(run)
        return run

    def get_run(self, run_id: str) -> Run | None:
        with self.session() as db:
            return db.get(Run, run_id)

    def get_run_by_token(self, token: str) -> Run | None:
        with self.session() as db:
            return db.scalars(select(Run).where(Run.token == token)).first()

    def active_retries(self, run_id: str) -> int:
        """Retries of a run that are still queued or running."""
        query = select(func.count()).where(
            Run.retry_of == run_id, Run.status.in_(UNFINISHED)
        )
        with self.engine.connect() as conn:
            return conn.execute(query).scalar_one()

    def unfinished_runs(self, created_before=None) -> list[Run]:
        query = select(Run).where(Run.status.in_(UNFINISHED))
        if created_before is not None:
            query = query.where(Run.created_at < created_before)
        with self.session() as db:
            return list(db.scalars(query.order_by(Run.created_at)))

    def set_status(self, run_id: str, status: str, **fields) -> None:
        if status not in UNFINISHED:
            fields.setdefault("finished_at", utcnow())
        with self.session.begin() as db:
            db.execute(
                update(Run).where(Run.id == run_id).values(status=status, **fields)
            )

    def add_counters(self, run_id: str, **increments: int) -> None:
        """Atomic ``SET x = x + n`` so concurrent workers never lose an update
        (judge counters per model included, ``store/progress.py``)."""
        with self.engine.begin() as conn:
            add_to_run(conn, run_id, **increments)

    # -- result rows -------------------------------------------------------
    def upsert_rows(self, rows: Iterable[dict], batch: int = 2000) -> int:
        """Insert or replace rows on their natural key, in one transaction,
        ``batch`` rows per statement (a statement's parameters stay small)."""
        # Core, not the ORM: bulk writes are the hot path of every chunk.
        stmt = self._insert(_table(ResultRow))
        changing = ("value", "status", "note", "detail", "note_code", "note_params")
        stmt = stmt.on_conflict_do_update(
            index_elements=list(ROW_KEY),
            set_={name: stmt.excluded[name] for name in changing},
        )
        written = 0
        with self.engine.begin() as conn:
            for part in batched(rows, batch):
                conn.execute(
                    stmt,
                    [{**ROW_DEFAULTS, **row} for row in part],
                )
                written += len(part)
        return written

    def rows(self, run_id: str, **filters) -> list[ResultRow]:
        query = select(ResultRow).where(ResultRow.run_id == run_id)
        for name, value in filters.items():
            query = query.where(getattr(ResultRow, name) == value)
        query = query.order_by(*(getattr(ResultRow, name) for name in ROW_KEY[1:]))
        with self.session() as db:
            return list(db.scalars(query))

    def count_rows(self, run_id: str) -> int:
        query = (
            select(func.count())
            .select_from(ResultRow)
            .where(ResultRow.run_id == run_id)
        )
        with self.session() as db:
            return db.execute(query).scalar_one()

    def run_status_counts(self, run) -> dict[str, int]:
        """Stored at finalize for finished runs (a GROUP BY over millions of
        rows costs a second); counted live while the run is in progress."""
        stored = (run.aggregates or {}).get("status_counts")
        return stored if stored is not None else self.status_counts(run.id)

    def status_counts(self, run_id: str) -> dict[str, int]:
        query = (
            select(ResultRow.status, func.count())
            .where(ResultRow.run_id == run_id)
            .group_by(ResultRow.status)
        )
        with self.session() as db:
            return dict(db.execute(query).all())

    def update_run(self, run_id: str, **fields) -> None:
        with self.session.begin() as db:
            db.execute(update(Run).where(Run.id == run_id).values(**fields))

    def _row_query(self, run_id: str, filters: dict):
        query = select(*(getattr(ResultRow, name) for name in ROW_DICT_FIELDS))
        query = query.where(ResultRow.run_id == run_id)
        for name in ROW_FILTERS:
            if filters.get(name):
                query = query.where(getattr(ResultRow, name) == filters[name])
        # a score range (numbers; a row without a value is outside any range)
        if filters.get("value_min") is not None:
            query = query.where(ResultRow.value >= filters["value_min"])
        if filters.get("value_max") is not None:
            query = query.where(ResultRow.value <= filters["value_max"])
        return query

    def rows_page(
        self,
        run_id: str,
        filters: dict,
        offset: int,
        limit: int,
        order: tuple[str, bool] | None = None,
    ) -> list[dict]:
        """One page of rows; ``order`` = (a ``ROW_SORTS`` column, descending),
        then the row key, with missing values last either way."""
        query = self._row_query(run_id, filters)
        keys = [getattr(ResultRow, name) for name in ROW_KEY[1:]]
        if order and order[0] in ROW_SORTS:
            column = getattr(ResultRow, order[0])
            first = column.desc() if order[1] else column.asc()
            keys.insert(0, first.nulls_last())
        query = query.order_by(*keys)
        with self.engine.connect() as conn:
            found = conn.execute(query.offset(offset).limit(limit))
            return [dict(zip(ROW_DICT_FIELDS, values, strict=True)) for values in found]

    def count_filtered_rows(self, run_id: str, filters: dict) -> int:
        query = select(func.count()).select_from(
            self._row_query(run_id, filters).subquery()
        )
        with self.session() as db:
            return db.execute(query).scalar_one()

    def iter_rows(
        self, run_id: str, metrics=None, batch: int = 5000, detail: bool = True
    ) -> Iterator[dict]:
        """Every row in key order, streamed (exports of large runs). With
        ``metrics`` (metric objects with ``id`` and ``keyed``), only theirs:
        a suite reads its own rows. ``detail=False`` leaves the JSON details
        out (``None``): summaries of values need not load them."""
        fields = (
            ROW_DICT_FIELDS
            if detail
            else tuple(f for f in ROW_DICT_FIELDS if f != "detail")
        )
        query = key_ordered(
            run_id, [getattr(ResultRow, name) for name in fields], metrics
        )
        with self.engine.connect() as conn:
            for values in conn.execute(query.execution_options(yield_per=batch)):
                row = dict(zip(fields, values, strict=True))
                row.setdefault("detail", None)
                yield row

    # -- session index -----------------------------------------------------
    def record_sessions(
        self, run_id: str, spans: Iterable[tuple[int, str, int, int]]
    ) -> None:
        entries = [
            {"run_id": run_id, "position": p, "session_id": s, "start": a, "end": b}
            for p, s, a, b in spans
        ]
        if entries:
            stmt = self._insert(RunSession).on_conflict_do_nothing(
                index_elements=["run_id", "session_id"]
            )
            with self.session.begin() as db:
                db.execute(stmt, entries)

    def sessions_page(self, run_id: str, offset: int, limit: int) -> list[str]:
        query = (
            select(RunSession.session_id)
            .where(RunSession.run_id == run_id)
            .order_by(RunSession.position)
            .offset(offset)
            .limit(limit)
        )
        with self.session() as db:
            return list(db.scalars(query))

    def count_sessions(self, run_id: str) -> int:
        query = (
            select(func.count())
            .select_from(RunSession)
            .where(RunSession.run_id == run_id)
        )
        with self.session() as db:
            return db.execute(query).scalar_one()

    def session_span(self, run_id: str, session_id: str) -> tuple[int, int] | None:
        query = select(RunSession.start, RunSession.end).where(
            RunSession.run_id == run_id, RunSession.session_id == session_id
        )
        with self.session() as db:
            found = db.execute(query).first()
        if not found:
            return None
        start, end = found
        return start, end

    # -- judge cache -------------------------------------------------------
    def cache_get(self, keys: Iterable[str]) -> dict:
        """``{key: row}``; rows carry ``.reply`` and ``.parsed`` (Core rows:
        no ORM identity map for thousands of cache hits per chunk)."""
        keys = list(set(keys))
        if not keys:
            return {}
        table = JudgeCacheEntry.__table__
        query = select(table.c.key, table.c.reply, table.c.parsed).where(
            table.c.key.in_(keys)
        )
        with self.engine.connect() as conn:
            return {row.key: row for row in conn.execute(query)}

    def cache_put(self, entries: Iterable[dict], run_id: str | None = None) -> None:
        """Store verdicts; with ``run_id``, together with the run's record of
        them, in one transaction that first locks the run: a run deleted
        meanwhile gets no entries (none is left behind without an owner)."""
        entries = list(entries)
        if not entries:
            return
        stmt = self._insert(_table(JudgeCacheEntry)).on_conflict_do_nothing(
            index_elements=["key"]
        )
        with self.engine.begin() as conn:
            if run_id is not None and not _run_alive(conn, run_id):
                return  # deleted: nothing of it is written
            conn.execute(stmt, entries)
            if run_id is not None:
                keys = [
                    {"run_id": run_id, "key": key}
                    for key in {e["key"] for e in entries}
                ]
                owned = self._insert(_table(RunCacheKey)).on_conflict_do_nothing(
                    index_elements=["run_id", "key"]
                )
                conn.execute(owned, keys)


def _run_alive(conn, run_id: str) -> bool:
    """Whether the run exists, locked against its deletion until the
    transaction ends. PostgreSQL: FOR KEY SHARE, which waits for a deletion
    but not for the progress updates that lock the run's row all the time;
    SQLite: a write, which takes the database's write lock first."""
    if conn.dialect.name == "postgresql":
        query = select(Run.id).where(Run.id == run_id).with_for_update(key_share=True)
        return conn.execute(query).first() is not None
    touch = update(Run).where(Run.id == run_id).values(id=Run.id)
    return conn.execute(touch).rowcount > 0


def _table(model: type[Base]) -> Table:
    """The model's table. Every model here is mapped to a ``Table``; SQLAlchemy
    types ``__table__`` as any ``FromClause`` (a model may map a subquery)."""
    return cast(Table, model.__table__)


def batched(items: Iterable, size: int) -> Iterator[list]:
    """Lists of up to ``size`` items (``itertools.batched`` is Python 3.12+)."""
    iterator = iter(items)
    while part := list(islice(iterator, size)):
        yield part


class JudgeCache:
    """The judge's view of the cache: ``get(keys)`` and ``put(entries)``.
    With a ``run_id``, the entries the run wrote or read are recorded, so
    deleting the run can delete the ones no other run used.

    Entries are kept per ``scope`` (the run's workspace, else its client):
    a verdict cached for one team is never served to another, so nobody
    learns from hit counts which items someone else had judged."""

    def __init__(self, storage: Storage, run_id: str | None = None, scope: str = ""):
        self.storage, self.run_id, self.scope = storage, run_id, scope

    def _scoped(self, key: str) -> str:
        if not self.scope:
            return key
        return hashlib.sha256(f"{self.scope}\n{key}".encode()).hexdigest()

    def get(self, keys: Iterable[str]) -> dict:
        scoped = {self._scoped(key): key for key in keys}
        found = self.storage.cache_get(scoped)
        if self.run_id and found:
            self.storage.record_cache_keys(self.run_id, found)
        return {scoped[key]: entry for key, entry in found.items()}

    def put(self, entries: Iterable[dict]) -> None:
        scoped = [{**entry, "key": self._scoped(entry["key"])} for entry in entries]
        self.storage.cache_put(scoped, self.run_id)
