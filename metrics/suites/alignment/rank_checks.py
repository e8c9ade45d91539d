"""Rank statistics of the judge checks, exact and streamed (pure).

Spearman's ρ of AL against response length (per judge) and the cross-mode
AUC of AL separating binary verdicts need every scored item's rank. From a
:class:`~metrics.row_source.RowSource` the database ranks the items
(``RANK()`` window functions, mean ranks of ties) and Python only sums them
batch by batch; from a table, ``scipy.stats.rankdata``
ranks them. Either way the sums are exact integers (twice a
mean rank is one), so both give the same bits, reproducibly:

* ρ is Pearson's r of the ranks, ``(nΣxy − ΣxΣy) / √((nΣx² − (Σx)²)(nΣy² −
  (Σy)²))``, one square root of an exact ratio;
* AUC is the Mann–Whitney U of the AL ranks of the items the judge would
  keep chatting with, ``(R₁ − n₁(n₁ + 1)/2) / (n₁·n₀)``.

>>> rows = [{"session_id": "s", "round": k, "method": "M", "metric": metric,
...          "value": v, "status": "ok"}
...         for k, (al, chars, vote) in enumerate([(40, 10, 0), (50, 20, 0),
...                                                (60, 30, 1), (55, 40, 1)])
...         for metric, v in (("al", al), ("response_chars", chars), ("binary", vote))]
>>> length_spearman(rows), cross_mode_auc(rows)
(({'': 0.8}, {'': {'M': 0.8}}, {'': {'M': 4}}), ({'': 1.0}, {'': 4}))
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from metrics import row_source
from metrics.items import LENGTH, MODES, Items, Rows, Scored, paired
from metrics.row_source import RankedBatch

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


class RankSums:
    """Exact sums of twice the ranks of n paired items."""

    def __init__(self) -> None:
        self.n = self.x = self.y = self.xx = self.yy = self.xy = 0

    def add(self, rx: NDArray[np.int64], ry: NDArray[np.int64]) -> None:
        """Add numpy int64 arrays (a batch: the sums fit in 64 bits)."""
        self.n += len(rx)
        self.x, self.y = self.x + int(rx.sum()), self.y + int(ry.sum())
        self.xx, self.yy = (
            self.xx + int((rx * rx).sum()),
            self.yy + int((ry * ry).sum()),
        )
        self.xy += int((rx * ry).sum())

    def pearson(self) -> float | None:
        """r of the ranks; None with fewer than 2 items or a constant side."""
        spread_x = self.n * self.xx - self.x * self.x
        spread_y = self.n * self.yy - self.y * self.y
        if self.n < 2 or not spread_x or not spread_y:
            return None
        common = self.n * self.xy - self.x * self.y
        root = math.isqrt((common * common << 212) // (spread_x * spread_y))
        return math.copysign(root / (1 << 106), common)  # within 2**-106 of r


def length_spearman(
    rows: Rows,
) -> tuple[dict[str, Any] | None, dict[str, Any] | None, dict[str, Any] | None]:
    """``({judge: ρ}, {judge: {method: ρ}}, {judge: {method: n}})`` ("" for
    a run whose rows name no judge; n: the responses with both a length and
    an AL). ρ is computed *within* each method — pooling methods would read
    a better method's longer replies as a length bias — and combined per
    judge as the mean of the methods' ρ weighted by their items (methods
    without a ρ left out)."""
    found: dict[tuple[str, str], RankSums] = defaultdict(RankSums)
    for judges, rx, _, ry, methods in _ranked(
        rows, LENGTH, per_judge=True, per_method=True
    ):
        import numpy as np

        named = np.asarray(judges, dtype=object)
        owned = np.asarray(methods, dtype=object)
        for judge, method in set(zip(judges, methods, strict=True)):
            mine = (named == judge) & (owned == method)
            found[(judge, method)].add(rx[mine], ry[mine])
    by_method: dict[str, dict[str, float | None]] = defaultdict(dict)
    counts: dict[str, dict[str, int]] = defaultdict(dict)
    for judge, method in sorted(found):
        by_method[judge][method] = found[(judge, method)].pearson()
        counts[judge][method] = found[(judge, method)].n
    combined = {judge: _weighted(per, found, judge) for judge, per in by_method.items()}
    if not any(v is not None for v in combined.values()):
        return None, dict(by_method) or None, dict(counts) or None
    return combined, dict(by_method), dict(counts)


def _weighted(
    per_method: dict[str, float | None],
    sums: Mapping[tuple[str, str], RankSums],
    judge: str,
) -> float | None:
    scored = [
        (sums[(judge, m)].n, rho) for m, rho in per_method.items() if rho is not None
    ]
    total = sum(n for n, _ in scored)
    return math.fsum(n * rho for n, rho in scored) / total if total else None


def cross_mode_auc(rows: Rows) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """``({judge: AUC}, {judge: n})`` of the judge's AL for its own verdict
    1 against 0, each judge on its own (a panel's judges differ in scale);
    None for a judge with one class. n: the responses with both."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])  # ones, zeros, R1
    import numpy as np

    for judges, rx, verdicts, _, _ in _ranked(rows, MODES, per_judge=True):
        named = np.asarray(judges, dtype=object)
        for judge in set(judges):
            mine = named == judge
            one = verdicts[mine] == 1.0
            found = counts[judge]
            found[0], found[1] = found[0] + int(one.sum()), found[1] + int((~one).sum())
            found[2] += int(rx[mine][one].sum())
    values = {
        judge: (r1 - ones * (ones + 1)) / (2 * ones * zeros) if ones and zeros else None
        for judge, (ones, zeros, r1) in sorted(counts.items())
    }
    items = {judge: ones + zeros for judge, (ones, zeros, _) in sorted(counts.items())}
    if not any(v is not None for v in values.values()):
        return None, items or None
    return values, items


def _ranked(
    rows: Rows, metrics: tuple[str, str], per_judge: bool, per_method: bool = False
) -> Iterator[RankedBatch]:
    """Batches ``(judges, 2·rank of x, y, 2·rank of y, methods)`` of the
    items with both, ranked within each judge (and method) or overall."""
    if isinstance(rows, row_source.RowSource):
        yield from rows.reader.ranks(*metrics, per_judge, rows.judge, per_method)
        return
    import numpy as np
    from scipy.stats import rankdata

    items = Items(row_source.part(rows, metrics))
    x, y = items.scored(metrics[0]), items.scored(metrics[1])
    judge_of, method_of = items.judge(x.keys), items.method(x.keys)
    judges = np.unique(judge_of).tolist() if per_judge else [None]
    methods = np.unique(method_of).tolist() if per_method else [None]
    for judge in judges:
        for method in methods:
            mine = np.ones(len(x.keys), dtype=bool)
            if judge is not None:
                mine &= judge_of == judge
            if method is not None:
                mine &= method_of == method
            xs, ys = paired(Scored(x.keys[mine], x.values[mine]), y, as_lists=False)
            if len(xs):
                rx, ry = (np.rint(2 * rankdata(v)).astype(np.int64) for v in (xs, ys))
                names = [items.judges[judge] if judge is not None else ""] * len(xs)
                owned = [items.methods[method] if method is not None else ""] * len(xs)
                yield names, rx, ys, ry, owned
