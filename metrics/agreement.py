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
