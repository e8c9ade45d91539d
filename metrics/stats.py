"""Statistics shared by every suite: CIs, OLS, paired comparisons, Holm.

Every function takes plain lists of already-scored values (callers drop
unscored rows first) and returns ``None`` where a statistic is undefined,
never a made-up number.

>>> slope, intercept, r2 = ols([1, 2, 3, 4, 5], [40, 50, 60, 70, 80])
>>> round(slope, 6), round(intercept, 6), round(r2, 6)
(10.0, 30.0, 1.0)
>>> ols([1, 2, 3], [5, 5, 5])[2] is None
True
>>> holm([0.01, 0.04, 0.03])
[0.03, 0.06, 0.06]
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from itertools import combinations_with_replacement
from statistics import fmean, stdev
from typing import TYPE_CHECKING, Any

from metrics.power import power_note, sessions_for_power
from metrics.sign_flips import EXACT_UP_TO, doubled_ranks, exact_p

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import ArrayLike, NDArray

# paired bootstrap intervals by their differences' bytes (memo_ci)
IntervalMemo = dict[bytes, "tuple[float, float] | None"]

# numpy and scipy are imported inside the functions that use them, which
# every CLI command would pay otherwise.

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20240521
# resampled values drawn at once (8 MB of indices): 2,000 resamples of 10,000
# sessions at once would hold 320 MB; drawn in parts, the generator gives the
# same stream and each resample's mean the same float
BOOTSTRAP_PART = 1_000_000


def mean_ci(values: list[float], level: float = 0.95) -> dict[str, Any]:
    """Mean with a Student-t confidence interval (small n is the norm here).

    An interval of width 0 (every value the same, at :func:`at_resolution`)
    is never shown as one: both ends None and ``ci_note``
    ``ci_no_variation``; the mean stays.

    >>> mean_ci([50.0, 30.0])["mean"], mean_ci([50.0, 30.0])["n"]
    (40.0, 2)
    >>> mean_ci([7.0])["ci_low"] is None
    True
    >>> mean_ci([6.0, 6.0, 6.0])
    {'mean': 6.0, 'n': 3, 'ci_low': None, 'ci_high': None, 'ci_note': 'ci_no_variation'}
    """
    n = len(values)
    if n == 0:
        return {"mean": None, "n": 0, "ci_low": None, "ci_high": None}
    mean = fmean(values)
    if n < 2:
        return {"mean": mean, "n": 1, "ci_low": None, "ci_high": None}
    # stdtrit is what scipy.stats.t.ppf computes (equal to the last bit for
    # every df, tests/metrics/test_stats_edges.py), without loading scipy.stats
    from scipy.special import stdtrit

    half = float(stdtrit(n - 1, 0.5 + level / 2)) * stdev(values) / math.sqrt(n)
    ends = spread_or_none(mean - half, mean + half)
    if ends is None:
        return {
            "mean": mean,
            "n": n,
            "ci_low": None,
            "ci_high": None,
            "ci_note": CI_NO_VARIATION,
        }
    return {"mean": mean, "n": n, "ci_low": ends[0], "ci_high": ends[1]}


def normal_ci(values: list[float]) -> tuple[float, float] | None:
    """mean ± 1.96·σ/√n, as the simulation seed states (σ = sample SD);
    None from fewer than two values, or when it has width 0 (every value
    the same: ``ci_no_variation``, :func:`spread_or_none`).

    >>> normal_ci([1.0, 3.0])
    (0.04..., 3.96...)
    >>> normal_ci([0.0, 0.0, 0.0]) is None
    True
    """
    if len(values) < 2:
        return None
    mean, half = fmean(values), 1.96 * stdev(values) / math.sqrt(len(values))
    return spread_or_none(mean - half, mean + half)


def ols(
    xs: list[float], ys: list[float]
) -> tuple[float | None, float | None, float | None]:
    """Least-squares line ``y = slope * x + intercept`` and R².

    Slope and intercept need two distinct x values; R² is undefined (None)
    when y is constant, since there is no variance to explain.
    """
    if len(xs) < 2 or len(set(xs)) < 2:
        return None, None, None
    mean_x, mean_y = fmean(xs), fmean(ys)
    sxx = sum((x - mean_x) ** 2 for x in xs)
    sxy = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True))
    syy = sum((y - mean_y) ** 2 for y in ys)
    slope = sxy / sxx
    intercept = mean_y - slope * mean_x
    r2 = None if syy == 0 else (sxy * sxy) / (sxx * syy)
    return slope, intercept, r2


# Fewer sessions than this: the exact bootstrap distribution (every
# resample, C(2n − 1, n) of them: 24,310 at 9) instead of random resamples;
# with few sessions 2,000 random resamples repeat the same few atoms and
# their percentiles fall between them by chance.
EXACT_BOOTSTRAP_BELOW = 10
CI_NO_SPREAD = "ci_no_spread"  # a percentile interval of width 0: not shown
# a t (or normal) interval of width 0: every value the same, s = 0
CI_NO_VARIATION = "ci_no_variation"
# a Fisher-z interval at r = ±1 (z infinite): both ends ±1, width 0
CI_FISHER_AT_ONE = "ci_fisher_at_one"
# the notes saying an interval was left out for having width 0
ZERO_WIDTH_NOTES = frozenset({CI_NO_SPREAD, CI_NO_VARIATION, CI_FISHER_AT_ONE})


@functools.cache
def exact_resamples(n: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Every bootstrap resample of ``n`` units as counts (a row per
    multiset of n draws: how often each unit is drawn) with its weight
    n!/Πcᵢ! (integers: the number of ordered draws giving it, of nⁿ).

    >>> counts, weights = exact_resamples(2)
    >>> counts.tolist(), weights.tolist()
    ([[2, 0], [1, 1], [0, 2]], [1, 2, 1])
    """
    import numpy as np

    draws = list(combinations_with_replacement(range(n), n))
    counts = np.zeros((len(draws), n), dtype=np.int64)
    for row, draw in enumerate(draws):
        for unit in draw:
            counts[row, unit] += 1
    factorials = np.array([math.factorial(k) for k in range(n + 1)], dtype=np.int64)
    weights = math.factorial(n) // np.prod(factorials[counts], axis=1)
    return counts, weights


