"""Judge–human agreement on one criterion, each statistic with its n and a
95% interval (pure; ``docs/metrics/alignment.md`` "Agreement per criterion").

The intervals are the Fisher z transform's, with the standard error each
coefficient needs:

* Pearson r: SE = 1/√(n − 3) (Fisher, 1921); needs n ≥ 4;
* Spearman ρ: SE = √((1 + ρ²/2)/(n − 3)) (Bonett & Wright, 2000); n ≥ 4;
* Kendall τ-b: SE = √(0.437/(n − 4)) (Fieller, Hartley & Pearson, 1957); n ≥ 5;

the ends are tanh(atanh(v) ∓ 1.959964·SE). A coefficient of ±1 (z infinite;
within 10⁻¹² of it, as float noise leaves r of identical columns) or one
that is null has no interval (null), as has one below its n; at ±1 the
interval would have width 0, so ``<stat>_ci_note`` says so
(``ci_fisher_at_one``), and a κ interval of width 0 has
``weighted_kappa_ci_note`` ``ci_no_spread``.

>>> found = criterion_agreement([1, 2, 3, 4, 5, 3], [2, 1, 4, 3, 5, 4])
>>> found["n"], round(found["pearson"], 4), [round(e, 4) for e in found["pearson_ci"]]
(6, 0.7686, [-0.1142, 0.9731])
>>> [round(e, 4) for e in found["spearman_ci"]], [round(e, 4) for e in found["kendall_ci"]]
([-0.272, 0.9799], [-0.2604, 0.9164])
>>> criterion_agreement([1, 2], [1, 2])["pearson_ci"] is None
True
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from metrics.agreement import _finite, kendall, spearman
from metrics.stats import CI_FISHER_AT_ONE, CI_NO_SPREAD

Z95 = 1.959963984540054  # the standard normal's 97.5% quantile
# (statistic, the SE of its Fisher z at n and value, the least n)
INTERVALS: dict[str, tuple[Callable[[int, float], float], int]] = {
    "pearson": (lambda n, v: 1 / math.sqrt(n - 3), 4),
    "spearman": (lambda n, v: math.sqrt((1 + v * v / 2) / (n - 3)), 4),
    "kendall": (lambda n, v: math.sqrt(0.437 / (n - 4)), 5),
}
RESOLUTION = 1e-12  # a coefficient this close to ±1 is ±1 (no interval)
KAPPA_POINTS = 5  # weighted κ only on scales of at most this many points


def fisher_interval(statistic: str, value: float | None, n: int) -> list[float] | None:
    """The 95% interval of ``statistic`` (pearson, spearman, kendall) at
    ``value`` over ``n`` pairs; None below the least n, at ±1 or without a value.

    >>> [round(e, 4) for e in fisher_interval("pearson", 0.5, 28)]
    [0.156, 0.7358]
    >>> fisher_interval("kendall", 0.5, 4) is None, fisher_interval("spearman", 1.0, 9)
    (True, None)
    >>> fisher_interval("pearson", 0.9999999999999998, 9) is None
    True
    """
    se_of, least = INTERVALS[statistic]
    if value is None or n < least or abs(value) >= 1 - RESOLUTION:
        return None
    z, se = math.atanh(value), se_of(n, value)
    return [math.tanh(z - Z95 * se), math.tanh(z + Z95 * se)]


def at_one(statistic: str, value: float | None, n: int) -> bool:
    """Whether ``statistic`` at ``value`` over ``n`` pairs has no interval
    for being ±1 (its Fisher interval has width 0 at ±1: both ends ±1).

    >>> at_one("spearman", 1.0, 9), at_one("spearman", 1.0, 3), at_one("pearson", 0.5, 9)
    (True, False, False)
    """
    least = INTERVALS[statistic][1]
    return value is not None and n >= least and abs(value) >= 1 - RESOLUTION


def kappa_flat(a: Sequence[float], b: Sequence[float]) -> bool:
    """Whether κ's bootstrap interval is null for having width 0 (every
    resample with a κ gives the same one), not for too few pairs or
    resamples: the note ``ci_no_spread``.

    >>> kappa_flat([1, 2, 3, 4, 5], [1, 2, 3, 4, 5]), kappa_flat([1, 2], [1, 2])
    (True, False)
    """
    ends = _kappa_quantiles(a, b)[0]
    return ends is not None and ends[1] - ends[0] <= 1e-9


def pearson(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Pearson's r; None when a side is constant.

    >>> round(pearson([1.0, 2.0, 3.0], [1.0, 3.0, 2.0]), 4)
    0.5
    >>> pearson([1.0, 2.0], [4.0, 4.0]) is None
    True
    """
    if len(a) < 2 or len(set(a)) < 2 or len(set(b)) < 2:
        return None
    from scipy import stats

    return _finite(stats.pearsonr(a, b).statistic)


def weighted_kappa(
    a: Sequence[float], b: Sequence[float], scale: list[int]
) -> float | None:
    """Cohen's κ with quadratic weights over every point of ``scale``
    (``[low, high]``, at most ``KAPPA_POINTS`` points); None when a value is
    not one of its points or a side is constant.

    >>> weighted_kappa([1, 2, 3, 3], [1, 2, 3, 2], [1, 3])
    0.8
    >>> weighted_kappa([1.5, 2, 3], [1, 2, 3], [1, 3]) is None
    True
    """
    low, high = scale
    points = list(range(low, high + 1))
    if len(points) > KAPPA_POINTS or len(a) < 2:
        return None
    if any(float(v) not in points for v in (*a, *b)):
        return None
    if len(set(a)) < 2 or len(set(b)) < 2:
        return None
    from sklearn.metrics import cohen_kappa_score

    return _finite(
        cohen_kappa_score(
            [int(v) for v in a], [int(v) for v in b], labels=points, weights="quadratic"
        )
    )


