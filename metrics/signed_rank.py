"""Wilcoxon's signed-rank test and average ranks without ``scipy.stats``.

Loading ``scipy.stats`` costs ~0.8 s of CPU with the GIL held, and a worker
paid it in the middle of every large run's judge calls (issue 32) for two
functions: ``wilcoxon`` (every paired comparison) and ``rankdata``. Both
are written here as scipy 1.17 computes them, to the last bit
(``tests/test_signed_rank.py`` compares them on ~1,200 random
inputs), in numpy and ``scipy.special.ndtr``:

* no zero, no tie and at most 50 differences: the exact null distribution
  of R⁺, built and summed as scipy builds and sums it;
* a zero or a tie and at most 13 differences (zeros counted): every one of
  the 2ⁿ sign flips, as ``permutation_test`` enumerates them; the counts
  are exact (twice a mean rank is an integer), so they are counted as
  integers here;
* otherwise the normal approximation with the tie correction, no
  continuity correction.

Zeros are dropped (``zero_method="wilcox"``), as in :func:`wilcoxon_p`'s
caller.

>>> signed_rank_p([1.0, -2.0, 3.0, 4.0, 5.0])  # R⁺ = 13, reached by 3 of 32 flips: 2 · 3/32
0.1875
>>> signed_rank_p([1.0, 1.0, 1.0, -1.0])
0.625
>>> average_ranks([20.0, 10.0, 20.0]).tolist()
[2.5, 1.0, 2.5]
"""

from __future__ import annotations

import math

EXACT_MAX = 50  # scipy's "auto": the exact distribution up to this many
ENUMERATED_MAX = 13  # 2¹³ flips fit in scipy's 9,999 resamples: exact


def average_ranks(values):
    """``scipy.stats.rankdata(values)`` (mean ranks of ties), as floats."""
    ranks, _ = _ranks_and_ties(values)
    return ranks


def _ranks_and_ties(values):
    """Mean ranks in input order, and each tie group's size (ascending)."""
    import numpy as np

    values = np.asarray(values, dtype=float)
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    sizes = np.diff(np.r_[starts, len(values)])
    ranks = np.empty(len(values))
    ranks[order] = np.repeat(starts + 1 + (sizes - 1) / 2, sizes)
    return ranks, sizes


def signed_rank_p(diffs: list[float]) -> float:
    """Two-sided p of ``scipy.stats.wilcoxon(diffs, zero_method="wilcox")``,
    for differences that are not all zero."""
    import numpy as np

    d = np.asarray(diffs, dtype=float)
    nonzero = d[d != 0]
    ranks, sizes = _ranks_and_ties(np.abs(nonzero))
    r_plus = float(ranks[nonzero > 0].sum())  # halves: exact in any order
    has_ties = bool((sizes > 1).any())
    if len(d) <= EXACT_MAX and not has_ties and len(nonzero) == len(d):
        return _exact(len(d), r_plus)
    if len(d) <= ENUMERATED_MAX:
        return _enumerated(ranks, r_plus)
    return _normal(len(nonzero), r_plus, sizes)


def _exact(n: int, r_plus: float) -> float:
    """scipy's ``WilcoxonDistribution``: its pmf and its sums, element for
    element (numpy's pairwise sums of the same slices)."""
    import numpy as np

    pmf = np.ones(1)
    for k in range(1, n + 1):
        previous, pmf = pmf, np.zeros(k * (k + 1) // 2 + 1)
        pmf[: len(previous)] = previous * 0.5
        pmf[-len(previous) :] += previous * 0.5
    mean = n * (n + 1) / 4
    k = int(r_plus)

    def sf(k: int) -> float:
        return pmf[k:].sum() if k <= mean else 1 - pmf[:k].sum()

    def cdf(k: int) -> float:
        return pmf[: k + 1].sum() if k <= mean else 1 - pmf[k + 1 :].sum()

    return float(min(max(2 * min(sf(k), cdf(k)), 0.0), 1.0))


def _enumerated(ranks, r_plus: float) -> float:
    """Every sign flip of the non-zero differences (a zero's flips repeat
    each outcome alike, so they cancel out of the proportions): how many
    give an R⁺ at most and at least the observed one, as
    ``permutation_test`` counts them."""
    doubled = [round(2 * r) for r in ranks]
    ways = [0] * (sum(doubled) + 1)  # ways[s]: flips whose 2·R⁺ is s
    ways[0] = 1
    for rank in doubled:
        for total in range(len(ways) - 1, rank - 1, -1):
            ways[total] += ways[total - rank]
    observed = round(2 * r_plus)
    at_most, at_least = sum(ways[: observed + 1]), sum(ways[observed:])
    return min(2 * (min(at_most, at_least) / 2 ** len(doubled)), 1.0)


def _normal(count: int, r_plus: float, sizes) -> float:
    from scipy.special import ndtr

    mean = count * (count + 1.0) * 0.25
    variance = count * (count + 1.0) * (2.0 * count + 1.0)
    tie_correction = float(((sizes.astype(float) ** 3) - sizes).sum())
    se = math.sqrt((variance - tie_correction / 2) / 24)  # as np.sqrt: exact
    return float(2 * ndtr(-abs((r_plus - mean) / se)))
