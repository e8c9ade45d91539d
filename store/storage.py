"""Results of record: repository functions over the models in ``store.models``.

SQLite under ``instance/`` by default, PostgreSQL when ``DATABASE_URL`` says so.
Workers may deliver a task twice (acks late, redelivery after a crash), so
every write is idempotent: result rows are upserted on their natural key
``(run, session, round, method, metric, sample)``, and progress counts a chunk
only the first time its completion is recorded.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from sqlalchemy import create_engine, event, func, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import sessionmaker

from core.status import ACTIVE_RUN
from store import migrate
from store.annotations import AnnotationQueries
from store.annotator_links import LinkQueries
from store.budget import BudgetQueries
from store.call_claims import ClaimQueries
from store.chunks import ChunkQueries
from store.comparison import ComparisonQueries
from store.deletion import DeletionQueries
from store.interim import InterimQueries
from store.judge_cache import CacheQueries, JudgeCache
from store.leases import LeaseQueries
from store.models import (
    Run,
    RunSession,
    utcnow,
)
from store.progress import ProgressQueries, add_to_run
from store.result_rows import RowQueries
from store.sql import count_of_run
from store.workspaces import WorkspaceQueries, new_token

UNFINISHED = tuple(ACTIVE_RUN)
__all__ = ["JudgeCache", "Storage"]


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
    RowQueries,
    CacheQueries,
    ClaimQueries,
    ChunkQueries,
    LeaseQueries,
    ProgressQueries,
    BudgetQueries,
    WorkspaceQueries,
    DeletionQueries,
    ComparisonQueries,
    InterimQueries,
    AnnotationQueries,
    LinkQueries,
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

    def run_state(self, run_id: str) -> tuple[str, int, int] | None:
        """(status, done, total): what a poll of a run's progress reads, in
        one small query (the whole run through the ORM cost ~10x its CPU)."""
        query = select(Run.status, Run.done, Run.total).where(Run.id == run_id)
        with self.engine.connect() as conn:
            found = conn.execute(query).first()
        return None if found is None else (found[0], found[1], found[2])

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
        return count_of_run(self.session, RunSession, run_id)

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