@functools.cache
def _exact_columns(n: int) -> NDArray[np.float64]:
    """:func:`exact_resamples`' counts by unit (a row per unit, as floats,
    contiguous): how often each resample draws unit i."""
    import numpy as np

    columns = np.ascontiguousarray(exact_resamples(n)[0].T, dtype=float)
    columns.flags.writeable = False
    return columns


def resample_sums(values: ArrayLike) -> NDArray[np.float64]:
    """Σᵢ countsᵢ·valuesᵢ for every exact resample of ``len(values)`` units
    (:func:`exact_resamples`): a vector for a vector of values, resamples x
    k for values of shape (units, k). Bit for bit what numpy gives for
    ``(counts * values).sum(axis=1)`` (and ``(counts[:, :, None] *
    values[None]).sum(axis=1)``), the same products added in the same order:
    from 0.0, one column in numpy's pairwise order (eight partial sums from
    eight units on), several columns one unit after the other. Done a unit
    at a time on contiguous columns, without the resamples x units (x k)
    products, it is several times faster; ``tests/metrics/test_small_sample_intervals.py``
    checks the bits against numpy's expressions.

    >>> resample_sums([1.0, 2.0]).tolist()
    [2.0, 3.0, 4.0]
    """
    import numpy as np

    values = np.asarray(values, dtype=float)
    n = len(values)
    columns = _exact_columns(n)
    if values.ndim == 2 and values.shape[1] != 1:
        # k x resamples while adding (contiguous), resamples x k returned
        found = values[0][:, None] * columns[0][None, :] + 0.0
        for unit in range(1, n):
            found += values[unit][:, None] * columns[unit][None, :]
        return np.ascontiguousarray(found.T)
    flat = values.reshape(n)
    terms = [columns[unit] * flat[unit] for unit in range(n)]
    if n < 8:
        found = np.full(len(columns[0]), -0.0)
        for term in terms:
            found += term
    else:
        if n > PAIRWISE_BLOCK:
            raise ValueError(f"{n} units: more than numpy's pairwise block")
        partial = terms[:8]
        whole = n - n % 8
        for start in range(8, whole, 8):
            partial = [
                s + t for s, t in zip(partial, terms[start : start + 8], strict=True)
            ]
        found = ((partial[0] + partial[1]) + (partial[2] + partial[3])) + (
            (partial[4] + partial[5]) + (partial[6] + partial[7])
        )
        for term in terms[whole:]:
            found += term
    found = 0.0 + found
    summed: NDArray[np.float64] = found if values.ndim == 1 else found[:, None]
    return summed


