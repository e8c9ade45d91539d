"""Deleting a run or a workspace, leaving nothing of it behind.

A run takes with it its rows, chunks and session index (``ON DELETE
CASCADE``, and explicitly, so a SQLite connection without foreign keys
loses nothing either), the judge cache entries no other run wrote or read
(``run_cache_keys``), the judge exchanges' texts no other run's exchange
names (``store/replies.py``), the stored comparisons that read it, and its
upload file unless another run (a retry, a second upload of the same bytes)
still reads it. A workspace takes its runs.

The rows go in one transaction; the file goes after it commits, so a
failed deletion never leaves a run whose file is gone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, cast

from sqlalchemy import Table, delete, exists, func, select
from sqlalchemy.engine import Connection, Engine

from store.annotations import delete_annotations_of
from store.batch_models import BatchAnswer, BatchRequest, BatchRun, JudgeBatch
from store.comparison import delete_comparisons_of
from store.exchange_models import JudgeExchange
from store.models import (
    DeletedTotals,
    JudgeCacheEntry,
    JudgeUsage,
    ResultRow,
    Run,
    RunCacheKey,
    RunChunk,
    RunSession,
    Workspace,
    WorkspaceCalls,
)
from store.replies import delete_exchanges_of
from store.uploads import upload_path

OWNED_BY_RUN = (
    ResultRow,
    RunChunk,
    RunSession,
    JudgeUsage,
    JudgeExchange,
    BatchRun,
    JudgeBatch,
    BatchAnswer,
    BatchRequest,
)


class Deleted(Protocol):
    """What deleting a run needs of it (a ``Run``, or a row of two columns)."""

    id: str
    upload_id: str


def delete_run(engine: Engine, run: Deleted, upload_folder: str | Path) -> None:
    with engine.begin() as conn:
        _delete_run_records(conn, run.id)
        still_read = conn.execute(
            select(exists().where(Run.upload_id == run.upload_id))
        ).scalar_one()
    if not still_read:
        upload_path(upload_folder, run.upload_id).unlink(missing_ok=True)


def delete_workspace(
    engine: Engine, workspace: Workspace, upload_folder: str | Path
) -> None:
    query = select(Run.id, Run.upload_id).where(Run.workspace_id == workspace.id)
    with engine.connect() as conn:
        runs = list(conn.execute(query))
    for run in runs:
        delete_run(engine, run, upload_folder)
    with engine.begin() as conn:
        conn.execute(
            delete(WorkspaceCalls).where(WorkspaceCalls.workspace_id == workspace.id)
        )
        conn.execute(delete(Workspace).where(Workspace.id == workspace.id))


COUNTED = ("judge_calls", "cache_hits", "prompt_tokens", "completion_tokens")


def _keep_counts(conn: Connection, run_id: str) -> None:
    """Add the run's counters to the deleted runs' totals (same transaction)."""
    found = conn.execute(
        select(*(getattr(Run, name) for name in COUNTED)).where(Run.id == run_id)
    ).first()
    if found is None:
        return
    table = cast(Table, DeletedTotals.__table__)
    if conn.execute(select(table.c.id).where(table.c.id == 1)).first() is None:
        conn.execute(table.insert().values(id=1, **dict.fromkeys(COUNTED, 0)))
    conn.execute(
        table.update()
        .where(table.c.id == 1)
        .values(
            **{
                name: func.coalesce(table.c[name], 0) + (value or 0)
                for name, value in zip(COUNTED, found, strict=True)
            }
        )
    )


def _delete_run_records(conn: Connection, run_id: str) -> None:
    _keep_counts(conn, run_id)
    used = select(RunCacheKey.key).where(RunCacheKey.run_id == run_id)
    used_elsewhere = select(RunCacheKey.key).where(
        RunCacheKey.run_id != run_id, RunCacheKey.key.in_(used)
    )
    conn.execute(
        delete(JudgeCacheEntry).where(
            JudgeCacheEntry.key.in_(used), JudgeCacheEntry.key.not_in(used_elsewhere)
        )
    )
    delete_comparisons_of(conn, run_id)
    delete_annotations_of(conn, run_id)
    delete_exchanges_of(conn, run_id)
    for model in (RunCacheKey, *OWNED_BY_RUN):
        conn.execute(delete(model).where(model.run_id == run_id))
    conn.execute(delete(Run).where(Run.id == run_id))
