"""Results of record: SQLAlchemy 2 models and repository functions.

SQLite under ``instance/`` by default, PostgreSQL when ``DATABASE_URL`` says so.
Workers may deliver a task twice (acks late, redelivery after a crash), so
every write is idempotent: result rows are upserted on their natural key
``(run, session, round, method, metric, sample)``, and progress counts a chunk
only the first time its completion is recorded.

Session-level rows have no round; they are stored with ``round = 0`` because a
SQL unique constraint treats NULLs as distinct (the results format maps 0 back
to null).
"""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import ClassVar

from sqlalchemy import (
    JSON,
    BigInteger,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
    create_engine,
    event,
    func,
    select,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, sessionmaker

JSONType = JSON().with_variant(JSONB(), "postgresql")
ROW_KEY = ("run_id", "session_id", "round", "method", "metric", "sample")
RUN_COUNTERS = ("judge_calls", "cache_hits", "prompt_tokens", "completion_tokens")
UNFINISHED = ("queued", "running")
ROW_DICT_FIELDS = (
    "session_id",
    "round",
    "method",
    "metric",
    "sample",
    "value",
    "status",
    "note",
    "detail",
)


def utcnow() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    type_annotation_map: ClassVar = {dict: JSONType, list: JSONType}


class Run(Base):
    __tablename__ = "runs"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    token: Mapped[str] = mapped_column(String(64), unique=True)
    status: Mapped[str] = mapped_column(String(16), default="queued")
    created_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), default=utcnow
    )
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    file_name: Mapped[str] = mapped_column(String(255))
    file_sha256: Mapped[str] = mapped_column(String(64))
    upload_id: Mapped[str] = mapped_column(String(64))
    sessions: Mapped[int] = mapped_column(Integer, default=0)
    rounds: Mapped[int] = mapped_column(Integer, default=0)
    methods: Mapped[list] = mapped_column(default=list)
    suites: Mapped[list] = mapped_column(default=list)
    judge: Mapped[dict | None] = mapped_column()
    options: Mapped[dict] = mapped_column(default=dict)
    done: Mapped[int] = mapped_column(Integer, default=0)
    total: Mapped[int] = mapped_column(Integer, default=0)
    judge_calls: Mapped[int] = mapped_column(BigInteger, default=0)
    cache_hits: Mapped[int] = mapped_column(BigInteger, default=0)
    prompt_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    completion_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    aggregates: Mapped[dict | None] = mapped_column()
    error: Mapped[str | None] = mapped_column(Text)


class ResultRow(Base):
    __tablename__ = "result_rows"
    __table_args__ = (UniqueConstraint(*ROW_KEY, name="uq_result_row"),)

    id: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer, "sqlite"),
        primary_key=True,
        autoincrement=True,
    )
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    session_id: Mapped[str] = mapped_column(String(255))
    round: Mapped[int] = mapped_column(Integer)
    method: Mapped[str] = mapped_column(String(255))
    metric: Mapped[str] = mapped_column(String(128))
    sample: Mapped[int] = mapped_column(Integer, default=0)
    value: Mapped[float | None] = mapped_column(Float)
    status: Mapped[str] = mapped_column(String(16))
    note: Mapped[str | None] = mapped_column(Text)
    detail: Mapped[dict | None] = mapped_column()


class RunChunk(Base):
    """One row per finished chunk: makes progress counting idempotent."""

    __tablename__ = "run_chunks"
    __table_args__ = (UniqueConstraint("run_id", "chunk", name="uq_run_chunk"),)

    id: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer, "sqlite"),
        primary_key=True,
        autoincrement=True,
    )
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    chunk: Mapped[int] = mapped_column(Integer)
    items: Mapped[int] = mapped_column(Integer)


class JudgeCacheEntry(Base):
    __tablename__ = "judge_cache"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    prompt_version: Mapped[str] = mapped_column(String(64))
    reply: Mapped[str] = mapped_column(Text)
    parsed: Mapped[dict] = mapped_column()
    prompt_tokens: Mapped[int] = mapped_column(Integer, default=0)
    completion_tokens: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), default=utcnow
    )


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    # WAL lets the web thread read while the embedded worker writes.
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


