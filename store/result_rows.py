"""Result rows of record: the idempotent upsert on their natural key, and
the reads of them: counts, pages with filters and sorts, and the stream
finalize aggregates from."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import Select, Text, cast, func, select

from store.database import Repository
from store.leases import fenced
from store.models import (
    ROW_DICT_FIELDS,
    ROW_KEY,
    ResultRow,
    Run,
)
from store.replies import write_exchanges
from store.sql import batched, count_of_run, filtered_rows, table_of
from store.suite_rows import key_ordered, metric_filter

if TYPE_CHECKING:
    from metrics.suite import Metric

ROW_SORTS = ("session_id", "round", "method", "metric", "judge", "value", "status")
ROW_DEFAULTS = {
    "sample": 0,
    "judge": "",
    "note": None,
    "detail": None,
    "note_code": None,
    "note_params": None,
}


class RowQueries(Repository):
    """Result rows: upserts, reads, counts and pages."""

    def upsert_rows(
        self,
        rows: Iterable[dict[str, Any]],
        batch: int = 2000,
        fence: tuple[str, int, int] | None = None,
        exchanges: Sequence[dict[str, Any]] = (),
    ) -> int:
        """Insert or replace rows on their natural key, in one transaction,
        ``batch`` rows per statement (a statement's parameters stay small).
        ``fence``: ``(run_id, chunk, lease)``, written only while that lease
        is the chunk's (else ``LeaseLost``, nothing written). ``exchanges``:
        what the judge was asked for them (``store/replies.py``), kept in
        the same transaction (needs the fence: it names the run)."""
        # Core, not the ORM: bulk writes are the hot path of every chunk.
        changing = ("value", "status", "note", "detail", "note_code", "note_params")
        stmt = self.database.upsert(table_of(ResultRow), ROW_KEY, changing)
        written = 0
        with fenced(self.engine, *fence) if fence else self.engine.begin() as conn:
            for part in batched(rows, batch):
                conn.execute(
                    stmt,
                    [{**ROW_DEFAULTS, **row} for row in part],
                )
                written += len(part)
            if exchanges and fence:
                write_exchanges(conn, self.database, fence[0], exchanges)
        return written

    def rows(self, run_id: str, **filters: Any) -> list[ResultRow]:
        query = select(ResultRow).where(ResultRow.run_id == run_id)
        for name, value in filters.items():
            query = query.where(getattr(ResultRow, name) == value)
        query = query.order_by(*(getattr(ResultRow, name) for name in ROW_KEY[1:]))
        with self.session() as db:
            return list(db.scalars(query))

    def count_rows(self, run_id: str) -> int:
        return count_of_run(self.session, ResultRow, run_id)

    def run_status_counts(self, run: Run) -> dict[str, int]:
        """Stored at finalize for finished runs (a GROUP BY over millions of
        rows costs a second); counted live while the run is in progress."""
        stored = (run.aggregates or {}).get("status_counts")
        return stored if stored is not None else self.status_counts(run.id)

    def unscored_causes(
        self, run_id: str
    ) -> list[tuple[str, str, str, int, dict[str, Any]]]:
        """``(metric, status, note code, rows, one row's note parameters)``
        of the rows not ``ok``: what an empty chart says instead of guessing
        ("no judge configured")."""
        example = func.min(cast(ResultRow.note_params, Text))  # JSON text
        query = (
            select(
                ResultRow.metric,
                ResultRow.status,
                ResultRow.note_code,
                func.count(),
                example,
            )
            .where(ResultRow.run_id == run_id, ResultRow.status != "ok")
            .group_by(ResultRow.metric, ResultRow.status, ResultRow.note_code)
        )
        with self.engine.connect() as conn:
            return [
                (m, s, code or "", n, json.loads(params) if params else {})
                for m, s, code, n, params in conn.execute(query)
            ]

    def status_counts(
        self, run_id: str, metrics: Sequence[Metric] | None = None
    ) -> dict[str, int]:
        """Rows by status; with ``metrics`` (objects with ``id`` and
        ``keyed``), only theirs (the judge's: ``pipeline/worker/finalizer.py``)."""
        query = (
            select(ResultRow.status, func.count())
            .where(ResultRow.run_id == run_id)
            .group_by(ResultRow.status)
        )
        if metrics is not None:
            query = query.where(metric_filter(metrics))
        with self.session() as db:
            return dict(db.execute(query).all())

    def missing_replies(self, run_id: str) -> int:
        """Replies the file lacks, among the stored rows: each gives a
        ``missing`` row in every suite, but a cancelled run may have stored
        one suite's rows of a session and not the next one's."""
        replies = (
            select(ResultRow.session_id, ResultRow.round, ResultRow.method)
            .where(ResultRow.run_id == run_id, ResultRow.status == "missing")
            .distinct()
            .subquery()
        )
        with self.session() as db:
            return int(
                db.execute(select(func.count()).select_from(replies)).scalar_one()
            )

    def _row_query(
        self, run_id: str, filters: Mapping[str, Any]
    ) -> Select[*tuple[Any, ...]]:
        query = select(*(getattr(ResultRow, name) for name in ROW_DICT_FIELDS))
        query = query.where(ResultRow.run_id == run_id)
        return filtered_rows(query, filters)

    def rows_page(
        self,
        run_id: str,
        filters: Mapping[str, Any],
        offset: int,
        limit: int,
        order: tuple[str, bool] | None = None,
    ) -> list[dict[str, Any]]:
        """One page of rows; ``order`` = (a ``ROW_SORTS`` column, descending),
        then the row key, with missing values last either way."""
        query = self._row_query(run_id, filters)
        keys = [getattr(ResultRow, name) for name in ROW_KEY[1:]]
        if order and order[0] in ROW_SORTS:
            column = getattr(ResultRow, order[0])
            first = column.desc() if order[1] else column.asc()
            keys.insert(0, first.nulls_last())
        query = query.order_by(*keys)
        with self.engine.connect() as conn:
            found = conn.execute(query.offset(offset).limit(limit))
            return [dict(zip(ROW_DICT_FIELDS, values, strict=True)) for values in found]

    def count_filtered_rows(self, run_id: str, filters: Mapping[str, Any]) -> int:
        query = select(func.count()).select_from(
            self._row_query(run_id, filters).subquery()
        )
        with self.session() as db:
            return db.execute(query).scalar_one()

    def iter_rows(
        self,
        run_id: str,
        metrics: Sequence[Metric] | None = None,
        batch: int = 5000,
        detail: bool = True,
    ) -> Iterator[dict[str, Any]]:
        """Every row in key order, streamed (exports of large runs). With
        ``metrics`` (metric objects with ``id`` and ``keyed``), only theirs:
        a suite reads its own rows. ``detail=False`` leaves the JSON details
        out (``None``): summaries of values need not load them."""
        fields = (
            ROW_DICT_FIELDS
            if detail
            else tuple(f for f in ROW_DICT_FIELDS if f != "detail")
        )
        query = key_ordered(
            run_id, [getattr(ResultRow, name) for name in fields], metrics
        )
        with self.engine.connect() as conn:
            for values in conn.execute(query.execution_options(yield_per=batch)):
                row = dict(zip(fields, values, strict=True))
                row.setdefault("detail", None)
                yield row
