"""The items of a suite's rows, ``(session, round, method, judge)``, numbered
so that two metrics' values pair item by item (pure). The judge checks and
the length-controlled score read their metrics through these.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, NamedTuple

from metrics import columns, row_source
from metrics.columns import NO_ROUND, RowColumns

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

Rows = columns.Rows | row_source.RowSource
# the metrics each check reads together (a part of the rows at a time)
LENGTH = ("al", "response_chars")
MODES = ("al", "binary")
HUMAN = ("human_al", "human_binary")
HUMAN_SCORES = "human_score@"  # <criterion>:<low>-<high>: a label on its own scale
SAMPLES = "al_sample@"
# <judge>@<criterion>:<low>-<high>: a recorded judge's verdict (made elsewhere,
# carried by the file), stored once with no judge of the run
RECORDED = "recorded@"
# <criterion>:<low>-<high>: a judge of the run's score on a protocol's
# criterion, on the scale the protocol declares (metrics/suites/alignment/criteria.py)
JUDGE_SCORES = "judge_score@"


def unjudged(metric: str) -> bool:
    """A fact no judge of the run made: a human label, a recorded verdict.

    >>> unjudged("human_al"), unjudged("recorded@j@c:1-5"), unjudged("al")
    (True, True, False)
    """
    return metric in HUMAN or metric.startswith(RECORDED)


class Scored(NamedTuple):
    """One metric's scored values by item: item numbers ascending."""

    keys: NDArray[np.int64]
    values: NDArray[np.float64]


class Items:
    """The items ``(session, round, method, judge)`` of a suite's rows,
    numbered so that ascending numbers follow ``(session_id, round or 0,
    method, judge)``: with a panel each judge's rows pair with the facts
    stored beside them (the facts are stored once per judge).

    >>> rows = [{"session_id": s, "round": 1, "method": "M", "metric": "al",
    ...          "value": v, "status": "ok"} for s, v in (("b", 2.0), ("a", 1.0))]
    >>> Items(RowColumns.from_rows(rows)).scored("al").values.tolist()
    [1.0, 2.0]
    """

    def __init__(self, table: RowColumns) -> None:
        import numpy as np

        self.table = table
        rounds = table.col("round")
        self.low = min(0, int(np.min(rounds, where=rounds != NO_ROUND, initial=0)))
        high = max(0, int(np.max(rounds, initial=0)))
        self.ranks = {f: table.names[f].ranks() for f in ("session", "method", "judge")}
        self.judges = sorted(table.names["judge"].names)
        self.methods = sorted(table.names["method"].names)
        self.size = {f: max(len(r), 1) for f, r in self.ranks.items()}
        self.size["round"] = high - self.low + 1
        if math.prod(self.size.values()) >= 2**62:
            raise ValueError("too many items to number")

    def keys(self, index: NDArray[np.intp]) -> NDArray[np.int64]:
        import numpy as np

        col, rank, size = self.table.col, self.ranks, self.size
        rounds = col("round")[index]
        rounds = np.where(rounds == NO_ROUND, 0, rounds).astype(np.int64) - self.low
        key = rank["session"][col("session")[index]] * size["round"] + rounds
        key = key * size["method"] + rank["method"][col("method")[index]]
        numbered: NDArray[np.int64] = (
            key * size["judge"] + rank["judge"][col("judge")[index]]
        )
        return numbered

    def judge(self, keys: NDArray[np.int64]) -> NDArray[np.int64]:
        return keys % self.size["judge"]

    def method(self, keys: NDArray[np.int64]) -> NDArray[np.int64]:
        return (keys // self.size["judge"]) % self.size["method"]

    def scored(
        self, metric: str | None = None, index: NDArray[np.intp] | None = None
    ) -> Scored:
        """Scored values of ``metric`` (or of the rows at ``index``) by item;
        a repeated item keeps its last row, as a dict would."""
        import numpy as np

        index = self.table.where(metric) if index is None else index
        keys = self.keys(index)[::-1]
        keys, last = np.unique(keys, return_index=True)
        return Scored(keys, self.table.col("value")[index][::-1][last])


def paired(a: Scored, b: Scored, as_lists: bool = True) -> tuple[Any, Any]:
    """The values of the items both have, in item order (as lists, or as
    arrays, which hold 8 bytes a value instead of 32)."""
    import numpy as np

    _, ia, ib = np.intersect1d(a.keys, b.keys, assume_unique=True, return_indices=True)
    if not as_lists:
        return a.values[ia], b.values[ib]
    return a.values[ia].tolist(), b.values[ib].tolist()


def lookup(found: Scored, keys: NDArray[np.int64]) -> NDArray[np.float64]:
    """``found``'s values at ``keys``, NaN where it has none."""
    import numpy as np

    if not len(found.keys):
        return np.full(len(keys), np.nan)
    at = np.minimum(np.searchsorted(found.keys, keys), len(found.keys) - 1)
    return np.where(found.keys[at] == keys, found.values[at], np.nan)
