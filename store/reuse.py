"""SQL behind reusing an identical finished run (pipeline/reuse.py): find
the candidates, copy their rows in the database (never through Python)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import String, insert, literal, select

from store.models import ResultRow, Run, RunCacheKey

if TYPE_CHECKING:
    from store.storage import Storage


def finished_with_file(storage: Storage, sha256: str, status: str) -> list[Run]:
    """Runs of this file in ``status``, the latest first."""
    query = (
        select(Run)
        .where(Run.file_sha256 == sha256, Run.status == status)
        .order_by(Run.finished_at.desc())
    )
    with storage.session() as db:
        return list(db.scalars(query))


def copy_rows(storage: Storage, source_id: str, target_id: str) -> int:
    """Copy the rows and cache-key records of one run to another in one
    transaction; returns the rows copied."""
    copied = 0
    with storage.session.begin() as db:
        for model in (ResultRow, RunCacheKey):
            columns = [c for c in model.__table__.c if c.name not in ("id", "run_id")]
            rows = select(literal(target_id, String).label("run_id"), *columns).where(
                model.run_id == source_id
            )
            names = ["run_id", *(c.name for c in columns)]
            result = db.execute(insert(model).from_select(names, rows))
            if model is ResultRow:
                copied = result.rowcount
    return copied
