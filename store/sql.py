"""Small SQL helpers the query modules share."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import islice
from typing import Any, TypeVar, cast

from sqlalchemy import (
    ColumnElement,
    Row,
    Select,
    Table,
    case,
    func,
    literal,
    select,
    update,
)
from sqlalchemy.engine import Connection
from sqlalchemy.orm import InstrumentedAttribute, Session, sessionmaker

from store.models import Base, ResultRow, RunSession

T = TypeVar("T")
# a result row of any columns (SQLAlchemy's ``Row`` is typed by its columns)
AnyRow = Row[*tuple[Any, ...]]


def table_of(model: type[Base]) -> Table:
    """The model's table. Every model here is mapped to a ``Table``; SQLAlchemy
    types ``__table__`` as any ``FromClause`` (a model may map a subquery)."""
    return cast(Table, model.__table__)


def batched(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """Lists of up to ``size`` items (``itertools.batched`` is Python 3.12+)."""
    iterator = iter(items)
    while part := list(islice(iterator, size)):
        yield part


def method_position(column: Any, methods: Sequence[str]) -> ColumnElement[int]:
    """A method column's place in the run's methods (``Run.methods``: the
    order the file gave them at validation), to sort replies as in the
    file; a method the list lacks sorts after the others."""
    if not methods:
        return literal(0)
    positions = {method: index for index, method in enumerate(methods)}
    return case(positions, value=column, else_=len(methods))


def claim_each(
    conn: Connection,
    key: InstrumentedAttribute[T],
    waiting: ColumnElement[bool],
    **values: Any,
) -> list[T]:
    """Claim every row ``waiting`` selects, setting ``values``: one guarded
    ``UPDATE ... WHERE key = k AND waiting`` per row, so of two dispatchers
    asking at the same time each row goes to exactly one. ``key`` is the
    key column (``Run.id``); returns the keys this caller claimed."""
    claimed: list[T] = []
    for found in list(conn.scalars(select(key).where(waiting))):
        guarded = update(key.table).where(key == found, waiting).values(**values)
        if conn.execute(guarded).rowcount == 1:
            claimed.append(found)
    return claimed


def count_of_run(
    session: sessionmaker[Session],
    model: type[ResultRow] | type[RunSession],
    run_id: str,
) -> int:
    """The rows of ``model`` (a table with a ``run_id``) that belong to a run."""
    query = select(func.count()).select_from(model).where(model.run_id == run_id)
    with session() as db:
        return db.execute(query).scalar_one()


ROW_FILTERS = ("session_id", "method", "metric", "status", "judge")


def filtered_rows(query: Select[Any], filters: Mapping[str, Any]) -> Select[Any]:
    """``query`` of result rows narrowed to the filters given: a value per
    column of ``ROW_FILTERS``, and a score range (a row without a value is
    outside any range)."""
    for name in ROW_FILTERS:
        if filters.get(name):
            query = query.where(getattr(ResultRow, name) == filters[name])
    if filters.get("value_min") is not None:
        query = query.where(ResultRow.value >= filters["value_min"])
    if filters.get("value_max") is not None:
        query = query.where(ResultRow.value <= filters["value_max"])
    return query
