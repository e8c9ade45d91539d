"""Agreement between two judges on the same items, pure.

Two runs that judged the same responses (same file, or the same response
texts) with different judge models or prompt versions give two values per
item. Scores are compared with Spearman's ρ (scipy) and Krippendorff's α on
the interval scale (the ``krippendorff`` package); binary verdicts with
Cohen's κ (scikit-learn's formula) and the share of identical verdicts. A statistic
that cannot be computed is ``None`` with a ``reason``, never a number.

>>> scores = agreement([10.0, 20.0, 30.0, 40.0], [15.0, 25.0, 30.0, 50.0], "interval")
>>> scores["n"], round(scores["spearman"], 6), round(scores["krippendorff_alpha"], 4)
(4, 1.0, 0.8906)
>>> verdicts = agreement([1.0, 0.0, 1.0, 1.0], [1.0, 0.0, 0.0, 1.0], "nominal")
>>> round(verdicts["cohen_kappa"], 4), verdicts["percent_agreement"]
(0.5, 0.75)
>>> agreement([50.0], [60.0], "interval")["reason"]
'fewer than 2 shared items'
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Literal

from metrics.notes import note

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import ArrayLike, NDArray

Scale = Literal["interval", "nominal"]
STATISTICS = {
    "interval": ("spearman", "krippendorff_alpha"),
    "nominal": ("cohen_kappa", "percent_agreement"),
}


def agreement(a: list[float], b: list[float], scale: Scale) -> dict[str, Any]:
    """Agreement of two judges' values on the same items (``a[i]`` and
    ``b[i]`` judge item i). Interval: ``spearman``, ``krippendorff_alpha``;
    nominal: ``cohen_kappa``, ``percent_agreement``."""
    keys = STATISTICS[scale]
    result: dict[str, Any] = dict.fromkeys(keys)
    result.update(n=len(a), reason=None, reason_code=None)
    if len(a) < 2:
        return with_reason(result, "agreement_too_few")
    if scale == "nominal":
        result["percent_agreement"] = sum(
            x == y for x, y in zip(a, b, strict=True)
        ) / len(a)
        result["cohen_kappa"] = cohen_kappa(a, b)
    else:
        result["spearman"] = spearman(a, b)
        result["krippendorff_alpha"] = krippendorff_interval(a, b)
    if any(result[key] is None for key in keys):
        return with_reason(result, "agreement_no_variance")
    return result


def with_reason(result: dict[str, Any], code: str) -> dict[str, Any]:
    """Say why a statistic is missing: English and a code pages translate."""
    return {**result, "reason": note(code).english, "reason_code": code}


def _finite(value: float) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def spearman(a: ArrayLike, b: ArrayLike) -> float | None:
    """Spearman's ρ (ties ranked by their mean); None when a side is
    constant. Lists or numpy arrays (8 bytes a value instead of 32).

    >>> spearman([1.0, 2.0, 3.0], [1.0, 1.0, 1.0]) is None
    True
    """
    return _rank_correlation(a, b, "spearmanr")


def kendall(a: ArrayLike, b: ArrayLike) -> float | None:
    """Kendall's τ-b; None when a side is constant.

    >>> kendall([1.0, 2.0, 3.0], [1.0, 3.0, 2.0])
    0.33...
    >>> kendall([1.0, 2.0], [5.0, 5.0]) is None
    True
    """
    return _rank_correlation(a, b, "kendalltau")


def _rank_correlation(a: ArrayLike, b: ArrayLike, name: str) -> float | None:
    """``scipy.stats.<name>`` of two sides, None when one is constant."""
    import numpy as np

    xs, ys = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if _constant(xs) or _constant(ys):
        return None
    from scipy import stats as scipy_stats

    return _finite(getattr(scipy_stats, name)(xs, ys).statistic)


def spearman_rows(a: ArrayLike, b: ArrayLike) -> NDArray[np.float64]:
    """``spearman`` of each row of ``a`` with the same row of ``b`` (NaN
    where a row is constant): a bootstrap's resamples in one pass, not one
    scipy call each (~0.15 ms a call, 1,000 an interval). scipy's
    ``spearmanr`` steps in their order (``numpy.corrcoef`` of the ranks);
    ranks are halves, so every sum is exact in any order and each value is
    scipy's float, bit for bit (tests/metrics/test_agreement.py).

    >>> spearman_rows([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]], [[1.0, 3.0, 2.0]] * 2)
    array([0.5, nan])
    """
    import numpy as np

    xs, ys = (np.asarray(side, dtype=float) for side in (a, b))
    scale = np.true_divide(1, xs.shape[1] - 1)
    dx, dy = (r - r.mean(axis=1, keepdims=True) for r in map(_ranks, (xs, ys)))
    sxy = np.einsum("ij,ij->i", dx, dy) * scale
    sx, sy = (np.sqrt(np.einsum("ij,ij->i", d, d) * scale) for d in (dx, dy))
    spread = (sx > 0) & (sy > 0)
    found = np.full(len(xs), np.nan)
    found[spread] = np.clip(sxy[spread] / sy[spread] / sx[spread], -1, 1)
    return found


def _ranks(values: NDArray[np.float64]) -> NDArray[np.float64]:
    """Each row's ranks, ties given their mean (scipy's ``rankdata``)."""
    from scipy.stats import rankdata

    return rankdata(values, axis=1)  # type: ignore[no-any-return]


PAIRWISE_UP_TO = 200


def kendall_rows(a: ArrayLike, b: ArrayLike) -> NDArray[np.float64]:
    """``kendall`` (τ-b) of each row of ``a`` with the same row of ``b``
    (NaN where a row is constant), as ``spearman_rows``: scipy's integer
    counts (concordant minus discordant pairs, pairs untied on each side)
    and its float steps from them, so each value is scipy's, bit for bit.
    Counted over all pairs of a row: n² a resample, where scipy sorts, so
    rows longer than ``PAIRWISE_UP_TO`` are scipy's, one call each (the
    pairs cost more from ~250 values a row)."""
    import numpy as np

    xs, ys = (np.asarray(side, dtype=float) for side in (a, b))
    n = xs.shape[1]
    if n > PAIRWISE_UP_TO:
        return np.array(
            [
                np.nan if (t := kendall(x, y)) is None else t
                for x, y in zip(xs, ys, strict=True)
            ]
        )
    found = np.full(len(xs), np.nan)
    step = max(1, 2**22 // (n * n))  # resamples a chunk: ~4 M pairs at most
    upper = np.triu(np.ones((n, n), dtype=bool), 1)
    for start in range(0, len(xs), step):
        x, y = xs[start : start + step], ys[start : start + step]
        sx, sy = (_signs(side) * upper for side in (x, y))
        both = (sx * sy).sum(axis=(1, 2), dtype=np.int64)
        untied_x = np.count_nonzero(sx, axis=(1, 2))
        untied_y = np.count_nonzero(sy, axis=(1, 2))
        spread = (untied_x > 0) & (untied_y > 0)
        tau = both[spread] / np.sqrt(untied_x[spread]) / np.sqrt(untied_y[spread])
        found[start : start + step][spread] = np.clip(tau, -1, 1)
    return found


def _signs(values: NDArray[np.float64]) -> NDArray[np.int8]:
    """sign(v[i] - v[j]) of each row, for every i, j (comparisons: no
    overflow)."""
    import numpy as np

    later, earlier = values[:, :, None], values[:, None, :]
    return (later > earlier).astype(np.int8) - (later < earlier).astype(np.int8)


def _constant(values: NDArray[np.float64]) -> bool:
    """Fewer than two distinct values (without a set of every value)."""
    return len(values) < 2 or bool((values == values[0]).all())


def krippendorff_interval(a: list[float], b: list[float]) -> float | None:
    """Krippendorff's α, interval metric, two coders; None without variance."""
    if len(set(a) | set(b)) < 2:
        return None
    import krippendorff
    import numpy as np

    data = np.asarray([a, b], dtype=float)
    return _finite(krippendorff.alpha(data, level_of_measurement="interval"))


