"""The exact null distribution of the Wilcoxon signed-rank sum T+ with
Pratt's zero handling and average ranks of ties (issues 48 and 58).

Under the null each nonzero difference is positive or negative with
probability ½, independently, so T+ is the sum of a random subset of the
nonzero differences' ranks. Average ranks of ties are half-integers, so
twice the ranks are integers and the distribution of 2·T+ is a vector of
probabilities indexed by integers, built one rank at a time (subset sums):
exact (no tolerance when comparing the observed statistic), for any ties,
with or without zeros, in well under a millisecond for the 9-session runs a
comparison of two runs asks hundreds of tests of. ``scipy.stats.wilcoxon``
with ``zero_method="pratt"`` never uses the exact distribution when there
are zeros; its permutation test over every sign flip
(``method=PermutationMethod(n_resamples=np.inf)``) is the reference
``tests/metrics/test_sign_flips.py`` compares with.
"""

from __future__ import annotations

# up to this many nonzero differences the exact distribution is counted
# (twice the ranks sum to at most n(n+1) = 40,200: a vector of that length,
# built in n numpy steps); beyond it, the normal approximation
EXACT_UP_TO = 200


def doubled_ranks(magnitudes: list[float]) -> list[int]:
    """Twice the average ranks (1-based) of ``magnitudes``: integers.

    >>> doubled_ranks([0.0, 0.0, 3.0, 1.0, 3.0])
    [3, 3, 9, 6, 9]
    """
    order = sorted(range(len(magnitudes)), key=magnitudes.__getitem__)
    ranks = [0] * len(magnitudes)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and (
            magnitudes[order[end + 1]] == magnitudes[order[start]]
        ):
            end += 1
        # positions start..end (0-based) hold ranks start+1..end+1; their
        # average doubled is start + end + 2
        for position in range(start, end + 1):
            ranks[order[position]] = start + end + 2
        start = end + 1
    return ranks


def exact_p(ranks2: list[int], observed2: int) -> float:
    """Two-sided p, 2·min(P(T+ ≤ t), P(T+ ≥ t)) capped at 1, of the doubled
    statistic ``observed2`` = 2·T+ under random signs of the doubled ranks
    ``ranks2`` (the nonzero differences' only).

    >>> exact_p([2, 4, 6, 8, 10], 30)  # five wins: 1/32 each side
    0.0625
    >>> exact_p([8, 10, 12, 14, 16], 44)  # [0, 0, 0, 1, 2, 3, 4, -5], Pratt
    0.375
    """
    import numpy as np

    total = sum(ranks2)
    null = np.zeros(total + 1)
    null[0] = 1.0
    reach = 0
    for rank in ranks2:  # halve and add the shifted copy: one sign each
        reach += rank
        shifted = null[: reach + 1 - rank].copy()
        null[: reach + 1] *= 0.5
        null[rank : reach + 1] += 0.5 * shifted
    below = float(null[: observed2 + 1].sum())
    above = float(null[observed2:].sum())
    return min(1.0, 2.0 * min(below, above))
