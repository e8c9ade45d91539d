"""A suite's rows as finalize reads them: never all at once.

A :class:`RowSource` reads through a :class:`Reader` (the database,
``store/suite_rows.py``):

* :func:`groups` streams one metric's scored values group by group, per
  (method, round) or per (method, session): curves, slopes and session
  means hold one group;
* the reader's ``ranks`` and ``pairs`` give mean ranks and value pairs of
  the items two metrics share, batch by batch (``metrics/suites/alignment/rank_checks.py``,
  ``metrics/suites/alignment/length_control.py`` sum them exactly);
* :func:`part` reads a few metrics as columns, for statistics that need
  every item of them together (Krippendorff's alpha of samples or panels,
  the human labels) and for suites written for lists of rows;
* session counts read the distinct scored (session, method, metric)
  triples.

Rows come in storage key order, the order of those rows inside the whole
suite's rows, so every value is the one a table of all rows gives
(``tests/metrics/test_aggregate_equality.py``, ``tests/metrics/test_row_source.py``).
Suites take rows as dicts, as :class:`~metrics.columns.RowColumns`, or as a
source; each helper here accepts all three.

>>> table = columns.RowColumns.from_rows([{"session_id": "s", "method": "M",
...     "metric": m, "value": 1.0, "status": "ok"} for m in ("a", "b")])
>>> len(part(table, ["a"])), [g[2] for g in groups(table, "a", "round")]
(2, [[1.0]])
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from metrics import columns
from metrics.columns import NO_ROUND, RowColumns

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

# A group of one metric's scored rows: (method, its round or its session id,
# values, rounds), values in the order the rows arrived
Group = tuple[str, Any, list[float], list[Any]]
# (methods, xs, ys) of a batch of items scored on two metrics
Pairs = tuple[list[str], "NDArray[np.float64]", "NDArray[np.float64]"]
# (judges, 2·rank of x, ys, 2·rank of y, methods) of a batch of items
RankedBatch = tuple[
    list[str],
    "NDArray[np.int64]",
    "NDArray[np.float64]",
    "NDArray[np.int64]",
    list[str],
]


class Reader(Protocol):
    """Where a source's rows come from (``store/suite_rows.py``): batches of
    row tuples ``(session_id, round, method, metric, value, status, judge[,
    detail])`` in key order, or reductions the database makes."""

    def rows(
        self,
        ids: Iterable[str] | None,
        prefixes: Iterable[str],
        judge: str | None,
        details: bool,
    ) -> Iterable[Sequence[Sequence[Any]]]:
        """Rows of ``ids`` or ``prefixes`` (every row with ``ids`` None)."""

    def scored(self, judge: str | None) -> Iterable[Sequence[Sequence[Any]]]:
        """One row per distinct scored ``(session, method, metric)``."""

    def judges(self) -> list[str]:
        """The judges named on the rows."""

    def groups(self, metric: str, by: str, judge: str | None) -> Iterable[Group]:
        """Scored rows of ``metric`` per (method, round) or (method, session),
        methods ascending, then rounds ascending or sessions in key order."""

    def pairs(self, x: str, y: str, judge: str | None) -> Iterable[Pairs]:
        """Batches ``(methods, xs, ys)`` of the items scored on both metrics."""

    def ranks(
        self,
        x: str,
        y: str,
        per_judge: bool,
        judge: str | None,
        per_method: bool = False,
    ) -> Iterable[RankedBatch]:
        """Batches ``(judges, 2·rank of x, y, 2·rank of y, methods)`` of the
        items scored on both: mean ranks of ties, within each judge (and
        method) or overall."""


Key = tuple[tuple[str, ...] | None, tuple[str, ...]]  # (ids, prefixes) of a part


class RowSource:
    """A suite's rows, read on demand from a :class:`Reader`."""

    def __init__(
        self, reader: Reader, details: bool = False, judge: str | None = None
    ) -> None:
        self.reader, self.details, self.judge = reader, details, judge
        self._last: tuple[Key, RowColumns] | None = None

    def load(
        self, ids: Iterable[str] | None, prefixes: Iterable[str] = ()
    ) -> RowColumns:
        """The rows of ``ids`` and of ids starting with ``prefixes`` (every
        row with ``ids`` None). The last part is kept: statistics that need
        the same metrics run one after another."""
        key: Key = (None if ids is None else tuple(ids), tuple(prefixes))
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        self._last = None  # free the previous part before reading the next
        table = RowColumns(self.details)
        for batch in self.reader.rows(key[0], key[1], self.judge, self.details):
            table.add(batch)
        self._last = (key, table)
        return table

    def __iter__(self) -> Iterator[dict[str, Any]]:
        """Every row as a dict: what a suite written for lists of rows reads."""
        return iter(self.load(None))

    def scored_triples(self) -> RowColumns:
        """One scored row per distinct ``(session, method, metric)``: all
        that session counts read."""
        table = RowColumns()
        for batch in self.reader.scored(self.judge):
            table.add(batch)
        return table

    def judge_names(self) -> list[str]:
        return self.reader.judges()

    def of_judge(self, judge: str) -> RowSource:
        """The rows one judge of a panel gave (and the facts stored beside)."""
        return RowSource(self.reader, self.details, judge)


