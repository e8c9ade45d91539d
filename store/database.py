"""One database for every repository: its engine, its sessions and the
dialect's ``INSERT … ON CONFLICT``.

SQLite under ``instance/`` by default, PostgreSQL when ``DATABASE_URL`` says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from sqlalchemy import Table, create_engine, event
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, sessionmaker

if TYPE_CHECKING:
    from store.models import Base


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # WAL lets the web thread read while the embedded worker writes.
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    # WAL + NORMAL: no corruption on a crash, only the last commits may roll
    # back on power loss, and an interrupted run resumes those chunks.
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


class Database:
    """The engine and the session factory the repositories share."""

    def __init__(self, url: str, **engine_options: Any) -> None:
        self.engine: Engine = create_engine(url, pool_pre_ping=True, **engine_options)
        if self.engine.dialect.name == "sqlite":
            event.listen(self.engine, "connect", _sqlite_pragmas)
        self.session: sessionmaker[Session] = sessionmaker(
            self.engine, expire_on_commit=False
        )

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    def insert(self, table: Table | type[Base]) -> postgresql.Insert | sqlite.Insert:
        """The dialect's INSERT, which has ``on_conflict_do_update`` and
        ``on_conflict_do_nothing`` (SQLAlchemy's generic one has neither)."""
        if self.dialect == "postgresql":
            return postgresql.insert(table)
        return sqlite.insert(table)

    def upsert(
        self, table: Table, key: Sequence[str], changing: Sequence[str]
    ) -> postgresql.Insert | sqlite.Insert:
        """``INSERT … ON CONFLICT (key) DO UPDATE`` setting each of
        ``changing`` to the new row's, for rows given at execution."""
        return _upsert(self.dialect, table, tuple(key), tuple(changing))


@lru_cache(maxsize=64)
def _upsert(
    dialect: str, table: Table, key: tuple[str, ...], changing: tuple[str, ...]
) -> postgresql.Insert | sqlite.Insert:
    # built once: its ``excluded`` alias cost a chunk's writes more CPU than
    # executing them
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    stmt = insert(table)
    return stmt.on_conflict_do_update(
        index_elements=list(key),
        set_={name: stmt.excluded[name] for name in changing},
    )


class Repository:
    """A repository reads and writes a few tables of one :class:`Database`."""

    def __init__(self, database: Database) -> None:
        self.database = database
        self.engine = database.engine
        self.session = database.session
        self._insert = database.insert
