"""store/judge_cache.py: what a cache put writes besides its entries."""

from __future__ import annotations

import re

from sqlalchemy import event

from store.models import Base, Run
from store.storage import JudgeCache

RUN_FIELDS = {
    "file_name": "f.jsonl",
    "file_sha256": "0" * 64,
    "upload_id": "u1",
    "sessions": 1,
    "rounds": 1,
    "methods": ["A"],
    "suites": ["alignment"],
    "status": "running",
}


def _referred_run_columns() -> set[str]:
    """The columns of ``runs`` that other tables' foreign keys name."""
    return {
        fk.column.name
        for table in Base.metadata.tables.values()
        for fk in table.foreign_keys
        if fk.column.table.name == Run.__tablename__
    }


def test_a_put_locks_its_run_on_sqlite_without_writing_a_referred_key(
    sqlite_storage,
):
    """SQLite: the put's lock against the run's deletion is a write to the
    run's row that changes nothing. It used to set ``id = id``: SQLite then
    checked every table whose foreign key names ``runs.id`` for rows (1.0 of
    the 1.1 ms of CPU a one-verdict put took, once per verdict a worker
    reads). Every run column a foreign key names stays out of its SET."""
    run = sqlite_storage.runs.create_run(**RUN_FIELDS)
    before = sqlite_storage.runs.get_run(run.id)
    updates: list[str] = []

    def seen(conn, cursor, statement, parameters, context, executemany):
        if statement.lstrip().upper().startswith("UPDATE RUNS "):
            updates.append(statement)

    event.listen(sqlite_storage.engine, "before_cursor_execute", seen)
    try:
        JudgeCache(sqlite_storage.judge_cache, run.id).put(
            [{"key": "k1", "prompt_version": "p", "parsed": {"total": 1}, "reply": "r"}]
        )
    finally:
        event.remove(sqlite_storage.engine, "before_cursor_execute", seen)

    assert len(updates) == 1  # the lock is a write: it takes the database's lock
    assigned = re.search(r"SET (.*) WHERE", updates[0], re.S)
    assert assigned is not None
    columns = {part.split("=")[0].strip() for part in assigned.group(1).split(",")}
    referred = _referred_run_columns()
    assert referred == {"id"}  # what the check below is about
    assert not columns & referred, updates[0]
    after = sqlite_storage.runs.get_run(run.id)
    assert (after.done, after.status, after.total) == (
        before.done,
        before.status,
        before.total,
    )
    assert list(sqlite_storage.judge_cache.cache_get(["k1"])) == ["k1"]
