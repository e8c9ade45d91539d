"""Results of record: one repository per kind of record, over one database.

SQLite under ``instance/`` by default, PostgreSQL when ``DATABASE_URL`` says so.
Workers may deliver a task twice (acks late, redelivery after a crash), so
every write is idempotent: result rows are upserted on their natural key
``(run, session, round, method, metric, sample)``, and progress counts a chunk
only the first time its completion is recorded.

A caller names the repository: ``storage.runs.get_run(run_id)``,
``storage.rows.upsert_rows(rows)``. Each is small (at most 20 public
methods, ``tests/store/test_storage_layout.py``) and typed.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, sessionmaker

from store import migrate
from store.annotations import AnnotationQueries
from store.annotator_links import LinkQueries
from store.budget import BudgetQueries
from store.call_claims import ClaimQueries
from store.chunks import ChunkQueries
from store.comparison import ComparisonQueries
from store.database import Database, Repository
from store.interim import InterimQueries
from store.judge_batches import BatchQueries
from store.judge_cache import CacheQueries, JudgeCache
from store.leases import LeaseQueries
from store.progress import ProgressQueries
from store.replies import ReplyQueries
from store.result_rows import RowQueries
from store.run_sessions import SessionQueries
from store.runs import RunQueries
from store.workspaces import WorkspaceQueries

__all__ = ["JudgeCache", "Repository", "Storage"]


class RunRepository(RunQueries, InterimQueries):
    """Runs, and the claims on their interim and final aggregation."""


class ChunkRepository(ChunkQueries, LeaseQueries, SessionQueries):
    """A run's chunks, their leases, and its session index."""


class JudgeCacheRepository(CacheQueries, ClaimQueries):
    """Cached verdicts and the claims on requests under way."""


class AnnotationRepository(AnnotationQueries, LinkQueries):
    """Annotation queues, their labels, and the annotators' links."""


class Storage:
    """The repositories over one database; usable from Flask views, Celery
    tasks and the CLI alike."""

    def __init__(self, url: str, **engine_options: Any) -> None:
        self.database = Database(url, **engine_options)
        self.runs = RunRepository(self.database)
        self.chunks = ChunkRepository(self.database)
        self.rows = RowQueries(self.database)
        self.replies = ReplyQueries(self.database)
        self.progress = ProgressQueries(self.database)
        self.judge_cache = JudgeCacheRepository(self.database)
        self.budget = BudgetQueries(self.database)
        self.comparisons = ComparisonQueries(self.database)
        self.annotations = AnnotationRepository(self.database)
        self.workspaces = WorkspaceQueries(self.database)
        self.batches = BatchQueries(self.database)

    @property
    def engine(self) -> Engine:
        return self.database.engine

    @property
    def session(self) -> sessionmaker[Session]:
        return self.database.session

    @property
    def dialect(self) -> str:
        return self.database.dialect

    def upgrade(self) -> None:
        """Create or upgrade the schema to the newest migration."""
        migrate.upgrade_if_needed(self.engine)
