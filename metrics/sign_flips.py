"""The Wilcoxon signed-rank p-value of a few tied differences, from every
sign flip at once (issue 48).

``scipy.stats.wilcoxon`` is the reference and stays the test everywhere
else. With ties and at most 13 differences its default ("auto") runs an
exact permutation test: every one of the 2**n sign flips, each statistic
computed by a Python call (``numpy.apply_along_axis``), 45 ms a test.
Comparing two 9-session runs asks some hundred such tests, 5–6 s of a
comparison a reader waits for. The same enumeration as one matrix product
takes a fraction of a millisecond and gives scipy's p exactly:
``tests/test_sign_flips.py`` checks equality with scipy on thousands of
tied samples.
"""

from __future__ import annotations

EVERY_FLIP_UP_TO = 13  # scipy enumerates them while 2**n <= 9999 resamples
# scipy's permutation_test counts a null value within 100 ulp of the
# observed statistic as equal to it
TOLERANCE = 100


def needs_every_flip(nonzero) -> bool:
    """Whether scipy's default would run its permutation test: ties among
    at most ``EVERY_FLIP_UP_TO`` nonzero differences (without ties it
    uses the exact distribution, beyond it the normal approximation)."""
    import numpy as np

    magnitudes = np.abs(np.asarray(nonzero, dtype=float))
    return 2 <= len(magnitudes) <= EVERY_FLIP_UP_TO and len(
        np.unique(magnitudes)
    ) < len(magnitudes)


def every_flip_p(nonzero) -> float:
    """Two-sided p of the signed-rank sum over all 2**n sign flips, as
    ``scipy.stats.permutation_test(..., permutation_type="samples")``
    computes it for ``wilcoxon``: no zeros among ``nonzero``.

    >>> every_flip_p([1.0, 1.0, 2.0, -3.0])
    0.75
    >>> every_flip_p([2.0, 2.0, 3.0, 4.0, 5.0])
    0.0625
    """
    import numpy as np
    from scipy.stats import rankdata

    d = np.asarray(nonzero, dtype=float)
    n = len(d)
    ranks = rankdata(np.abs(d))  # average ranks of ties, as scipy's test
    observed = float(ranks[d > 0].sum())
    flips = (np.arange(2**n)[:, None] >> np.arange(n)) & 1  # every subset
    null = flips.astype(float) @ ranks
    gamma = abs(np.finfo(float).eps * TOLERANCE * observed)
    less = np.count_nonzero(null <= observed + gamma) / 2**n
    greater = np.count_nonzero(null >= observed - gamma) / 2**n
    return float(np.clip(min(less, greater) * 2, 0.0, 1.0))
