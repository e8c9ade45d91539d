"""The length-controlled score ``al_lc`` per method, pure.

The model: an ordinary least-squares regression over every scored item,
``al = b0 + Σ_m b_m·[method = m] + c·(ln(1 + chars) − mean)`` (the first
method present is the reference), and ``al_lc[m] = b0 + b_m``: the
method's AL predicted at the run's mean log length. Each item (session,
round, method) is one point: a panel's item is the mean of its judges'
``al``, not one point per judge. When lengths do not
vary within any method, ``c`` is not identified and ``al_lc`` is None.

The fit is reproducible to the last bit and needs no item in memory.
LAPACK's least squares (``numpy.linalg.lstsq``) gave results differing in
the last bits for the same data depending on where the arrays sat in
memory. Here the normal equations are exact sums (:class:`ExactSum`, the
value ``math.fsum`` gives) streamed over the items twice (the first pass
finds the mean log length: centring keeps the equations well conditioned),
and they are solved exactly in rationals.

>>> rows = [{"session_id": "s", "round": k, "method": m, "metric": metric,
...          "value": v, "status": "ok"}
...         for k, (m, al, chars) in enumerate([("A", 40, 9), ("A", 50, 19),
...                                             ("B", 60, 9), ("B", 80, 19)])
...         for metric, v in (("al", al), ("response_chars", chars))]
>>> found = length_controlled(rows, ["A", "B"])
>>> round(found["A"], 9), round(found["B"], 9)
(45.0, 70.0)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from metrics import row_source
from metrics.items import LENGTH, Items, Rows
from metrics.row_source import Pairs

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import ArrayLike, NDArray


def length_controlled(rows: Rows, methods: list[str]) -> dict[str, float | None]:
    """``al_lc`` per method (the model is in the module docstring), from two
    passes over the items that have both values: batches from the database,
    or one batch from a table."""
    return fit(rows, methods)[0]


def fit(
    rows: Rows, methods: list[str]
) -> tuple[dict[str, float | None], dict[str, Any]]:
    """``al_lc`` per method and, for the methods without one, why (summary
    notes: too few items for the regression, lengths that never vary within
    a method, or a method with no scored item)."""
    import numpy as np

    first = _Pass(methods)
    for names, _al, chars in _items(rows):
        first.count(names, np.log1p(chars))
    present = [m for m in methods if first.counts.get(m)]
    n = sum(first.counts.values())  # the items, each once
    if n < len(present) + 2 or not first.lengths_vary():
        enough = n >= len(present) + 2
        code = "lc_lengths_constant" if enough else "lc_too_few_items"
        reason = {"code": code, "params": {} if enough else {"n": n}}
        return dict.fromkeys(methods), {m: reason for m in present}
    mean_log = first.logs.value() / n
    sums = _Sums(present)
    for names, al, chars in _items(rows):
        sums.add(names, al, np.log1p(chars) - mean_log, methods)
    coef = _solve(*sums.normal_equations(n, first.counts))
    effects = dict(zip(present[1:], coef[1:-1], strict=True))
    values = {
        m: float(coef[0] + effects.get(m, 0)) if m in present else None for m in methods
    }
    return values, {}


def _items(rows: Rows) -> Iterator[Pairs]:
    """Batches ``(methods, al, chars)`` of the items with both, each item
    (session, round, method) once: where a panel's judges scored it, its
    ``al`` is the mean of theirs (as in AL(k): ``row_source.item_groups``),
    so an item weighs the same whether one judge scored it or two (runs
    compared as one: a one-judge run beside a panel's)."""
    if isinstance(rows, row_source.RowSource) and (
        rows.judge is not None or len(set(rows.judge_names()) - {""}) < 2
    ):  # one row per item: the database pairs them
        yield from rows.reader.pairs(*LENGTH, rows.judge)
        return
    import numpy as np

    items = Items(row_source.part(rows, LENGTH))
    al, chars = items.scored("al"), items.scored("response_chars")
    keys, at_al, at_chars = np.intersect1d(
        al.keys, chars.keys, assume_unique=True, return_indices=True
    )
    # a judge's row pairs with the length stored beside it; an item is the
    # key without its judge (the judge is the key's last digit)
    _, first, of_item = np.unique(
        keys // items.size["judge"], return_index=True, return_inverse=True
    )
    of_item = of_item.reshape(-1)
    judges = np.bincount(of_item)
    means = np.bincount(of_item, weights=al.values[at_al]) / judges
    names = np.asarray(items.methods, dtype=object)[items.method(keys[first])]
    yield names.tolist(), means, chars.values[at_chars][first]


def _listed(
    names: list[str], methods: set[str]
) -> tuple[NDArray[np.object_], NDArray[np.bool_]]:
    """The names of the run's listed methods (an array) and where they are."""
    import numpy as np

    keep = np.fromiter((name in methods for name in names), bool, len(names))
    return np.asarray(names, dtype=object)[keep], keep


class _Pass:
    """The first pass: items per listed method, the exact sum of the log
    lengths, and whether they vary within some method (else the length
    effect is not identified)."""

    def __init__(self, methods: list[str]) -> None:
        self.methods, self.counts = set(methods), Counter[str]()
        self.logs, self.span = ExactSum(), dict[str, tuple[float, float]]()

    def count(self, names: list[str], logs: NDArray[np.float64]) -> None:
        kept, keep = _listed(names, self.methods)
        logs = logs[keep]
        self.logs.add(logs)
        for method in set(kept.tolist()):
            mine = logs[kept == method]
            self.counts[method] += len(mine)
            low, high = self.span.get(method, (mine.min(), mine.max()))
            self.span[method] = (min(low, mine.min()), max(high, mine.max()))

    def lengths_vary(self) -> bool:
        return any(low != high for low, high in self.span.values())


class _Sums:
    """The second pass: exact sums of the design's products (intercept, one
    indicator per method after the first, the centred log length)."""

    def __init__(self, present: list[str]) -> None:
        self.present = present
        self.log, self.log2, self.al, self.al_log = (ExactSum() for _ in range(4))
        self.by = {m: (ExactSum(), ExactSum()) for m in present[1:]}  # log, al

    def add(
        self,
        names: list[str],
        al: NDArray[np.float64],
        logs: NDArray[np.float64],
        methods: list[str],
    ) -> None:
        named, keep = _listed(names, set(methods))
        al, logs = al[keep], logs[keep]
        self.log.add(logs)
        self.log2.add(logs * logs)
        self.al.add(al)
        self.al_log.add(al * logs)
        for method, (log, al_sum) in self.by.items():
            mine = named == method
            log.add(logs[mine])
            al_sum.add(al[mine])

    def normal_equations(
        self, n: int, counts: Mapping[str, int]
    ) -> tuple[list[list[Fraction]], list[Fraction]]:
        size = len(self.present) + 1
        gram = [[Fraction(0)] * size for _ in range(size)]
        gram[0][0] = Fraction(n)
        for i, method in enumerate(self.present[1:], start=1):
            gram[0][i] = gram[i][0] = gram[i][i] = Fraction(counts[method])
            gram[i][-1] = gram[-1][i] = Fraction(self.by[method][0].value())
        gram[0][-1] = gram[-1][0] = Fraction(self.log.value())
        gram[-1][-1] = Fraction(self.log2.value())
        moments = [Fraction(self.al.value())]
        moments += [Fraction(self.by[m][1].value()) for m in self.present[1:]]
        moments.append(Fraction(self.al_log.value()))
        return gram, moments


class ExactSum:
    """The exact sum of float64 values added in batches; :meth:`value`
    rounds it once: the float ``math.fsum`` of all of them gives.

    >>> import math
    >>> total = ExactSum()
    >>> total.add([0.1, 0.2]); total.add([1e100, -1e100, 0.3])
    >>> total.value() == math.fsum([0.1, 0.2, 1e100, -1e100, 0.3])
    True
    """

    SHIFT = 1127  # 2**-1127 divides every float64 (the least is 2**-1074)

    def __init__(self) -> None:
        self.total = 0

    def add(self, values: ArrayLike) -> None:
        import numpy as np

        mantissas, exponents = np.frexp(np.asarray(values, dtype=float))
        whole = (mantissas * 2.0**53).astype(np.int64)  # exact: 53-bit integers
        for exponent in np.unique(exponents).tolist():
            part = whole[exponents == exponent]
            high = part >> 26  # two halves, so int64 sums cannot overflow
            exact = (int(high.sum()) << 26) + int((part - (high << 26)).sum())
            self.total += exact << (exponent - 53 + self.SHIFT)

    def value(self) -> float:
        return self.total / (1 << self.SHIFT)  # correctly rounded


def _solve(matrix: list[list[Fraction]], rhs: list[Fraction]) -> list[Fraction]:
    """Gauss-Jordan elimination in rationals (the matrix is nonsingular)."""
    size = len(rhs)
    rows = [[*matrix[i], rhs[i]] for i in range(size)]
    for col in range(size):
        pivot = next(r for r in range(col, size) if rows[r][col] != 0)
        rows[col], rows[pivot] = rows[pivot], rows[col]
        for r in range(size):
            if r != col and rows[r][col] != 0:
                factor = rows[r][col] / rows[col][col]
                rows[r] = [
                    a - factor * b for a, b in zip(rows[r], rows[col], strict=True)
                ]
    return [rows[i][size] / rows[i][i] for i in range(size)]
