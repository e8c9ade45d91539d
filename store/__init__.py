"""The results of record: models, the storage repository, uploads on disk and
the schema migrations (Alembic through Flask-Migrate).

SQLite under ``instance/`` by default, PostgreSQL when ``DATABASE_URL`` says
so. ``flask --app app db upgrade`` creates or upgrades the schema; the
embedded default runs the upgrade itself when the storage is first used.
"""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from flask import Flask
    from sqlalchemy.engine import Engine
    from sqlalchemy.orm import Session, sessionmaker

    from store.budget import BudgetQueries
    from store.comparison import ComparisonQueries
    from store.judge_batches import BatchQueries
    from store.progress import ProgressQueries
    from store.replies import ReplyQueries
    from store.result_rows import RowQueries
    from store.storage import (
        AnnotationRepository,
        ChunkRepository,
        JudgeCacheRepository,
        RunRepository,
        Storage,
    )
    from store.workspaces import WorkspaceQueries


class StorageLike(Protocol):
    """What the rest of the product asks of a storage: the repositories, the
    engine, the sessions, the dialect and the upgrade. Both a
    :class:`store.storage.Storage` and a :class:`LazyStorage` are one (the
    app's is lazy; a worker's context, a test or a script may build the
    real one)."""

    @property
    def runs(self) -> RunRepository: ...
    @property
    def chunks(self) -> ChunkRepository: ...
    @property
    def rows(self) -> RowQueries: ...
    @property
    def replies(self) -> ReplyQueries: ...
    @property
    def progress(self) -> ProgressQueries: ...
    @property
    def judge_cache(self) -> JudgeCacheRepository: ...
    @property
    def budget(self) -> BudgetQueries: ...
    @property
    def comparisons(self) -> ComparisonQueries: ...
    @property
    def annotations(self) -> AnnotationRepository: ...
    @property
    def workspaces(self) -> WorkspaceQueries: ...
    @property
    def batches(self) -> BatchQueries: ...
    @property
    def engine(self) -> Engine: ...
    @property
    def session(self) -> sessionmaker[Session]: ...
    @property
    def dialect(self) -> str: ...
    def upgrade(self) -> None: ...


class LazyStorage:
    """The app's :class:`store.storage.Storage`, built on first use.

    SQLAlchemy takes a quarter of a second to import; commands that never
    touch the database (``flask validate``, ``--help``) do not pay for it.
    Its repositories are the real storage's.
    """

    def __init__(self, url: str, auto_upgrade: bool, lock_path: Path | None = None):
        self.url = url
        self.auto_upgrade = auto_upgrade
        # held while the schema is checked and upgraded: see :func:`_held`
        self.lock_path = lock_path
        self._storage: Storage | None = None
        self._lock = threading.Lock()

    @property
    def ready(self) -> bool:
        """Whether the storage has been made (a command may never need it)."""
        return self._storage is not None

    def get(self) -> Storage:
        with self._lock:
            if self._storage is None:
                from store.storage import Storage

                storage = Storage(self.url)
                if self.auto_upgrade:
                    with _held(self.lock_path):
                        storage.upgrade()
                self._storage = storage
            return self._storage

    # The repositories, typed, each the real storage's (made on first use).
    @property
    def runs(self) -> RunRepository:
        return self.get().runs

    @property
    def chunks(self) -> ChunkRepository:
        return self.get().chunks

    @property
    def rows(self) -> RowQueries:
        return self.get().rows

    @property
    def replies(self) -> ReplyQueries:
        return self.get().replies

    @property
    def progress(self) -> ProgressQueries:
        return self.get().progress

    @property
    def judge_cache(self) -> JudgeCacheRepository:
        return self.get().judge_cache

    @property
    def budget(self) -> BudgetQueries:
        return self.get().budget

    @property
    def comparisons(self) -> ComparisonQueries:
        return self.get().comparisons

    @property
    def annotations(self) -> AnnotationRepository:
        return self.get().annotations

    @property
    def workspaces(self) -> WorkspaceQueries:
        return self.get().workspaces

    @property
    def batches(self) -> BatchQueries:
        return self.get().batches

    @property
    def engine(self) -> Engine:
        return self.get().engine

    @property
    def session(self) -> sessionmaker[Session]:
        return self.get().session

    @property
    def dialect(self) -> str:
        return self.get().dialect

    def upgrade(self) -> None:
        self.get().upgrade()


@contextmanager
def _held(path: Path | None) -> Iterator[None]:
    """An exclusive lock on ``path`` for the block. The processes of one
    instance may make their storage at the same moment: ``flask evaluate``
    and the worker it starts at once both upgrade a new database, and two
    upgrades at once would race (SQLite runs Alembic's DDL outside any
    transaction). One upgrades; the other waits, then finds the head. (A
    team's workers on several machines share no folder: there, ``flask db
    upgrade`` runs before they start, as the README says.)"""
    if path is None:
        yield
        return
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)  # and with it the lock


def init_app(app: Flask, instance: Path) -> LazyStorage:
    """``app.extensions["storage"]`` and the ``flask db`` commands;
    ``instance``: the instance folder, which holds the schema's lock."""
    from store import migrate

    lock_path = instance / "schema.lock"
    storage = LazyStorage(
        app.config["DATABASE_URL"], app.config["DB_AUTO_UPGRADE"], lock_path
    )
    app.extensions["storage"] = storage
    migrate.init_app(app, storage)
    return storage
