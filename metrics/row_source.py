"""A suite's rows read a few metrics at a time (issue 17).

Finalizing holds one part of a suite's rows at once: the metrics one
statistic needs (``al`` for the AL(k) curve, ``al`` and ``response_chars``
for the length checks), never every metric of the suite. Session counts
come from the distinct scored ``(session, method, metric)`` triples, which
the database reduces. So memory follows the rows of one or two metrics, not
the run's row count.

A part keeps the order rows arrive in (the storage key order), which is
the order of those rows inside the whole suite's rows; every value is the
one a table of all rows gives (``tests/test_aggregate_equality.py``).

Suites take rows as dicts, as :class:`~metrics.columns.RowColumns`, or as a
:class:`RowSource`; :func:`part` gives a table for any of them.

>>> table = columns.RowColumns.from_rows([{"session_id": "s", "method": "M",
...     "metric": m, "value": 1.0, "status": "ok"} for m in ("a", "b")])
>>> source = RowSource(lambda ids, prefixes, judge, details: [
...     [r for r in (("s", None, "M", m, 1.0, "ok", "") for m in "ab")
...      if ids is None or r[3] in ids]])
>>> len(part(source, ["a"])), len(part(table, ["a"]))
(1, 2)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence

from metrics import columns
from metrics.columns import RowColumns

# read(ids, prefixes, judge, details): batches of row tuples in key order;
# ids None = every row of the suite, else rows of those ids or prefixes
Read = Callable[..., Iterable[Sequence[Sequence]]]


class RowSource:
    """Rows read on demand through ``read``; ``scored`` gives the distinct
    scored ``(session, method, metric)`` triples and ``judges`` the judges
    named on the rows (both only needed for counts and panels)."""

    def __init__(
        self,
        read: Read,
        details: bool = False,
        scored: Callable[..., Iterable[Sequence[Sequence]]] | None = None,
        judges: Callable[..., list[str]] | None = None,
        judge: str | None = None,
    ) -> None:
        self._read, self._scored, self._judges = read, scored, judges
        self.details, self.judge = details, judge
        self._last: tuple[tuple, RowColumns] | None = None

    def load(self, ids: Iterable[str] | None, prefixes: Iterable[str] = ()):
        """The rows of ``ids`` and of ids starting with ``prefixes`` (every
        row with ``ids`` None). The last part is kept: statistics that need
        the same metrics run one after another."""
        key = (None if ids is None else tuple(ids), tuple(prefixes))
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        self._last = None  # free the previous part before reading the next
        table = RowColumns(self.details)
        for batch in self._read(key[0], key[1], self.judge, self.details):
            table.add(batch)
        self._last = (key, table)
        return table

    def __iter__(self) -> Iterator[dict]:
        """Every row as a dict: what a suite written for lists of rows reads."""
        return iter(self.load(None))

    def scored_triples(self) -> RowColumns:
        """One scored row per distinct ``(session, method, metric)``: all
        that session counts read."""
        if self._scored is None:
            return columns.of(self.load(None))
        table = RowColumns()
        for batch in self._scored(self.judge):
            table.add(batch)
        return table

    def judge_names(self) -> list[str]:
        if self._judges is None:
            return self.load(None).present("judge")
        return self._judges()

    def of_judge(self, judge: str) -> RowSource:
        """The rows one judge of a panel gave (and the facts stored beside)."""
        return RowSource(self._read, self.details, self._scored, self._judges, judge)


def readable(rows: columns.Rows | RowSource, details: bool = False):
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


def of_judge(rows: columns.Rows | RowSource, judge: str):
    """The rows of one judge, every status."""
    if isinstance(rows, RowSource):
        return rows.of_judge(judge)
    table = columns.of(rows)
    return table.subset(table.where(scored=False, judge=judge))