def criterion_agreement(
    judged: Sequence[float],
    labelled: Sequence[float],
    same_scale: list[int] | None = None,
) -> dict[str, Any]:
    """r, ρ, τ-b of a judge's values against the human ones (same items, in
    order), each with its interval (``<stat>_ci``), and ``n``; with
    ``same_scale`` (both raters on that scale) also ``weighted_kappa``."""
    n = len(judged)
    found: dict[str, Any] = {
        "pearson": pearson(judged, labelled),
        "spearman": spearman(judged, labelled) if n >= 2 else None,
        "kendall": kendall(judged, labelled) if n >= 2 else None,
        "n": n,
    }
    for name in INTERVALS:
        found[f"{name}_ci"] = fisher_interval(name, found[name], n)
        if at_one(name, found[name], n):  # width 0: no interval, said why
            found[f"{name}_ci_note"] = CI_FISHER_AT_ONE
    if same_scale is not None:
        found["weighted_kappa"] = weighted_kappa(judged, labelled, same_scale)
        if found["weighted_kappa"] is not None:
            found["weighted_kappa_ci"], found["weighted_kappa_left_out"] = (
                kappa_interval(judged, labelled)
            )
            if found["weighted_kappa_ci"] is None and kappa_flat(judged, labelled):
                found["weighted_kappa_ci_note"] = CI_NO_SPREAD
        else:
            found["weighted_kappa_note"] = kappa_reason(judged, labelled, same_scale)
    return found


def kappa_reason(a: Sequence[float], b: Sequence[float], scale: list[int]) -> str:
    """Why :func:`weighted_kappa` has no value: a note code.

    >>> kappa_reason([1.5, 2, 3], [1, 2, 3], [1, 3]), kappa_reason([1], [2], [1, 3])
    ('kappa_off_points', 'agreement_too_few')
    >>> kappa_reason([1, 2], [1, 2], [1, 10]), kappa_reason([2, 2], [1, 2], [1, 3])
    ('kappa_scale_too_long', 'agreement_one_side_constant')
    """
    low, high = scale
    if high - low + 1 > KAPPA_POINTS:
        return "kappa_scale_too_long"
    if len(a) < 2:
        return "agreement_too_few"
    if any(float(v) not in range(low, high + 1) for v in (*a, *b)):
        return "kappa_off_points"
    return "agreement_one_side_constant"


KAPPA_RESAMPLES = 2000
KAPPA_SEED = 20250  # fixed: the same pairs give the same interval
KAPPA_LEAST = 5  # pairs below which κ has no interval


def kappa_interval(
    a: Sequence[float], b: Sequence[float]
) -> tuple[list[float] | None, int]:
    """The 95% percentile bootstrap interval of the quadratic-weighted κ
    over items (pairs resampled with replacement, ``KAPPA_RESAMPLES``
    times, numpy's default generator seeded with ``KAPPA_SEED``), and the
    resamples left out because a side was constant in them (κ undefined;
    they are counted, never scored). None below ``KAPPA_LEAST`` pairs,
    when fewer than half the resamples give a κ, or when all give one value
    (an interval of width 0 is no interval). With quadratic weights
    κ = 1 − mean((a − b)²) / (mean(a²) + mean(b²) − 2·mean(a)·mean(b))
    (the weights' scale cancels), so every resample is computed at once.

    >>> ends, left_out = kappa_interval([1, 2, 3, 4, 2, 3, 1, 4], [1, 2, 4, 4, 1, 3, 2, 3])
    >>> [round(e, 3) for e in ends], left_out
    ([0.517, 0.931], 0)
    >>> kappa_interval([1, 2, 3, 4], [1, 2, 3, 4])
    (None, 0)
    """
    ends, left_out = _kappa_quantiles(a, b)
    if ends is None or ends[1] - ends[0] <= 1e-9:  # width 0: no spread to show
        return None, left_out
    return list(ends), left_out


def _kappa_quantiles(
    a: Sequence[float], b: Sequence[float]
) -> tuple[tuple[float, float] | None, int]:
    """The 2.5% and 97.5% quantiles of the resampled κ (None below
    ``KAPPA_LEAST`` pairs or when fewer than half the resamples give a κ),
    and the resamples left out."""
    import numpy as np

    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    n = len(x)
    if n < KAPPA_LEAST:
        return None, 0
    rng = np.random.default_rng(KAPPA_SEED)
    picks = rng.integers(0, n, size=(KAPPA_RESAMPLES, n))
    xs, ys = x[picks], y[picks]
    varied = (xs.min(axis=1) < xs.max(axis=1)) & (ys.min(axis=1) < ys.max(axis=1))
    xs, ys = xs[varied], ys[varied]
    observed = ((xs - ys) ** 2).mean(axis=1)
    expected = (
        (xs**2).mean(axis=1)
        + (ys**2).mean(axis=1)
        - 2 * xs.mean(axis=1) * ys.mean(axis=1)
    )
    kappas = 1 - observed / expected
    left_out = int(KAPPA_RESAMPLES - len(kappas))
    if len(kappas) < KAPPA_RESAMPLES / 2:
        return None, left_out
    low, high = np.quantile(kappas, [0.025, 0.975])
    return (float(low), float(high)), left_out