def cohen_kappa(a: list[float], b: list[float]) -> float | None:
    """Cohen's κ; None when a rater is constant (``constant_rater``: κ is
    then 0 or undefined whatever the other rater does, which says nothing
    about agreement).

    >>> cohen_kappa([1, 1, 1, 1], [1, 0, 1, 0]) is None
    True
    """
    if len(set(a)) < 2 or len(set(b)) < 2:
        return None
    return _unweighted_kappa([str(x) for x in a], [str(x) for x in b])


def _unweighted_kappa(a: list[str], b: list[str]) -> float | None:
    """scikit-learn's ``cohen_kappa_score(a, b)``, its steps in their order
    (the same float, bit for bit: tests/metrics/test_agreement.py), without
    its input checks, which cost ~1 ms a call; a bootstrap interval calls it
    1,000 times (metrics/human_agreement.py)."""
    import numpy as np

    if len(a) != len(b):  # as scikit-learn refuses it, not a numpy IndexError
        raise ValueError(
            f"two raters' verdicts differ in number: {len(a)} and {len(b)}"
        )
    labels = {label: i for i, label in enumerate(sorted({*a, *b}))}
    n = len(labels)
    confusion = np.zeros((n, n), dtype=np.float64)
    np.add.at(confusion, ([labels[x] for x in a], [labels[y] for y in b]), 1.0)
    sum0, sum1 = confusion.sum(axis=0), confusion.sum(axis=1)
    expected = np.outer(sum0, sum1) / np.sum(sum0)
    disagree = np.ones((n, n), dtype=np.float64)
    np.fill_diagonal(disagree, 0)
    denominator = np.sum(disagree * expected)
    if denominator == 0:
        return None  # one label in common: undefined (sklearn's NaN)
    return _finite(1 - np.sum(disagree * confusion) / denominator)
