"""Read-only queries behind the exploration pages (functions over ``Storage``).

Everything here is computed in SQL over ``result_rows``: a run's rows are
never loaded into Python to be grouped. A session's value of a metric is the
mean of its scored rows (``status = 'ok'`` with a value), over any round:
the per-session value the suites' summaries and comparisons are built from.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from sqlalchemy import ColumnElement, Join, Subquery, func, or_, select

from core.status import RowStatus
from store.models import ResultRow, RunSession
from store.sql import method_position

if TYPE_CHECKING:
    from store import StorageLike

DETAIL_FIELDS = ("reasoning", "raw")  # the judge's words in a row's detail


@dataclass(frozen=True)
class SessionValue:
    session_id: str
    value: float
    n: int  # scored rows averaged


@dataclass(frozen=True)
class Difference:
    session_id: str
    a: float
    n_a: int
    b: float
    n_b: int
    diff: float  # a - b


@dataclass(frozen=True)
class DetailHit:
    session_id: str
    round: int  # 0: a session-level row
    method: str
    metric: str
    detail: dict[str, Any]


def _scored(run_id: str, metric: str, method: str) -> list[ColumnElement[bool]]:
    return [
        ResultRow.run_id == run_id,
        ResultRow.metric == metric,
        ResultRow.method == method,
        ResultRow.status == RowStatus.OK.value,
        ResultRow.value.is_not(None),
    ]


def _session_means(run_id: str, metric: str, method: str, name: str) -> Subquery:
    """``(session_id, mean, n)`` of one method's scored rows of one metric."""
    return (
        select(
            ResultRow.session_id.label("session_id"),
            func.avg(ResultRow.value).label("mean"),
            func.count().label("n"),
        )
        .where(*_scored(run_id, metric, method))
        .group_by(ResultRow.session_id)
        .subquery(name)
    )


def session_values(
    storage: StorageLike,
    run_id: str,
    metric: str,
    method: str,
    offset: int = 0,
    limit: int = 50,
    descending: bool = False,
) -> list[SessionValue]:
    """One page of per-session means, by value (ties by session id)."""
    means = _session_means(run_id, metric, method, "means")
    by_value = means.c.mean.desc() if descending else means.c.mean.asc()
    query = (
        select(means.c.session_id, means.c.mean, means.c.n)
        .order_by(by_value, means.c.session_id)
        .offset(offset)
        .limit(limit)
    )
    with storage.engine.connect() as conn:
        return [
            SessionValue(session_id, float(mean), int(n))
            for session_id, mean, n in conn.execute(query)
        ]


def session_value_totals(
    storage: StorageLike, run_id: str, metric: str, method: str
) -> tuple[int, float | None, int]:
    """(sessions with a value, mean of their means, scored rows in all)."""
    means = _session_means(run_id, metric, method, "means")
    query = select(func.count(), func.avg(means.c.mean), func.sum(means.c.n))
    with storage.engine.connect() as conn:
        sessions, mean, rows = conn.execute(query).one()
    return int(sessions), None if mean is None else float(mean), int(rows or 0)


def _paired(
    run_id: str, metric: str, a: str, b: str
) -> tuple[Subquery, Subquery, Join, ColumnElement[Any]]:
    left = _session_means(run_id, metric, a, "a")
    right = _session_means(run_id, metric, b, "b")
    joined = left.join(right, left.c.session_id == right.c.session_id)
    return left, right, joined, left.c.mean - right.c.mean


def largest_differences(
    storage: StorageLike, run_id: str, metric: str, a: str, b: str, limit: int = 50
) -> list[Difference]:
    """Sessions both methods have a value for, by |a − b| descending."""
    left, right, joined, diff = _paired(run_id, metric, a, b)
    query = (
        select(left.c.session_id, left.c.mean, left.c.n, right.c.mean, right.c.n)
        .select_from(joined)
        .order_by(func.abs(diff).desc(), left.c.session_id)
        .limit(limit)
    )
    with storage.engine.connect() as conn:
        found = [
            (sid, float(va), int(na), float(vb), int(nb))
            for sid, va, na, vb, nb in conn.execute(query)
        ]
    return [Difference(sid, va, na, vb, nb, va - vb) for sid, va, na, vb, nb in found]


def difference_totals(
    storage: StorageLike, run_id: str, metric: str, a: str, b: str
) -> tuple[int, float | None]:
    """(sessions both methods have a value for, mean difference a − b)."""
    _left, _right, joined, diff = _paired(run_id, metric, a, b)
    query = select(func.count(), func.avg(diff)).select_from(joined)
    with storage.engine.connect() as conn:
        paired, mean = conn.execute(query).one()
    return int(paired), None if mean is None else float(mean)


def _detail_text(field: str) -> ColumnElement[str]:
    """A top-level string of a row's detail JSON, as SQL text (SQLite
    ``JSON_EXTRACT``, PostgreSQL ``->>``): matching the value itself, not the
    JSON's keys or its escapes (SQLite stores non-ASCII text as ``\\uXXXX``)."""
    # the JSON comparator's ``as_string`` is untyped in SQLAlchemy's stubs
    return cast("ColumnElement[str]", ResultRow.detail[field].as_string())


def iter_detail_hits(
    storage: StorageLike,
    run_id: str,
    text: str,
    limit: int = 100,
    methods: Sequence[str] = (),
) -> Iterator[DetailHit]:
    """Rows whose judge reasoning or raw reply contains ``text`` (ignoring
    case; ``%`` and ``_`` are literal), in file order (``methods``: the
    run's, as the file gave them), at most ``limit``."""
    contains = [
        _detail_text(field).icontains(text, autoescape=True) for field in DETAIL_FIELDS
    ]
    query = (
        select(
            ResultRow.session_id,
            ResultRow.round,
            ResultRow.method,
            ResultRow.metric,
            ResultRow.detail,
        )
        .join(
            RunSession,
            (RunSession.run_id == ResultRow.run_id)
            & (RunSession.session_id == ResultRow.session_id),
            isouter=True,
        )
        .where(ResultRow.run_id == run_id, or_(*contains))
        .order_by(
            RunSession.position,
            ResultRow.session_id,
            ResultRow.round,
            method_position(ResultRow.method, methods),
            ResultRow.method,
            ResultRow.metric,
            ResultRow.sample,
        )
        .limit(limit)
    )
    with storage.engine.connect() as conn:
        found: list[Any] = list(conn.execute(query))
    for session_id, round_, method, metric, detail in found:
        if isinstance(detail, dict):
            yield DetailHit(session_id, round_, method, metric, detail)
