"""Reductions of a run's rows the database makes for finalize: one metric's
scored values group by group, the items two metrics both scored, and their
mean ranks (``RANK()`` window functions). Each streams in batches, so what
Python holds follows one batch or one group, however large the run.
(See :class:`metrics.row_source.Reader` for what each yields.)

Each statement is built once per shape and bound to its values at each
execution: a finalize reads many groups, pairs and ranks, and building an
ORM statement (aliases, comparisons) cost more CPU than running it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

from sqlalchemy import ColumnElement, Engine, Select, and_, bindparam, func, select
from sqlalchemy.orm import aliased

from core.status import RowStatus
from metrics.row_source import Group, RankedBatch
from store.models import ResultRow
from store.sql import AnyRow

if TYPE_CHECKING:  # numpy is imported when the arrays are made
    import numpy as np
    from numpy.typing import NDArray

BATCH = 5000
GROUP_ORDER = {
    "round": ("method", "round", "session_id", "sample", "judge"),
    "session": ("method", "session_id", "round", "sample", "judge"),
}


def _scored(
    row: type[ResultRow],
) -> tuple[ColumnElement[bool], ColumnElement[bool]]:
    return (row.status == RowStatus.OK.value, row.value.is_not(None))


def _batches(
    engine: Engine, query: Select[*tuple[Any, ...]], values: Mapping[str, Any]
) -> Iterator[Sequence[AnyRow]]:
    with engine.connect() as conn:
        yield from conn.execute(query, dict(values)).partitions()


def _values(run_id: str, judge: str | None, **metrics: str) -> dict[str, Any]:
    """The bound values of a statement (``judge`` unused when None)."""
    return {"run_id": run_id, "judge": judge, **metrics}


def grouped_rows(
    engine: Engine, run_id: str, metric: str, by: str, judge: str | None
) -> Iterator[Group]:
    """``(method, round or session id, values, rounds)`` per group, in the
    order of ``GROUP_ORDER[by]``."""
    values = _values(run_id, judge, metric=metric)
    at = 2 if by == "round" else 1  # the column that keys a group beside the method
    current: tuple[str, Any] | None = None
    found: list[float] = []
    rounds: list[int | None] = []
    for batch in _batches(engine, _grouped(by, judge is not None), values):
        for row in batch:
            key = (row[0], row[at])
            if key != current:
                if current is not None:
                    yield current[0], current[1], found, rounds
                current, found, rounds = key, [], []
            found.append(row[3])
            rounds.append(row[2])
    if current is not None:
        yield current[0], current[1], found, rounds


@cache
def _grouped(by: str, judged: bool) -> Select[*tuple[Any, ...]]:
    query = select(
        ResultRow.method,
        ResultRow.session_id,
        func.nullif(ResultRow.round, 0),
        ResultRow.value,
    ).where(
        ResultRow.run_id == bindparam("run_id"),
        ResultRow.metric == bindparam("metric"),
        *_scored(ResultRow),
    )
    if judged:
        query = query.where(ResultRow.judge == bindparam("judge"))
    query = query.order_by(*(getattr(ResultRow, name) for name in GROUP_ORDER[by]))
    return query.execution_options(yield_per=BATCH)


@cache
def _pairs(judged: bool) -> Select[str, str, float | None, float | None]:
    """Items (session, round, method, judge) scored on both metrics (bound
    ``x`` and ``y``)."""
    a, b = aliased(ResultRow), aliased(ResultRow)
    same_item = and_(
        b.run_id == a.run_id,
        b.session_id == a.session_id,
        b.round == a.round,
        b.method == a.method,
        b.judge == a.judge,
    )
    query = select(a.judge, a.method, a.value.label("x"), b.value.label("y"))
    query = query.join(b, same_item).where(
        a.run_id == bindparam("run_id"),
        a.metric == bindparam("x"),
        b.metric == bindparam("y"),
        *_scored(a),
        *_scored(b),
    )
    return query.where(a.judge == bindparam("judge")) if judged else query


def item_pairs(
    engine: Engine, run_id: str, metrics: tuple[str, str], judge: str | None
) -> Iterator[tuple[list[str], NDArray[np.float64], NDArray[np.float64]]]:
    """Batches ``(methods, xs, ys)`` (numpy arrays of the values)."""
    import numpy as np

    query = _paired(judge is not None)
    values = _values(run_id, judge, x=metrics[0], y=metrics[1])
    for batch in _batches(engine, query, values):
        _, methods, xs, ys = zip(*batch, strict=True)
        yield list(methods), np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)


@cache
def _paired(judged: bool) -> Select[str, str, float | None, float | None]:
    return _pairs(judged).execution_options(yield_per=BATCH)


def ranked_pairs(
    engine: Engine,
    run_id: str,
    metrics: tuple[str, str],
    per_judge: bool,
    judge: str | None,
    per_method: bool = False,
) -> Iterator[RankedBatch]:
    """Batches ``(judges, 2·rank of x, ys, 2·rank of y, methods)``: mean
    ranks of ties (1-based), ranked within each judge (and method) or over
    every item."""
    import numpy as np

    query = _ranks(per_judge, per_method, judge is not None)
    values = _values(run_id, judge, x=metrics[0], y=metrics[1])
    for batch in _batches(engine, query, values):
        judges, rx, ys, ry, methods = zip(*batch, strict=True)
        yield (
            list(judges),
            np.asarray(rx, dtype=np.int64),
            np.asarray(ys, dtype=float),
            np.asarray(ry, dtype=np.int64),
            list(methods),
        )


@cache
def _ranks(per_judge: bool, per_method: bool, judged: bool) -> Select[Any]:
    pairs = _pairs(judged).subquery()
    within = [pairs.c.judge] if per_judge else []
    within += [pairs.c.method] if per_method else []

    def twice_rank(column: ColumnElement[Any]) -> ColumnElement[int]:
        rank = func.rank().over(partition_by=within or None, order_by=column)
        ties = func.count().over(partition_by=[*within, column])
        return 2 * rank + ties - 1

    query = select(
        pairs.c.judge,
        twice_rank(pairs.c.x),
        pairs.c.y,
        twice_rank(pairs.c.y),
        pairs.c.method,
    )
    return query.execution_options(yield_per=BATCH)
