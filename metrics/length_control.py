"""The length-controlled score ``al_lc`` per method, pure.

The model: an ordinary least-squares regression over every scored item,
``al = b0 + Σ_m b_m·[method = m] + c·(ln(1 + chars) − mean)`` (the first
method present is the reference), and ``al_lc[m] = b0 + b_m``: the
method's AL predicted at the run's mean log length. When lengths do not
vary apart from the methods, ``c`` is not identified and ``al_lc`` is None.

The fit is reproducible to the last bit. LAPACK's least squares
(``numpy.linalg.lstsq``) gave results differing in the last bits for the
same data depending on where the arrays sat in memory. Here the normal
equations are summed with ``math.fsum`` (correctly rounded, in any order)
and solved exactly in rationals; centring the log length keeps them well
conditioned.

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

import math
from fractions import Fraction

from metrics import columns, row_source
from metrics.judge_checks import LENGTH, Items, Rows


def length_controlled(rows: Rows, methods: list[str]) -> dict[str, float | None]:
    """``al_lc`` per method (the model is in the module docstring)."""
    np = columns._numpy()
    items = Items(row_source.part(rows, LENGTH))
    al, chars = items.scored("al"), items.scored("response_chars")
    keys, at_al, at_chars = np.intersect1d(
        al.keys, chars.keys, assume_unique=True, return_indices=True
    )
    rank = {name: r for r, name in enumerate(items.methods)}
    method = items.method(keys)
    keep = np.isin(method, [rank[m] for m in methods if m in rank])
    method, scores = method[keep], al.values[at_al][keep]
    found = set(method.tolist())
    present = [m for m in methods if rank.get(m) in found]
    if len(method) < len(present) + 2:
        return dict.fromkeys(methods)
    logs = np.log1p(chars.values[at_chars][keep])
    logs = logs - math.fsum(logs.tolist()) / len(logs)
    design = [np.ones(len(method))]
    design += [(method == rank[m]).astype(float) for m in present[1:]]
    design.append(logs)
    if np.linalg.matrix_rank(np.column_stack(design)) < len(design):
        return dict.fromkeys(methods)
    coef = ols_exact(design, scores)
    effects = dict(zip(present[1:], coef[1:-1], strict=True))
    return {
        m: float(coef[0] + effects.get(m, 0)) if m in present else None for m in methods
    }


def ols_exact(design: list, target) -> list[Fraction]:
    """Least-squares coefficients of ``target`` on the ``design`` columns
    (numpy arrays of full rank): normal equations of correctly rounded sums,
    solved exactly.

    >>> import numpy as np
    >>> [float(c) for c in ols_exact([np.ones(3), np.array([0.0, 1.0, 2.0])],
    ...                              np.array([1.0, 3.0, 5.0]))]
    [1.0, 2.0]
    """
    size = len(design)
    gram = [[Fraction(0)] * size for _ in range(size)]
    for i in range(size):
        for j in range(i, size):
            total = Fraction(math.fsum((design[i] * design[j]).tolist()))
            gram[i][j] = gram[j][i] = total
    moments = [Fraction(math.fsum((column * target).tolist())) for column in design]
    return _solve(gram, moments)


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
