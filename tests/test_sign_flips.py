"""The every-sign-flip Wilcoxon p equals scipy's on tied samples."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.stats import wilcoxon

from metrics.sign_flips import EVERY_FLIP_UP_TO, every_flip_p, needs_every_flip
from metrics.stats import wilcoxon_p

# small integer and half-point scores: ties are the rule, as on judge scales
SCORES = st.sampled_from([-3.0, -2.0, -1.5, -1.0, -0.5, 0.5, 1.0, 1.5, 2.0, 3.0, 10.0])


# scipy's side takes up to a second an example (its permutation test over
# every sign flip): 60 of them, 85 s beside other work, 386 s under heavy load
@pytest.mark.timeout(1500)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(SCORES, min_size=2, max_size=EVERY_FLIP_UP_TO))
def test_equal_to_scipy_on_tied_samples(diffs):
    if not needs_every_flip(diffs):
        return
    assert every_flip_p(diffs) == float(wilcoxon(diffs).pvalue)


def test_scipy_decides_the_other_cases():
    distinct = [1.0, -2.0, 3.0, 4.5, 5.0]
    assert not needs_every_flip(distinct)  # the exact distribution
    assert not needs_every_flip([1.0] * (EVERY_FLIP_UP_TO + 1))  # normal
    assert wilcoxon_p(distinct) == float(wilcoxon(distinct).pvalue)


def test_a_real_comparison_s_ties():
    # nine sessions' mean AL differences of two methods on a 0-100 scale
    diffs = list(np.array([5, 5, -5, 10, 10, 15, 5, -10, 20], dtype=float))
    assert wilcoxon_p(diffs) == float(wilcoxon(diffs).pvalue)
