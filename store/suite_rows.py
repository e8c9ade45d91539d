"""A suite's rows for aggregation, never all at once.

:func:`source` gives the :class:`~metrics.row_source.RowSource` a finished
run's finalize hands each suite, reading through a :class:`SuiteReader`:
parts of a few metrics in storage key order, groups, pairs and ranks
(``store/item_reads.py``), all limited to the suite's metrics. Session
counts read the distinct scored ``(session, method, metric)`` triples,
which the database reduces (a run of 10 rounds sends a tenth of its rows).

The statements are built once per shape (the suite's metrics, the part
asked, with a judge or not) and bound to the run and judge at each
execution: building one cost a finalize more CPU than running it."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    BindParameter,
    ColumnElement,
    Engine,
    Select,
    SQLColumnExpression,
    bindparam,
    func,
    literal,
    or_,
    select,
)

from core.status import RowStatus
from metrics.row_source import Group, RankedBatch, RowSource
from store.item_reads import grouped_rows, item_pairs, ranked_pairs
from store.models import ROW_KEY, ResultRow
from store.sql import AnyRow

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from metrics.suite import Metric, Suite

BATCH = 5000
# a suite's metrics as statements are keyed: (id, keyed) of each
MetricsKey = tuple[tuple[str, bool], ...]
# (ids or None for every row, prefixes) of a part
Wanted = tuple[tuple[str, ...] | None, tuple[str, ...]]


def source(engine: Engine, run_id: str, suite: Suite) -> RowSource:
    """The rows of ``suite`` in run ``run_id``, read on demand."""
    return RowSource(SuiteReader(engine, run_id, suite.metrics), suite.summary_details)


class SuiteReader:
    """:class:`~metrics.row_source.Reader` over one run's rows of a suite.
    Sorting and ranking happen in the database (which spills to disk), so
    what Python holds follows one group of rows, not the run."""

    def __init__(self, engine: Engine, run_id: str, metrics: Sequence[Metric]) -> None:
        self.engine, self.run_id, self.metrics = engine, run_id, metrics
        # a summary asks for them many times (curves, checks, each judge)
        self._judges: list[str] | None = None

    def rows(
        self,
        ids: Iterable[str] | None,
        prefixes: Iterable[str],
        judge: str | None,
        details: bool,
    ) -> Iterator[Sequence[AnyRow]]:
        return row_batches(
            self.engine,
            self.run_id,
            self.metrics,
            BATCH,
            details,
            wanted=(ids, prefixes),
            judge=judge,
        )

    def scored(self, judge: str | None) -> Iterator[Sequence[AnyRow]]:
        return scored_triples(self.engine, self.run_id, self.metrics, judge)

    def judges(self) -> list[str]:
        if self._judges is None:
            query = _judges_query(_key(self.metrics))
            with self.engine.connect() as conn:
                found = conn.execute(query, {"run_id": self.run_id}).scalars()
                self._judges = sorted(name or "" for name in found)
        return list(self._judges)

    def groups(self, metric: str, by: str, judge: str | None) -> Iterator[Group]:
        return grouped_rows(self.engine, self.run_id, metric, by, judge)

    def pairs(
        self, x: str, y: str, judge: str | None
    ) -> Iterator[tuple[list[str], NDArray[np.float64], NDArray[np.float64]]]:
        return item_pairs(self.engine, self.run_id, (x, y), judge)

    def ranks(
        self,
        x: str,
        y: str,
        per_judge: bool,
        judge: str | None,
        per_method: bool = False,
    ) -> Iterator[RankedBatch]:
        return ranked_pairs(
            self.engine, self.run_id, (x, y), per_judge, judge, per_method
        )


def row_batches(
    engine: Engine,
    run_id: str,
    metrics: Sequence[Metric] | None = None,
    batch: int = BATCH,
    detail: bool = False,
    wanted: tuple[Iterable[str] | None, Iterable[str]] = (None, ()),
    judge: str | None = None,
) -> Iterator[Sequence[AnyRow]]:
    """Lists of ``batch`` tuples ``(session_id, round, method, metric, value,
    status, judge)`` plus ``detail`` when asked, round None for a
    session-level row, in key order: what aggregation reads
    (``metrics.columns.RowColumns.add``), without a dict per row. ``metrics``
    (objects with ``id`` and ``keyed``) limits them to a suite; ``wanted``
    ``(ids, prefixes)`` to some of its metrics; ``judge`` to one judge."""
    ids, prefixes = wanted
    part = (None if ids is None else tuple(ids), tuple(prefixes))
    suite = None if metrics is None else _key(metrics)
    query = _rows_query(suite, part, detail, judge is not None)
    with engine.connect() as conn:
        found = conn.execute(
            query.execution_options(yield_per=batch),
            {"run_id": run_id, "judge": judge},
        )
        yield from found.partitions()


def scored_triples(
    engine: Engine, run_id: str, metrics: Sequence[Metric], judge: str | None = None
) -> Iterator[Sequence[AnyRow]]:
    """One row tuple per distinct scored ``(session, method, metric)``."""
    query = _triples_query(_key(metrics), judge is not None)
    with engine.connect() as conn:
        found = conn.execute(query, {"run_id": run_id, "judge": judge})
        yield from found.partitions()


def _key(metrics: Sequence[Metric]) -> MetricsKey:
    return tuple((metric.id, metric.keyed) for metric in metrics)


@lru_cache(maxsize=256)
def _rows_query(
    suite: MetricsKey | None, part: Wanted, detail: bool, judged: bool
) -> Select[*tuple[Any, ...]]:
    fields = [ResultRow.session_id, func.nullif(ResultRow.round, 0)]
    fields += [ResultRow.method, ResultRow.metric, ResultRow.value]
    fields += [ResultRow.status, ResultRow.judge]
    if detail:
        fields.append(ResultRow.detail)
    query = key_ordered(bindparam("run_id"), fields)
    if suite is not None:
        query = query.where(_suite_filter(suite))
    ids, prefixes = part
    if ids is not None:
        query = query.where(_ids_filter(ids, prefixes))
    if judged:
        query = query.where(ResultRow.judge == bindparam("judge"))
    return query


@lru_cache(maxsize=64)
def _triples_query(suite: MetricsKey, judged: bool) -> Select[*tuple[Any, ...]]:
    query = select(
        ResultRow.session_id,
        literal(None),
        ResultRow.method,
        ResultRow.metric,
        literal(1.0),
        literal(RowStatus.OK.value),
        literal(""),
    ).distinct()
    query = query.where(
        ResultRow.run_id == bindparam("run_id"),
        _suite_filter(suite),
        ResultRow.status == RowStatus.OK.value,
        ResultRow.value.is_not(None),
    )
    if judged:
        query = query.where(ResultRow.judge == bindparam("judge"))
    return query.execution_options(yield_per=BATCH)


@lru_cache(maxsize=64)
def _judges_query(suite: MetricsKey) -> Select[str]:
    query = select(ResultRow.judge).distinct()
    return query.where(ResultRow.run_id == bindparam("run_id"), _suite_filter(suite))


def key_ordered(
    run_id: str | BindParameter[str],
    fields: Sequence[SQLColumnExpression[Any]],
    metrics: Sequence[Metric] | None = None,
) -> Select[*tuple[Any, ...]]:
    """The run's rows (of ``metrics`` when given) in storage key order."""
    query = select(*fields).where(ResultRow.run_id == run_id)
    if metrics is not None:
        query = query.where(metric_filter(metrics))
    return query.order_by(*(getattr(ResultRow, name) for name in ROW_KEY[1:]))


def metric_filter(metrics: Sequence[Metric]) -> ColumnElement[bool]:
    """Rows of these metrics, keyed ones (``<id>@<key>``) included."""
    return _suite_filter(_key(metrics))


def _suite_filter(suite: MetricsKey) -> ColumnElement[bool]:
    ids = [metric for metric, _ in suite]
    return _ids_filter(ids, [f"{metric}@" for metric, keyed in suite if keyed])


def _ids_filter(ids: Iterable[str], prefixes: Iterable[str]) -> ColumnElement[bool]:
    starts = [ResultRow.metric.startswith(p, autoescape=True) for p in prefixes]
    return or_(ResultRow.metric.in_(list(ids)), *starts)
