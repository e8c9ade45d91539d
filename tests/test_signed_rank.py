"""metrics/signed_rank.py gives scipy's bits: Wilcoxon's p on every branch
scipy 1.17 takes (exact, enumerated sign flips, normal approximation), and
rankdata's mean ranks, on random inputs with and without ties and zeros."""

from __future__ import annotations

import random

import numpy as np
import pytest
from scipy import stats as scipy_stats

from metrics.signed_rank import average_ranks, signed_rank_p


def _scipy_p(diffs: list[float]) -> float:
    return float(scipy_stats.wilcoxon(diffs, zero_method="wilcox").pvalue)


def _diffs(rng: random.Random, n: int, grid: float | None, zeros: int) -> list[float]:
    """``n`` differences; on a ``grid`` (ties likely) or continuous, with
    ``zeros`` of them exactly zero."""
    values = [rng.gauss(0.3, 1.0) for _ in range(n - zeros)]
    if grid is not None:
        values = [round(v / grid) * grid or grid for v in values]
    values += [0.0] * zeros
    rng.shuffle(values)
    return values


CASES = [  # (sizes, grid, zeros): every branch scipy's "auto" takes
    (range(2, 51), None, 0),  # exact distribution
    # enumerated (scipy's permutation test takes ~0.4 s a call: fewer sizes)
    (range(2, 14, 2), 0.5, 0),  # ties
    (range(3, 14, 2), None, 1),  # a zero
    (range(3, 14, 3), 0.25, 2),  # ties and zeros
    (range(14, 80), 0.5, 0),  # ties, normal
    (range(14, 80), None, 3),  # zeros, normal
    (range(51, 400, 7), None, 0),  # large, normal
    (range(51, 400, 7), 1.0, 5),  # large with ties and zeros
]


@pytest.mark.parametrize(("sizes", "grid", "zeros"), CASES)
def test_wilcoxon_p_equals_scipys_to_the_last_bit(sizes, grid, zeros):
    rng = random.Random(f"{grid}-{zeros}")
    for n in sizes:
        for _ in range(4):
            diffs = _diffs(rng, n, grid, zeros)
            if all(d == 0 for d in diffs):
                continue
            assert signed_rank_p(diffs) == _scipy_p(diffs), diffs


def test_one_sided_extremes_and_a_single_nonzero_difference():
    for diffs in ([1.0, 2.0], [-1.0, -2.0, -3.0], [0.0, 4.0], [0.0, 0.0, -1.0],
                  [5.0] * 13, [5.0] * 14, [1.0] * 50 + [-1.0]):  # fmt: skip
        assert signed_rank_p(diffs) == _scipy_p(diffs), diffs


def test_average_ranks_equal_rankdata():
    rng = np.random.default_rng(7)
    for n in (1, 2, 5, 40, 1000):
        for values in (rng.normal(size=n), rng.integers(0, 4, size=n).astype(float)):
            assert (
                average_ranks(values).tolist() == scipy_stats.rankdata(values).tolist()
            )
