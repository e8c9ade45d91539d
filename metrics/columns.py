"""A suite's rows as columns: aggregation in bounded memory.

A row as a dict costs about 800 bytes; here it costs 19 (codes of interned
strings, the round, the value), so finalizing a run of millions of rows
holds tens of megabytes, not gigabytes. Rows keep the order they arrived in
(storage streams them in key order), and every helper hands values back in
that order, so sums, means and dict orders are those of the dict code.

Values are ``NaN`` where a row has none (a row's value is never ``NaN``:
``metrics.rows.result_row`` makes a non-finite value an ``error`` row).
A ``RowColumns`` still iterates as dict rows, so a suite's ``summarize``
written for lists of dicts keeps working.

>>> rows = [{"session_id": s, "round": k, "method": "M", "metric": "al",
...          "value": v, "status": "ok"} for s, k, v in (("a", 1, 50.0),
...          ("a", 2, 70.0), ("b", 1, None))]
>>> columns = RowColumns.from_rows(rows)
>>> len(columns), columns.values(columns.where("al"))
(3, [50.0, 70.0])
>>> next(iter(columns))["round"], columns.session_means("al")
(1, {'M': {'a': 60.0}})
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import islice
from operator import itemgetter
from statistics import fmean
from typing import TYPE_CHECKING, Any

from core.status import RowStatus
from metrics.column_parts import Groups, Names

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

NO_ROUND = -(2**15)  # a session-level row's round (None); rounds are >= 1
# column -> the array typecode it starts with; an integer column widens when
# a value does not fit (a run has few methods, judges and metrics)
TYPECODES = {
    "session": "h",
    "round": "h",
    "method": "b",
    "metric": "h",
    "judge": "b",
    "status": "b",
    "value": "d",
}
WIDER = {"b": "h", "h": "i", "i": "q"}
INTERNED = ("session", "method", "metric", "judge", "status")
DICT_KEYS = (
    "session_id",
    "method",
    "metric",
    "judge",
    "status",
    "round",
    "value",
    "detail",
)
BATCH = 4096


class RowColumns:
    """Rows as columns; build with :meth:`from_rows` (or :meth:`add`)."""

    def __init__(self, details: bool = False) -> None:
        self.names = {field: Names() for field in INTERNED}
        self._arrays: dict[str, Any] = {f: array(c) for f, c in TYPECODES.items()}
        self._columns: dict[str, Any] = {}
        self._scored: NDArray[np.bool_] | None = None
        self.details: list[dict[str, Any] | None] | None = [] if details else None

    @classmethod
    def from_rows(
        cls, rows: Iterable[Mapping[str, Any]], details: bool = False
    ) -> RowColumns:
        """Columns of dict rows (``judge`` None or absent is ``""``; with
        ``details`` each row's ``detail`` is kept)."""
        columns = cls(details)
        iterator = iter(rows)
        while batch := list(islice(iterator, BATCH)):
            columns.add(
                [
                    (
                        r["session_id"],
                        r.get("round"),
                        r["method"],
                        r["metric"],
                        r["value"],
                        r["status"],
                        r.get("judge"),
                        r.get("detail"),
                    )
                    for r in batch
                ]
            )
        return columns

    def add(self, rows: Sequence[Sequence[Any]]) -> None:
        """Append rows given as tuples ``(session_id, round, method, metric,
        value, status, judge, detail)``; ``detail`` may be left out when
        details are not kept.

        >>> columns = RowColumns()
        >>> columns.add([("s", None, "M", "jera", 120.0, "ok", "")])
        >>> columns.rounds(columns.where("jera")), columns.present("judge")
        ([None], [''])
        """
        if self._columns:
            raise ValueError("rows are added before the columns are read")
        if not rows:
            return
        fields = list(zip(*rows, strict=True))
        arrays, names = self._arrays, self.names
        for field, strings in zip(
            ("session", "method", "metric", "status"),
            itemgetter(0, 2, 3, 5)(fields),
            strict=True,
        ):
            self._extend(field, names[field].codes_of(strings))
        judges = [name or "" for name in fields[6]]
        self._extend("judge", names["judge"].codes_of(judges))
        self._extend("round", [NO_ROUND if k is None else k for k in fields[1]])
        arrays["value"].fromlist([math.nan if v is None else v for v in fields[4]])
        if self.details is not None:
            self.details.extend(fields[7] if len(fields) > 7 else [None] * len(rows))

    def _extend(self, field: str, values: list[int]) -> None:
        """Append integers, widening the column when one does not fit."""
        while True:
            try:
                self._arrays[field].fromlist(values)
                return
            except OverflowError:  # fromlist appended nothing
                column = self._arrays[field]
                self._arrays[field] = array(WIDER[column.typecode], column)

    def __len__(self) -> int:
        return len(self._arrays["value"])

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return self.dicts()

    def col(self, field: str) -> NDArray[Any]:
        """A column as a numpy array (codes for interned fields)."""
        found = self._columns.get(field)
        if found is None:
            import numpy as np

            column = self._arrays[field]
            found = np.frombuffer(column, dtype=column.typecode)
            self._columns[field] = found
        return found

    def scored_mask(self) -> NDArray[np.bool_]:
        """Rows an aggregate admits: status ``ok`` with a value."""
        if self._scored is None:
            import numpy as np

            ok = self.names["status"].codes.get(RowStatus.OK, -1)
            self._scored = (self.col("status") == ok) & ~np.isnan(self.col("value"))
        return self._scored

    def where(
        self,
        metric: str | Iterable[str] | None = None,
        *,
        prefix: str | None = None,
        scored: bool = True,
        status: str | None = None,
        judge: str | None = None,
    ) -> NDArray[np.intp]:
        """Positions (ascending) of the rows of ``metric`` (one id or several,
        or the ids starting with ``prefix``), scored ones only unless
        ``scored=False``; of one ``status`` or ``judge`` when given.

        >>> columns = RowColumns.from_rows([{"session_id": "s", "method": "M",
        ...     "metric": m, "value": 1.0, "status": "ok"} for m in ("x@1", "y", "x@2")])
        >>> columns.where(prefix="x@").tolist(), columns.where("y").tolist()
        ([0, 2], [1])
        """
        import numpy as np

        mask = self.scored_mask() if scored else np.ones(len(self), dtype=bool)
        if metric is not None or prefix is not None:
            ids = {metric} if isinstance(metric, str) else set(metric or ())
            names = self.names["metric"].names
            wanted = [
                c
                for c, name in enumerate(names)
                if name in ids or (prefix and name.startswith(prefix))
            ]
            mask = mask & self._any_of("metric", wanted)
        for field, name in (("status", status), ("judge", judge)):
            if name is not None:
                mask = mask & (self.col(field) == self.names[field].codes.get(name, -1))
        return np.flatnonzero(mask)

    def _any_of(self, field: str, codes: list[int]) -> NDArray[np.bool_]:
        """Rows whose ``field`` has one of ``codes`` (``numpy.isin`` would
        hold an integer per row on the way)."""
        import numpy as np

        column, mask = self.col(field), np.zeros(len(self), dtype=bool)
        for code in codes:
            mask |= column == code
        return mask

    def values(self, index: NDArray[np.intp]) -> list[float]:
        """The values at ``index``, as floats (NaN where none)."""
        values: list[float] = self.col("value")[index].tolist()
        return values

    def strings(self, field: str, index: NDArray[np.intp]) -> list[str]:
        """An interned field's strings at ``index``."""
        names = self.names[field].names
        return [names[code] for code in self.col(field)[index].tolist()]

    def rounds(self, index: NDArray[np.intp]) -> list[int | None]:
        """The rounds at ``index`` (None for a session-level row)."""
        return [None if k == NO_ROUND else k for k in self.col("round")[index].tolist()]

    def present(self, field: str) -> list[str]:
        """The distinct strings of a field among the rows."""
        import numpy as np

        names = self.names[field].names
        return [names[code] for code in np.unique(self.col(field)).tolist()]

    def groups(
        self, index: NDArray[np.intp], fields: tuple[str, ...], first_seen: bool = True
    ) -> Groups:
        """The rows at ``index`` grouped by ``fields``; groups in the order
        their first row arrived (else by ascending codes, ascending rounds).

        >>> columns = RowColumns.from_rows([{"session_id": s, "method": "M",
        ...     "metric": "x", "value": 1.0, "status": "ok"} for s in "baab"])
        >>> found = columns.groups(columns.where("x"), ("session",))
        >>> found.rows.tolist(), found.bounds
        ([0, 3, 1, 2], [(0, 2), (2, 4)])
        """
        import numpy as np

        if len(index) == 0:
            return Groups(index, [])
        key = np.zeros(len(index), dtype=np.int64)
        for field in fields:
            codes = self.col(field)[index]
            if field in self.names:
                size = len(self.names[field].names)
            else:  # rounds: numbered in ascending order
                codes = np.unique(codes, return_inverse=True)[1].reshape(-1)
                size = int(codes.max()) + 1
            key = key * size + codes
        order = np.argsort(key, kind="stable")
        ordered = key[order]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
        ends = np.r_[starts[1:], len(order)]
        if first_seen:
            keep = np.argsort(order[starts], kind="stable")
            starts, ends = starts[keep], ends[keep]
        rows = np.asarray(index)[order]
        return Groups(rows, list(zip(starts.tolist(), ends.tolist(), strict=True)))

    def subset(self, index: NDArray[np.intp]) -> RowColumns:
        """The rows at ``index`` (same string codes)."""
        part = RowColumns(self.details is not None)
        part.names = self.names
        part._columns = {field: self.col(field)[index] for field in TYPECODES}
        part._arrays = part._columns
        if self.details is not None:
            part.details = [self.details[i] for i in index.tolist()]
        return part

    def dicts(self, index: NDArray[np.intp] | None = None) -> Iterator[dict[str, Any]]:
        """The rows at ``index`` (all by default) as dicts of ``DICT_KEYS``
        (``detail`` None unless kept)."""
        import numpy as np

        index = np.arange(len(self)) if index is None else index
        fields = [self.strings(f, index) for f in INTERNED]
        values = [None if math.isnan(v) else v for v in self.values(index)]
        kept = self.details
        details = [kept[i] for i in index.tolist()] if kept else [None] * len(index)
        for row in zip(*fields, self.rounds(index), values, details, strict=True):
            yield dict(zip(DICT_KEYS, row, strict=True))

    def session_means(
        self, metric: str | Iterable[str], methods: Iterable[str] | None = None
    ) -> dict[str, dict[str, float]]:
        """``metrics.rows.session_means`` over the columns: the same floats
        in the same dict order (methods, then sessions, as first seen); with
        several metric ids, a session's mean pools their rows."""
        groups = self.groups(self.where(metric), ("method", "session"))
        values = self.col("value")[groups.rows]
        firsts = groups.rows[[a for a, _ in groups.bounds]]
        method_of = self.col("method")[firsts].tolist()
        session_of = self.col("session")[firsts].tolist()
        methods_, sessions = self.names["method"].names, self.names["session"].names
        per: dict[str, dict[str, float]] = {}
        for (start, end), method, session in zip(
            groups.bounds, method_of, session_of, strict=True
        ):  # one group's values as floats at a time
            mean = fmean(values[start:end].tolist())
            per.setdefault(methods_[method], {})[sessions[session]] = mean
        wanted = list(per) if methods is None else [m for m in methods if m in per]
        return {m: per[m] for m in wanted}


Rows = Iterable[Mapping[str, Any]] | RowColumns  # what the helpers here accept


def of(rows: Rows, details: bool = False) -> RowColumns:
    """``rows`` as columns (columns are returned as they are).

    >>> of([]) is not None and len(of([]))
    0
    """
    return rows if isinstance(rows, RowColumns) else RowColumns.from_rows(rows, details)