def groups(rows: columns.Rows | RowSource, metric: str, by: str) -> Iterator[Group]:
    """The scored rows of ``metric`` per (method, ``by``), ``by`` "round"
    (rounds ascending; None for a session-level row) or "session" (sessions
    as first seen): one group's values as floats at a time."""
    if isinstance(rows, RowSource):
        yield from rows.reader.groups(metric, by, rows.judge)
        return
    table = columns.of(rows)
    field = "round" if by == "round" else "session"
    found = table.groups(table.where(metric), ("method", field), by != "round")
    codes = {f: table.col(f)[found.rows] for f in ("method", field)}
    values, rounds = table.col("value")[found.rows], table.col("round")[found.rows]
    names = table.names
    for start, end in found.bounds:
        method = names["method"].names[codes["method"][start]]
        ks = [None if k == NO_ROUND else k for k in rounds[start:end].tolist()]
        key = ks[0] if by == "round" else names["session"].names[codes[field][start]]
        yield method, key, values[start:end].tolist(), ks


def item_groups(rows: columns.Rows | RowSource, metric: str) -> Iterator[Group]:
    """:func:`groups` by round with each item once: where a panel's judges
    scored the same (session, round, method), its value is the mean of
    theirs, so a curve's n counts sessions, not verdicts (18 for 9 sessions
    and two judges made its interval too narrow).

    >>> rows = [{"session_id": s, "round": 1, "method": "M", "metric": "al",
    ...          "value": v, "status": "ok", "judge": j}
    ...         for s, j, v in (("a", "x", 40.0), ("a", "y", 60.0), ("b", "x", 70.0),
    ...                         ("b", "y", 70.0))]
    >>> list(item_groups(rows, "al"))
    [('M', 1, [50.0, 70.0], [1, 1])]
    """
    one_judge = isinstance(rows, RowSource) and (
        rows.judge is not None or len(set(rows.judge_names()) - {""}) < 2
    )
    if one_judge:  # each item has one row: the groups as they are
        yield from groups(rows, metric, "round")
        return
    table = all_rows(rows)
    found = table.groups(table.where(metric), ("method", "round"), False)
    picked = {f: table.col(f)[found.rows] for f in ("method", "session", "round")}
    values = table.col("value")[found.rows]
    for start, end in found.bounds:
        pooled: dict[int, list[float]] = {}
        sessions = picked["session"][start:end].tolist()
        for session, value in zip(sessions, values[start:end].tolist(), strict=True):
            pooled.setdefault(session, []).append(value)
        k = int(picked["round"][start])
        k_or_none = None if k == NO_ROUND else k
        means = [sum(found) / len(found) for found in pooled.values()]
        method = table.names["method"].names[picked["method"][start]]
        yield method, k_or_none, means, [k_or_none] * len(means)


def readable(
    rows: columns.Rows | RowSource, details: bool = False
) -> RowColumns | RowSource:
    """A source as it is, anything else as columns."""
    return rows if isinstance(rows, RowSource) else columns.of(rows, details)


def part(
    rows: columns.Rows | RowSource,
    ids: Iterable[str] | None,
    prefixes: Iterable[str] = (),
) -> RowColumns:
    """A table holding at least the rows of ``ids`` and ``prefixes``: read
    from a source, or the whole table itself (callers select with
    ``where``, so the other rows do not change a value)."""
    if isinstance(rows, RowSource):
        return rows.load(ids, prefixes)
    return columns.of(rows)


def all_rows(rows: columns.Rows | RowSource, details: bool = False) -> RowColumns:
    """Every row, as one table (suites that read many metrics together)."""
    if isinstance(rows, RowSource):
        return rows.load(None)
    return columns.of(rows, details)


def scored_triples(rows: columns.Rows | RowSource) -> RowColumns:
    return rows.scored_triples() if isinstance(rows, RowSource) else columns.of(rows)


def judge_names(rows: columns.Rows | RowSource) -> list[str]:
    if isinstance(rows, RowSource):
        return rows.judge_names()
    return columns.of(rows).present("judge")


def of_judge(rows: columns.Rows | RowSource, judge: str) -> RowColumns | RowSource:
    """The rows of one judge, every status."""
    if isinstance(rows, RowSource):
        return rows.of_judge(judge)
    table = columns.of(rows)
    return table.subset(table.where(scored=False, judge=judge))
