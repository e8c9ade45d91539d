"""The Wilcoxon signed-rank p with Pratt's zero handling (issue 58) equals
scipy's: its permutation test over every sign flip where ours is exact
(scipy's ``zero_method="pratt"`` is never exact with zeros), its normal
approximation beyond ``EXACT_UP_TO`` nonzero differences."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.stats import PermutationMethod, wilcoxon

from metrics.sign_flips import EXACT_UP_TO, doubled_ranks, exact_p
from metrics.stats import compare_paired, wilcoxon_p

# small integer and half-point scores with zeros: ties are the rule, as on
# judge scales
SCORES = st.sampled_from(
    [-3.0, -2.0, -1.5, -1.0, -0.5, 0.0, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 10.0]
)


def every_flip(diffs) -> float:
    return float(
        wilcoxon(
            diffs,
            zero_method="pratt",
            method=PermutationMethod(n_resamples=np.inf),
        ).pvalue
    )


@pytest.mark.slow
@pytest.mark.timeout(1500)
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(SCORES, min_size=2, max_size=11))
def test_equal_to_scipy_s_every_sign_flip_with_pratt_zeros(diffs):
    if not any(diffs):
        assert wilcoxon_p(diffs) is None
        return
    assert wilcoxon_p(diffs) == pytest.approx(every_flip(diffs), rel=1e-12)


def test_the_issue_s_example_counts_the_zeros_ranks():
    diffs = [0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 4.0, -5.0]
    assert wilcoxon_p(diffs) == 0.375  # 0.625 with the zeros dropped first
    assert every_flip(diffs) == pytest.approx(0.375)
    assert float(wilcoxon([1.0, 2.0, 3.0, 4.0, -5.0]).pvalue) == 0.625
    assert (
        compare_paired(
            "m", "A", "B", dict(enumerate(diffs)), dict.fromkeys(range(8), 0.0)
        )["n_zero"]
        == 3
    )


def test_normal_approximation_beyond_the_exact_limit_is_scipy_s_pratt():
    rng = np.random.default_rng(58)
    for size in (EXACT_UP_TO + 1, 260, 400):
        diffs = [float(d) for d in rng.integers(-5, 7, size=size + 40)]
        nonzero = sum(1 for d in diffs if d)
        assert nonzero > EXACT_UP_TO
        expected = wilcoxon(diffs, zero_method="pratt", method="approx").pvalue
        assert wilcoxon_p(diffs) == pytest.approx(float(expected), rel=1e-9)


def test_exact_up_to_the_limit_matches_scipy_s_exact_without_ties_or_zeros():
    rng = np.random.default_rng(5)
    for size in (20, 60, EXACT_UP_TO):
        magnitudes = rng.permutation(np.arange(1, size + 1))
        diffs = [
            float(m * s)
            for m, s in zip(magnitudes, rng.choice([-1, 1], size), strict=True)
        ]
        expected = wilcoxon(diffs, method="exact").pvalue
        assert wilcoxon_p(diffs) == pytest.approx(float(expected), rel=1e-9)


def test_doubled_ranks_are_scipy_s_average_ranks():
    from scipy.stats import rankdata

    values = [0.0, 2.0, 2.0, 1.0, 0.0, 5.0, 2.0]
    assert doubled_ranks(values) == [int(2 * r) for r in rankdata(values)]
    assert exact_p([2], 2) == 1.0