PAIRWISE_BLOCK = 128  # numpy's PW_BLOCKSIZE: a plain pairwise sum up to it


def weighted_quantiles(
    values: ArrayLike, weights: ArrayLike, levels: Sequence[float]
) -> list[float]:
    """The smallest value whose cumulative weight reaches each level (the
    quantile of a discrete distribution; ``weights`` integers or floats).

    With integer weights the answer does not depend on how ties are ordered
    (the cumulative weights are exact), so only each level's tail is sorted
    (:func:`_tail_quantiles`): the same value as sorting everything.

    >>> weighted_quantiles([3.0, 1.0, 2.0], [1, 1, 2], [0.25, 0.5, 0.75])
    [1.0, 2.0, 2.0]
    """
    import numpy as np

    values, weights = np.asarray(values, dtype=float), np.asarray(weights)
    if (
        len(values) >= TAIL_SORT_FROM
        and weights.dtype.kind in "iu"
        and not np.isnan(values).any()
    ):
        return _tail_quantiles(values, weights, levels)
    order = np.argsort(values, kind="stable")
    cumulative = np.cumsum(weights[order])
    total = cumulative[-1]
    found = np.searchsorted(cumulative, [level * total for level in levels], "left")
    return [float(values[order][min(i, len(values) - 1)]) for i in found]


# From this many values a quantile sorts only the tail that holds it
TAIL_SORT_FROM = 256


