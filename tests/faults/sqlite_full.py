"""A SQLite database made full, and freed again, from outside the process
that writes it, without a mount.

``PRAGMA max_page_count`` holds for the connection that sets it, so the
switch is installed on the writing process's engine: at every checkout a
connection sets it from a flag file. While the flag exists the database may
not grow (``max_page_count`` cannot go below the file's size, so 1 means
"as big as it is now"): SQLite itself refuses the next write that needs a
new page with ``database or disk is full``. A full disk refuses more than
that: in WAL mode every commit appends to the log, so a write that fits in
the database's pages (an update, a delete) fails too. The switch refuses
those with SQLite's same error (``SQLITE_FULL``) before they are sent.
Reads are served. Without the flag a connection is back at SQLite's own
ceiling, read once per connection.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine

SQLITE_FULL = 13
WRITES = {"INSERT", "UPDATE", "DELETE", "REPLACE"}


class FullSwitch:
    def __init__(self, flag: Path):
        self.flag = flag
        # touched at each write refused: the fault has hit the writer
        self.refused = flag.with_name(flag.name + ".refused")

    def install(self, engine: Engine) -> None:
        """On ``engine`` (call it in the process that writes)."""
        event.listen(engine, "checkout", self._checkout)
        event.listen(engine, "before_cursor_execute", self._before_execute)

    def fill(self) -> None:
        self.refused.unlink(missing_ok=True)
        self.flag.touch()

    def wait_refused(self, timeout: float) -> None:
        """Until a write was refused since :meth:`fill`."""
        deadline = time.monotonic() + timeout
        while not self.refused.exists():
            assert time.monotonic() < deadline, "no write was refused"
            time.sleep(0.05)

    def free(self) -> None:
        self.flag.unlink(missing_ok=True)

    def _checkout(self, dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        cursor = dbapi_connection.cursor()
        try:
            if "max_page_count" not in record.info:
                (ceiling,) = cursor.execute("PRAGMA max_page_count").fetchone()
                record.info["max_page_count"] = int(ceiling)
            pages = 1 if self.flag.exists() else record.info["max_page_count"]
            cursor.execute(f"PRAGMA max_page_count = {pages:d}")
        finally:
            cursor.close()

    def _before_execute(self, _conn, _cursor, statement: str, *_rest: Any) -> None:
        words = statement.split(None, 1)
        if words and words[0].upper() in WRITES and self.flag.exists():
            self.refused.touch()
            full = sqlite3.OperationalError("database or disk is full")
            full.sqlite_errorcode = SQLITE_FULL
            raise full
