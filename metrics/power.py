"""Sessions needed to detect a paired difference (issue 58): the paired
t-test's power from the noncentral t distribution.

The paired comparisons test with Wilcoxon's signed-rank test; its power is
close to the t-test's (asymptotic relative efficiency 3/π ≈ 0.955 for normal
differences, never below 0.864 for any distribution: Hodges & Lehmann 1956),
so the t-test's sample size is the planning figure, as G*Power and
``statsmodels.stats.power.TTestPower`` give it.

>>> sessions_for_power(0.5), sessions_for_power(0.8), sessions_for_power(-0.2)
(34, 15, 199)
>>> sessions_for_power(0.0) is None
True
"""

from __future__ import annotations

import math

ALPHA = 0.05  # two-sided
TARGET_POWER = 0.8
# beyond this many sessions a figure is no plan (dz below about 0.003): null
MAX_SESSIONS = 1_000_000


def paired_t_power(dz: float, n: int, alpha: float = ALPHA) -> float:
    """Power of the two-sided one-sample (paired) t-test at level ``alpha``
    for a true standardized mean difference ``dz`` with ``n`` pairs:
    P(|T| > t_crit) with T noncentral t, df n − 1, noncentrality dz·√n.

    >>> round(paired_t_power(0.5, 34), 4)
    0.8078
    >>> round(paired_t_power(8.0, 2), 4)  # scipy's lower tail is NaN here
    0.6253
    """
    from scipy.special import nctdtr, stdtrit

    df = n - 1
    critical = float(stdtrit(df, 1 - alpha / 2))
    shift = dz * math.sqrt(n)

    def cdf(t: float) -> float:
        # scipy's nctdtr answers NaN far in a tail (df 1, noncentrality
        # above 7.5: P(T < −t_c) < 1e-13; from about 38: P(T <= t_c)), where
        # the probability is 0 or 1 to double precision
        found = float(nctdtr(df, shift, t))
        if math.isfinite(found):
            return found
        return 0.0 if t < shift else 1.0

    return 1 - cdf(critical) + cdf(-critical)


def sessions_for_power(
    dz: float | None, power: float = TARGET_POWER, alpha: float = ALPHA
) -> int | None:
    """The smallest number of paired sessions n ≥ 2 whose paired t-test
    (two-sided, level ``alpha``) has at least ``power`` against the effect
    ``dz``; None when dz is None or 0 (no effect to detect) or more than
    ``MAX_SESSIONS`` would be needed. Power grows with n: a doubling search
    for an n that reaches it, then bisection."""
    if dz is None or dz == 0 or not math.isfinite(dz):
        return None
    effect = abs(dz)
    if paired_t_power(effect, MAX_SESSIONS, alpha) < power:
        return None
    low, high = 1, 2  # power(low) < target: one session has no test
    while paired_t_power(effect, high, alpha) < power:
        low, high = high, min(2 * high, MAX_SESSIONS)
    while high - low > 1:
        middle = (low + high) // 2
        if paired_t_power(effect, middle, alpha) >= power:
            high = middle
        else:
            low = middle
    return high


def power_note(dz: float | None, n: int, sessions: int | None) -> str | None:
    """Why ``sessions_for_80_power`` is null: ``power_too_few_sessions``
    (fewer than 2 paired sessions: no dz), ``power_no_spread`` (the
    differences do not vary: dz undefined), ``power_no_effect`` (dz = 0),
    ``power_beyond_max`` (more than ``MAX_SESSIONS``); None when a number
    was given.

    >>> power_note(None, 1, None), power_note(0.0, 9, None), power_note(0.5, 9, 34)
    ('power_too_few_sessions', 'power_no_effect', None)
    """
    if sessions is not None:
        return None
    if dz is None:
        return "power_too_few_sessions" if n < 2 else "power_no_spread"
    if dz == 0:
        return "power_no_effect"
    return "power_beyond_max"