class Storage:
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

    def create_all(self) -> None:
        Base.metadata.create_all(self.engine)

    # -- runs --------------------------------------------------------------
    def create_run(self, **fields) -> Run:
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

    def unfinished_runs(self) -> list[Run]:
        with self.session() as db:
            return list(db.scalars(select(Run).where(Run.status.in_(UNFINISHED))))

    def set_status(self, run_id: str, status: str, **fields) -> None:
        if status not in UNFINISHED:
            fields.setdefault("finished_at", utcnow())
        with self.session.begin() as db:
            db.execute(
                update(Run).where(Run.id == run_id).values(status=status, **fields)
            )

    def add_counters(self, run_id: str, **increments: int) -> None:
        """Atomic ``SET x = x + n`` so concurrent workers never lose an update."""
        values = {name: getattr(Run, name) + n for name, n in increments.items() if n}
        if values:
            with self.session.begin() as db:
                db.execute(update(Run).where(Run.id == run_id).values(**values))

    def finish_chunk(self, run_id: str, chunk: int, items: int) -> bool:
        """Record a finished chunk once; returns False for a redelivered chunk."""
        stmt = self._insert(RunChunk).values(run_id=run_id, chunk=chunk, items=items)
        stmt = stmt.on_conflict_do_nothing(index_elements=["run_id", "chunk"])
        with self.session.begin() as db:
            inserted = db.execute(stmt.returning(RunChunk.id)).first() is not None
            if inserted:
                db.execute(
                    update(Run).where(Run.id == run_id).values(done=Run.done + items)
                )
        return inserted

    # -- result rows -------------------------------------------------------
    def upsert_rows(self, rows: Iterable[dict]) -> int:
        rows = [{"sample": 0, "note": None, "detail": None, **row} for row in rows]
        if not rows:
            return 0
        stmt = self._insert(ResultRow)
        changing = ("value", "status", "note", "detail")
        stmt = stmt.on_conflict_do_update(
            index_elements=list(ROW_KEY),
            set_={name: stmt.excluded[name] for name in changing},
        )
        with self.session.begin() as db:
            db.execute(stmt, rows)
        return len(rows)

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
            return db.scalar(query)

    def row_dicts(self, run_id: str) -> list[dict]:
        """Rows as plain dicts for metric code (round 0 = session level)."""
        columns = [getattr(ResultRow, name) for name in ROW_DICT_FIELDS]
        query = select(*columns).where(ResultRow.run_id == run_id)
        query = query.order_by(*(getattr(ResultRow, name) for name in ROW_KEY[1:]))
        with self.session() as db:
            return [
                dict(zip(ROW_DICT_FIELDS, values, strict=True))
                for values in db.execute(query)
            ]

    def status_counts(self, run_id: str) -> dict[str, int]:
        query = (
            select(ResultRow.status, func.count())
            .where(ResultRow.run_id == run_id)
            .group_by(ResultRow.status)
        )
        with self.session() as db:
            return dict(db.execute(query).all())

    def finished_chunks(self, run_id: str) -> set[int]:
        query = select(RunChunk.chunk).where(RunChunk.run_id == run_id)
        with self.session() as db:
            return set(db.scalars(query))

    def update_run(self, run_id: str, **fields) -> None:
        with self.session.begin() as db:
            db.execute(update(Run).where(Run.id == run_id).values(**fields))

    def reset_progress(self, run_id: str) -> None:
        """Forget chunk bookkeeping (used when rows are to be recomputed)."""
        with self.session.begin() as db:
            db.execute(RunChunk.__table__.delete().where(RunChunk.run_id == run_id))
            db.execute(update(Run).where(Run.id == run_id).values(done=0))

    # -- judge cache -------------------------------------------------------
    def cache_get(self, keys: Iterable[str]) -> dict[str, JudgeCacheEntry]:
        keys = list(set(keys))
        if not keys:
            return {}
        with self.session() as db:
            found = db.scalars(
                select(JudgeCacheEntry).where(JudgeCacheEntry.key.in_(keys))
            )
            return {entry.key: entry for entry in found}

    def cache_put(self, entries: Iterable[dict]) -> None:
        entries = list(entries)
        if entries:
            stmt = self._insert(JudgeCacheEntry).on_conflict_do_nothing(
                index_elements=["key"]
            )
            with self.session.begin() as db:
                db.execute(stmt, entries)


class JudgeCache:
    """The judge's view of the cache: ``get(keys)`` and ``put(entries)``."""

    def __init__(self, storage: Storage):
        self.get = storage.cache_get
        self.put = storage.cache_put


def new_token() -> str:
    """Share tokens: 24 random bytes (192 bits), URL-safe, never sequential."""
    return secrets.token_urlsafe(24)


def init_app(app) -> Storage:
    storage = Storage(app.config["DATABASE_URL"])
    storage.create_all()
    app.extensions["storage"] = storage
    return storage