def _tail_quantiles(
    values: NDArray[np.float64], weights: NDArray[Any], levels: Sequence[float]
) -> list[float]:
    """:func:`weighted_quantiles` for integer ``weights``, sorting only the
    tails that hold the levels: below a low cut when its weight reaches the
    level, above a high cut when the weight under the cut does not (one
    partition finds both cuts; they move outward until every level is held,
    at worst every value is sorted). The smallest value v with W(≤ v) ≥ the
    level's weight is the same whichever values are sorted."""
    import numpy as np

    count, total = len(values), int(weights.sum())
    targets = [level * total for level in levels]
    share = max(1, count // 8)
    while 2 * share < count - 1:
        cuts = np.partition(values, [share, count - 1 - share])
        low, high = values <= cuts[share], values >= cuts[count - 1 - share]
        held_low = int(weights[low].sum())
        under_high = total - int(weights[high].sum())
        if all(t <= held_low or under_high < t for t in targets):
            break
        share *= 4
    else:
        low = high = np.ones(count, dtype=bool)
        held_low, under_high = total, 0
    found: list[float] = []
    # a side: its values sorted, and the cumulative weight at each
    sorted_sides: dict[bool, tuple[NDArray[np.float64], NDArray[Any]]] = {}
    for target in targets:
        on_low = target <= held_low
        if on_low not in sorted_sides:
            chosen = low if on_low else high
            kept = values[chosen]
            order = np.argsort(kept)
            below = 0 if on_low else under_high
            sorted_sides[on_low] = (
                kept[order],
                below + np.cumsum(weights[chosen][order]),
            )
        kept, cumulative = sorted_sides[on_low]
        index = int(np.searchsorted(cumulative, target, "left"))
        found.append(float(kept[min(index, len(kept) - 1)]))
    return found


def spread_or_none(low: float, high: float) -> tuple[float, float] | None:
    """``(low, high)``, or None when the interval has no width: its ends
    within ``ZERO_DIFFERENCE`` (:func:`at_resolution`; a zero-width interval
    is not shown as one)."""
    return None if at_resolution(high - low) == 0.0 else (low, high)


def paired_bootstrap_ci(
    diffs: list[float], level: float = 0.95
) -> tuple[float, float] | None:
    """Percentile CI of the mean paired difference: with fewer than
    ``EXACT_BOOTSTRAP_BELOW`` values the quantiles of the exact bootstrap
    distribution, else 2,000 resamples with a fixed seed (reproducible).
    None when n < 2 or the interval has no width (``CI_NO_SPREAD``).

    >>> paired_bootstrap_ci([1.0, 2.0, 3.0, 4.0])
    (1.5, 3.5)
    >>> paired_bootstrap_ci([0.125, 0.125, 0.125, 0.125]) is None
    True
    """
    n = len(diffs)
    if n < 2:
        return None
    import numpy as np

    values = np.asarray(diffs, dtype=float)
    tail = (1 - level) / 2
    if n < EXACT_BOOTSTRAP_BELOW:
        means = resample_sums(values) / n
        low, high = weighted_quantiles(means, exact_resamples(n)[1], [tail, 1 - tail])
        return spread_or_none(low, high)
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    rows = max(1, BOOTSTRAP_PART // n)
    means = np.concatenate(
        [
            values[
                rng.integers(0, n, size=(min(rows, BOOTSTRAP_RESAMPLES - done), n))
            ].mean(axis=1)
            for done in range(0, BOOTSTRAP_RESAMPLES, rows)
        ]
    )
    low, high = np.quantile(means, [tail, 1 - tail])
    return spread_or_none(float(low), float(high))


ZERO_DIFFERENCE = 1e-9  # |d| at most this is a zero: floating-point noise
# Differences are compared at 12 significant digits: session values are means
# over a few rounds, and differences equal on paper differ in the last bit
# (1 - 2/3 = 0.33333333333333337, 1/3 = 0.3333333333333333). Ranked as
# distinct, 8 wins and 5 losses of 1/3 gave p = 0.0195 instead of 0.581.
# A quotient of small integers never lies on a rounding boundary at 12
# digits (it would need a denominator divisible by 2**12 or 5**12).
RESOLUTION_DIGITS = 12


def at_resolution(diff: float) -> float:
    """``diff`` as the comparisons see it: 0.0 within ``ZERO_DIFFERENCE``,
    else rounded to ``RESOLUTION_DIGITS`` significant digits.

    >>> at_resolution(1 - 2 / 3) == at_resolution(1 / 3), at_resolution(0.1 + 0.2 - 0.3)
    (True, 0.0)
    """
    if abs(diff) <= ZERO_DIFFERENCE:
        return 0.0
    return float(f"{diff:.{RESOLUTION_DIGITS}g}")


def signed_ranks(diffs: list[float]) -> tuple[list[int], list[int], int]:
    """Pratt's ranking (Pratt 1959): every difference at
    :func:`at_resolution`, zeros included, ranked by |d| with average ranks
    of ties; then the zeros and their ranks are set aside. Returns twice the
    ranks of the nonzero differences (integers: average ranks are
    half-integers), their signs (+1/−1) and the number of zeros.

    >>> signed_ranks([0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 4.0, -5.0])
    ([8, 10, 12, 14, 16], [1, 1, 1, 1, -1], 3)
    """
    seen = [at_resolution(d) for d in diffs]
    ranks2 = doubled_ranks([abs(d) for d in seen])
    kept = [
        (rank, 1 if d > 0 else -1) for rank, d in zip(ranks2, seen, strict=True) if d
    ]
    return [r for r, _ in kept], [sign for _, sign in kept], len(seen) - len(kept)


def wilcoxon_p(diffs: list[float]) -> float | None:
    """Two-sided Wilcoxon signed-rank p with **Pratt's zero handling**; None
    when fewer than 2 differences or every one is zero. Differences are
    taken at the resolution of :func:`at_resolution`: a difference within
    ``ZERO_DIFFERENCE`` of zero is a zero (0.1 + 0.2 - 0.3 is not a win),
    and differences equal to 12 significant digits are tied.

    The zeros are ranked with the rest (they take the smallest ranks), then
    their ranks leave T+ and the null distribution (:func:`signed_ranks`):
    a tie pushes every win and loss up the ranking instead of vanishing
    (dropping them first, "wilcox", tests the nonzero differences as if the
    ties had never been observed). Up to ``EXACT_UP_TO`` (200) nonzero
    differences the p is exact, from the exact null distribution of T+ with
    the ties' average ranks (:func:`metrics.sign_flips.exact_p`); beyond it
    the normal approximation with Cureton's (1967) mean and variance for
    Pratt's ranks, tie-corrected, no continuity correction.

    >>> wilcoxon_p([0, 0, 0, 1, 2, 3, 4, -5])
    0.375
    >>> wilcoxon_p([1.0, 2.0, 3.0, 4.0, 5.0] + [0.0] * 9)
    0.0625
    >>> wilcoxon_p([0.1 + 0.2 - 0.3, 1.0, 2.0, 3.0]) == wilcoxon_p([0.0, 1.0, 2.0, 3.0])
    True
    >>> round(wilcoxon_p([1 - 2 / 3] * 8 + [0 - 1 / 3] * 5), 3)
    0.581
    """
    if len(diffs) < 2:
        return None
    ranks2, signs, _ = signed_ranks(diffs)
    if not ranks2:
        return None
    observed2 = sum(r for r, sign in zip(ranks2, signs, strict=True) if sign > 0)
    if len(ranks2) <= EXACT_UP_TO:
        return exact_p(ranks2, observed2)
    # under the null T+ is a sum of independent rank·Bernoulli(½): mean
    # Σr/2, variance Σr²/4 over the nonzero ranks, which is Cureton's
    # [n(n+1)(2n+1) − z(z+1)(2z+1)]/24 − Σ(t³ − t)/48 with z zeros
    mean = sum(ranks2) / 4  # ranks are doubled: Σ(2r)/4 = Σr/2
    variance = sum(r * r for r in ranks2) / 16
    z = (observed2 / 2 - mean) / math.sqrt(variance)
    return math.erfc(abs(z) / math.sqrt(2))


def cohens_dz(diffs: list[float], sd: float | None = None) -> float | None:
    """Paired effect size: mean difference over the SD of the differences;
    None when they do not vary at :func:`at_resolution` (differences equal
    on paper have no spread: their float noise gave an SD of 3e-17 and
    dz = 1.0e16).

    A mean difference within ``ZERO_DIFFERENCE`` of 0 is 0 (dz = 0.0): a
    mean 0 on paper computed as 1e-17 is no effect to plan for.

    >>> cohens_dz([1 - 2 / 3, 1 / 3 - 0, 1 - 2 / 3]) is None
    True
    >>> cohens_dz([0.1, 0.2, -0.3])
    0.0

    ``sd``: :func:`sd_diff` of the same differences when the caller has it
    (the same float: its SD is computed once).
    """
    if sd is not None:
        if sd == 0.0:  # sd_diff: they do not vary at the resolution
            return None
    elif len(diffs) < 2 or not _varies(diffs):
        return None
    centre = fmean(diffs)
    if at_resolution(centre) == 0.0:
        return 0.0
    return centre / (stdev(diffs) if sd is None else sd)


def sd_diff(diffs: list[float]) -> float | None:
    """Sample SD (n − 1) of the paired differences, the denominator of dz;
    0.0 when they do not vary at :func:`at_resolution`.

    >>> sd_diff([4.0, 9.0, -2.0, 9.0, 6.0]) == stdev([4.0, 9.0, -2.0, 9.0, 6.0])
    True
    >>> sd_diff([1 - 2 / 3, 1 / 3])
    0.0
    """
    if len(diffs) < 2:
        return None
    if not _varies(diffs):
        return 0.0
    return stdev(diffs)


def _varies(diffs: list[float]) -> bool:
    """Whether the differences differ at :func:`at_resolution` (their SD
    there is not 0: statistics.stdev is exact, so 0 only when all are equal).
    """
    return len({at_resolution(d) for d in diffs}) > 1


def rank_biserial(diffs: list[float]) -> float | None:
    """Matched-pairs rank-biserial correlation (Kerby 2014, the simple
    difference formula) on Pratt's ranks: (T+ − T−) / (n(n + 1)/2), the
    favourable minus the unfavourable share of the rank sum of **all** n
    differences. A zero takes its rank in the denominator and counts as
    neither a win nor a loss, as in the test (:func:`signed_ranks`): five
    wins among 14 sessions with nine ties give 60/105 = 0.571, not 1.
    In [−1, 1], positive when a > b; None when n < 2.

    >>> rank_biserial([1.0, 2.0, 3.0, 4.0, 5.0] + [0.0] * 9)
    0.5714285714285714
    >>> rank_biserial([4.0, 9.0, -2.0, 9.0, 6.0])
    0.8666666666666667
    """
    n = len(diffs)
    if n < 2:
        return None
    ranks2, signs, _ = signed_ranks(diffs)
    net2 = sum(rank * sign for rank, sign in zip(ranks2, signs, strict=True))
    return net2 / (n * (n + 1))  # doubled ranks over the doubled rank sum


def welch_t(a: list[float], b: list[float]) -> tuple[float, float] | None:
    """t = (μ₁ − μ₂) / √(σ₁²/n₁ + σ₂²/n₂), two-sided p on Welch–Satterthwaite df.

    >>> t, p = welch_t([40.0, 40.0], [50.0, 70.0])
    >>> round(t, 4), round(p, 4)
    (-2.0, 0.2952)
    """
    if len(a) < 2 or len(b) < 2:
        return None
    va, vb = stdev(a) ** 2 / len(a), stdev(b) ** 2 / len(b)
    if va + vb == 0:
        return None
    t = (fmean(a) - fmean(b)) / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    # stdtr(df, -|t|) is what scipy.stats.t.sf(|t|, df) computes (equal to
    # the last bit, tests/metrics/test_stats_edges.py), without loading scipy.stats
    from scipy.special import stdtr

    return t, float(2 * stdtr(df, -abs(t)))


def cohens_d(a: list[float], b: list[float]) -> float | None:
    """(μ₁ − μ₂) / σ_pooled: signed like every difference, t and dz here
    (a − b; the simulation seed states |μ₁ − μ₂|, whose sign is lost).

    >>> round(cohens_d([1.0, 2.0, 3.0], [3.0, 4.0, 5.0]), 6)
    -2.0
    """
    if len(a) < 2 or len(b) < 2:
        return None
    pooled = ((len(a) - 1) * stdev(a) ** 2 + (len(b) - 1) * stdev(b) ** 2) / (
        len(a) + len(b) - 2
    )
    if pooled == 0:
        return None
    return (fmean(a) - fmean(b)) / math.sqrt(pooled)


def holm(p_values: list[float | None]) -> list[float | None]:
    """Holm step-down adjustment; ``None`` entries are kept and not counted."""
    present = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    adjusted: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, index) in enumerate(present):
        running = max(running, min(1.0, (len(present) - rank) * p))
        adjusted[index] = round(running, 12)
    return adjusted


def compare_paired(
    metric: str,
    a: str,
    b: str,
    values_a: dict[str, float],
    values_b: dict[str, float],
    count_unpaired: bool = False,
    memo: IntervalMemo | None = None,
) -> dict[str, Any]:
    """Compare two methods on the sessions both have scored (diff = a − b).
    Sessions only one of them has a value for (a missing reply, an unscored
    item) are left out; with ``count_unpaired`` (a run with missing replies)
    they are counted: ``unpaired_a`` / ``unpaired_b``, present when not 0.

    >>> c = compare_paired("m", "A", "B", {"s1": 1.0, "s2": 2.0, "s3": 0.5},
    ...                    {"s1": 0.0, "s2": 1.0}, count_unpaired=True)
    >>> c["n"], c["unpaired_a"], "unpaired_b" in c
    (2, 1, False)

    ``memo``: a dict the caller keeps across comparisons, where equal
    differences find their interval computed once (:func:`memo_ci`).
    """
    # sessions in one order whatever order the rows came in: the seeded
    # resamples draw by position (the same interval from SQLite and PostgreSQL)
    shared = sorted(key for key in values_a if key in values_b)
    diffs = [values_a[key] - values_b[key] for key in shared]
    ci = paired_bootstrap_ci(diffs) if memo is None else memo_ci(memo, diffs)
    sd = sd_diff(diffs)
    dz = cohens_dz(diffs, sd)
    sessions = sessions_for_power(dz)
    unpaired = {
        name: left
        for name, left in (
            ("unpaired_a", len(values_a) - len(shared)),
            ("unpaired_b", len(values_b) - len(shared)),
        )
        if left and count_unpaired
    }
    return {
        "metric": metric,
        "a": a,
        "b": b,
        "diff": fmean(diffs) if diffs else None,
        "ci_low": ci[0] if ci else None,
        "ci_high": ci[1] if ci else None,
        "ci_note": CI_NO_SPREAD if ci is None and len(diffs) >= 2 else None,
        "p_value": wilcoxon_p(diffs),
        "p_holm": None,
        "test": "wilcoxon",
        "effect_size": dz,
        "effect_size_name": "dz",
        "rank_biserial": rank_biserial(diffs),
        "sd_diff": sd,
        "sessions_for_80_power": sessions,
        "sessions_for_80_power_note": power_note(dz, len(diffs), sessions),
        "n": len(diffs),
        "n_zero": sum(1 for d in diffs if at_resolution(d) == 0.0),
        **unpaired,
    }


def memo_ci(memo: IntervalMemo, diffs: list[float]) -> tuple[float, float] | None:
    """:func:`paired_bootstrap_ci` of ``diffs``, kept in ``memo`` by their
    floats' bits (two runs of the same methods often give two pairs the
    same differences: each exact bootstrap is done once)."""
    import numpy as np

    key = np.asarray(diffs, dtype=float).tobytes()
    if key not in memo:
        memo[key] = paired_bootstrap_ci(diffs)
    return memo[key]


def add_min_effect(
    comparisons: list[dict[str, Any]], min_effect: float | None
) -> list[dict[str, Any]]:
    """Each comparison with ``min_effect`` (a standardized paired effect dz
    the reader sets: the smallest difference worth detecting, in SDs of the
    differences) and ``sessions_for_min_effect``: the paired sessions the
    paired t-test needs to detect it at α = 0.05 (two-sided) with 80% power
    (:func:`metrics.power.sessions_for_power`). A planning figure that needs
    no data; unchanged without ``min_effect``.

    >>> add_min_effect([{"metric": "al"}], 0.5)
    [{'metric': 'al', 'min_effect': 0.5, 'sessions_for_min_effect': 34}]
    """
    if min_effect is None:
        return comparisons
    sessions = sessions_for_power(min_effect)
    return [
        {**c, "min_effect": min_effect, "sessions_for_min_effect": sessions}
        for c in comparisons
    ]


def valid_min_effect(value: float) -> bool:
    """A minimum effect is a finite dz above 0.

    >>> valid_min_effect(0.3), valid_min_effect(0.0), valid_min_effect(float("nan"))
    (True, False, False)
    """
    return math.isfinite(value) and value > 0


def method_pairs(methods: list[str], max_methods: int) -> list[tuple[str, str]]:
    """Every pair of methods, or with more than ``max_methods`` of them, each
    method against the first (the baseline): the comparisons a run computes
    grow quadratically with methods only up to that bound.

    >>> method_pairs(["A", "B", "C"], 3)
    [('A', 'B'), ('A', 'C'), ('B', 'C')]
    >>> method_pairs(["A", "B", "C"], 2)
    [('A', 'B'), ('A', 'C')]
    """
    if len(methods) <= max_methods:
        return [(a, b) for i, a in enumerate(methods) for b in methods[i + 1 :]]
    return [(methods[0], b) for b in methods[1:]]


HOLM_FAMILY = "metric"  # p-values are adjusted within one metric's comparisons


def compare_all(
    session_values: dict[str, dict[str, dict[str, float]]],
    methods: list[str],
    max_methods: int = 12,
    count_unpaired: bool = False,
) -> list[dict[str, Any]]:
    """Every metric x the method pairs of :func:`method_pairs`. Holm adjusts
    the p-values within each metric across its method pairs (the family is
    the question "do methods differ on this metric?"); across every metric
    of a run it would leave nothing significant on a small file, and metrics
    of one suite are not exchangeable hypotheses. Each comparison names its
    ``family``.

    ``session_values[metric][method][session_id] = value``.

    >>> values = {"m": {"A": {"s1": 1.0, "s2": 2.0}, "B": {"s1": 0.0, "s2": 1.0}}}
    >>> [(c["a"], c["b"], c["diff"], c["family"]) for c in compare_all(values, ["A", "B"])]
    [('A', 'B', 1.0, 'm')]
    """
    pairs = method_pairs(methods, max_methods)
    comparisons = []
    memo: IntervalMemo = {}  # intervals by their differences (memo_ci)
    for metric, by_method in session_values.items():
        family = [
            compare_paired(
                metric,
                a,
                b,
                by_method.get(a, {}),
                by_method.get(b, {}),
                count_unpaired,
                memo,
            )
            for a, b in pairs
        ]
        adjusted = holm([c["p_value"] for c in family])
        for comparison, p_holm in zip(family, adjusted, strict=True):
            comparison.update(p_holm=p_holm, family=metric)
        comparisons += family
    return comparisons
