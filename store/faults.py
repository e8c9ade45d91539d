"""What a database error means to the reader of a page (loaded without
SQLAlchemy: the web app's error handler asks, and the light CLI commands
load neither)."""

from __future__ import annotations

import errno

SQLITE_FULL = 13  # "database or disk is full"
PG_DISK_FULL = "53100"  # SQLSTATE disk_full: "could not extend file"
# what SQLAlchemy and the drivers raise when the database cannot answer now
UNAVAILABLE = ("OperationalError", "InterfaceError", "DisconnectionError")
DATABASE_MODULES = ("sqlalchemy", "psycopg", "psycopg2", "sqlite3")


def disk_full(error: BaseException | None) -> bool:
    """Whether ``error`` (SQLAlchemy's, or the driver's inside it) says the
    database's disk is full: SQLite's SQLITE_FULL, PostgreSQL's disk_full;
    or a file's (ENOSPC).

    >>> import sqlite3
    >>> full = sqlite3.OperationalError("database or disk is full")
    >>> full.sqlite_errorcode = SQLITE_FULL
    >>> disk_full(full), disk_full(ValueError("x")), disk_full(None)
    (True, False, False)
    >>> disk_full(OSError(errno.ENOSPC, "No space left on device"))
    True
    """
    cause = getattr(error, "orig", None) or error
    if isinstance(cause, OSError) and cause.errno == errno.ENOSPC:
        return True
    code = getattr(cause, "sqlite_errorcode", None)
    if isinstance(code, int) and code & 0xFF == SQLITE_FULL:  # or an extended one
        return True
    state = getattr(cause, "sqlstate", None) or getattr(cause, "pgcode", None)
    return state == PG_DISK_FULL


def database_unavailable(error: BaseException | None) -> bool:
    """Whether ``error`` says the database cannot answer now: it is down or
    restarting, the connection was lost, SQLite's file is locked past the
    busy timeout (SQLAlchemy's ``OperationalError``, ``InterfaceError`` or
    ``DisconnectionError``, or the driver's own). An error of the statement
    (``IntegrityError``, ``ProgrammingError``, ...) is not.

    >>> import sqlite3
    >>> database_unavailable(sqlite3.OperationalError("database is locked"))
    True
    >>> database_unavailable(sqlite3.IntegrityError("UNIQUE constraint failed"))
    False
    >>> database_unavailable(ValueError("x")), database_unavailable(None)
    (False, False)
    """
    if error is None:
        return False
    return any(
        kind.__name__ in UNAVAILABLE
        and kind.__module__.partition(".")[0] in DATABASE_MODULES
        for kind in type(error).__mro__
    )
