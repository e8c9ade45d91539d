"""Keyset pages of a run's rows (``GET /api/v1/runs/<token>/rows``).

The cursor is the last row's ``id``: a page costs the same wherever it is
in the run (an ``OFFSET`` would read every row before it), and paging stays
consistent while the run evaluates, because rows are only added and an
upsert keeps a row's ``id``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from store.models import ROW_DICT_FIELDS, ResultRow

if TYPE_CHECKING:
    from store import StorageLike

FILTERS = ("metric", "method", "session_id", "status", "judge")
FIELDS = tuple(name for name in ROW_DICT_FIELDS if name != "detail")


def rows_after(
    storage: StorageLike,
    run_id: str,
    after: int,
    limit: int,
    filters: dict[str, str | None],
) -> tuple[list[dict[str, Any]], int | None]:
    """Up to ``limit`` rows with ``id > after`` in ``id`` order, and the
    cursor of the next page (None when this page is the last)."""
    query = select(ResultRow.id, *(getattr(ResultRow, name) for name in FIELDS))
    query = query.where(ResultRow.run_id == run_id, ResultRow.id > after)
    for name in FILTERS:
        if filters.get(name):
            query = query.where(getattr(ResultRow, name) == filters[name])
    query = query.order_by(ResultRow.id).limit(limit + 1)  # one more: is there a next?
    with storage.engine.connect() as conn:
        found = conn.execute(query).all()
    rows = [dict(zip(FIELDS, values[1:], strict=True)) for values in found[:limit]]
    cursor = found[limit - 1][0] if len(found) > limit else None
    return rows, cursor
