"""Intervals from few sessions (issue 58, F6): fewer than 10 sessions give the
exact bootstrap distribution's quantiles instead of 2,000 random resamples,
and an interval of width 0 is never shown as an interval (null, with the
note ``ci_no_spread``). Checked against a brute-force enumeration of every
ordered resample (nⁿ of them) with numpy's inverted-CDF quantile."""

from __future__ import annotations

from fractions import Fraction
from itertools import product

import numpy as np
import pytest
from scipy.stats import multinomial

from metrics import basis, stats
from metrics.suites.pairwise.summary import _winrate_ci


def brute_force(values: list[float]) -> tuple[float, float]:
    """Every one of the nⁿ equally likely ordered resamples' means; the 2.5%
    and 97.5% quantiles by the inverse of the empirical CDF."""
    n = len(values)
    draws = np.array(np.unravel_index(np.arange(n**n), (n,) * n)).T
    found = np.asarray(values)[draws].mean(axis=1)
    low, high = np.quantile(found, [0.025, 0.975], method="inverted_cdf")
    return float(low), float(high)


@pytest.mark.parametrize(
    "diffs",
    [
        [1.0, 2.0, 3.0, 4.0],
        [4.0, 9.0, -2.0, 9.0, 6.0],
        [0.0, 0.0, 1.0, 0.0, 1.0, -1.0],
        [0.5, -0.25, 0.125, 2.0, -3.0, 1.0, 0.0],
        [1.0, 1.0, 1.0, 0.0, 1.0, 1.0],
    ],
)
def test_fewer_than_ten_sessions_give_the_exact_bootstrap_quantiles(diffs):
    low, high = stats.paired_bootstrap_ci(diffs)
    expected = brute_force(diffs)
    assert (low, high) == pytest.approx(expected, abs=1e-12)


def test_nine_sessions_are_exact_and_ten_are_resampled():
    rng = np.random.default_rng(6)
    nine = [float(v) for v in rng.integers(-5, 6, size=9)]
    counts, weights = stats.exact_resamples(9)
    assert counts.shape == (24310, 9) and int(weights.sum()) == 9**9
    assert (counts.sum(axis=1) == 9).all()
    # each resample's weight is its multinomial probability (scipy) times 9⁹
    probabilities = multinomial.pmf(counts, 9, [1 / 9] * 9)
    assert weights == pytest.approx(probabilities * 9**9, rel=1e-9)
    # the quantiles by a plain walk up the cumulative probability (exact)
    means = [sum(c * v for c, v in zip(row, nine, strict=True)) / 9 for row in counts]
    atoms = sorted(zip(means, (int(w) for w in weights), strict=True))
    expected = []
    for level in (Fraction(1, 40), Fraction(39, 40)):
        reached = 0
        for value, weight in atoms:
            reached += weight
            if Fraction(reached, 9**9) >= level:
                expected.append(value)
                break
    assert stats.paired_bootstrap_ci(nine) == pytest.approx(tuple(expected), abs=1e-12)
    ten = [*nine, 3.0]
    values = np.array(ten)
    resampled = np.random.default_rng(stats.BOOTSTRAP_SEED).integers(
        0, 10, size=(stats.BOOTSTRAP_RESAMPLES, 10)
    )
    random_bounds = np.quantile(values[resampled].mean(axis=1), [0.025, 0.975])
    assert stats.paired_bootstrap_ci(ten) == pytest.approx(tuple(random_bounds))


def test_an_interval_of_width_zero_is_null_with_a_note():
    # the case: four sessions of one difference gave [0.125, 0.125]
    assert stats.paired_bootstrap_ci([0.125] * 4) is None
    found = stats.compare_paired(
        "binary", "A", "B", dict.fromkeys("wxyz", 0.375), dict.fromkeys("wxyz", 0.25)
    )
    assert (found["ci_low"], found["ci_high"], found["ci_note"]) == (
        None,
        None,
        "ci_no_spread",
    )
    spread = stats.compare_paired("m", "A", "B", {1: 1.0, 2: 2.0}, {1: 0.0, 2: 0.0})
    assert spread["ci_note"] is None and spread["ci_low"] == 1.0
    # many sessions of one difference: the random resamples have no width either
    assert stats.paired_bootstrap_ci([2.0] * 30) is None
    assert stats.compare_paired("m", "A", "B", {1: 1.0}, {1: 0.0})["ci_note"] is None


def test_the_value_basis_interval_is_exact_under_ten_sessions():
    """AL average: strata are rounds; a resample's value is the mean over
    rounds of Σ AL / count, both methods from the same resample."""
    a = {
        "s1": {1: (60.0, 1.0), 2: (70.0, 1.0)},
        "s2": {1: (50.0, 1.0)},
        "s3": {1: (80.0, 1.0), 2: (90.0, 1.0), 3: (85.0, 1.0)},
        "s4": {1: (40.0, 1.0), 2: (45.0, 1.0)},
    }
    b = {
        "s1": {1: (55.0, 1.0), 2: (60.0, 1.0)},
        "s2": {1: (52.0, 1.0)},
        "s3": {1: (70.0, 1.0), 2: (72.0, 1.0), 3: (75.0, 1.0)},
        "s4": {1: (41.0, 1.0), 2: (40.0, 1.0)},
    }
    sessions = list(a)

    def delta(drawn: list[str]) -> float:
        return basis.value({i: a[s] for i, s in enumerate(drawn)}) - basis.value(
            {i: b[s] for i, s in enumerate(drawn)}
        )

    found = [delta([sessions[i] for i in draw]) for draw in product(range(4), repeat=4)]
    expected = np.quantile(found, [0.025, 0.975], method="inverted_cdf")
    assert basis.delta_ci(a, b) == pytest.approx(tuple(expected), abs=1e-12)
    same = {s: {1: (1.0, 1.0)} for s in sessions}
    zero = {s: {1: (0.0, 1.0)} for s in sessions}
    assert basis.delta_interval(same, zero) == (None, "ci_no_spread")


def test_the_win_rate_interval_of_identical_shares_is_null_with_a_note():
    flat = _winrate_ci([1.0, 1.0, 1.0])
    assert (flat["mean"], flat["ci_low"], flat["ci_high"]) == (1.0, None, None)
    assert flat["ci_note"] == "ci_no_spread"
    varied = _winrate_ci([1.0, 0.5, 0.0, 1.0])
    assert (varied["ci_low"], varied["ci_high"]) == pytest.approx(
        brute_force([1.0, 0.5, 0.0, 1.0])
    )
    assert varied["ci_note"] is None


def exact_values(rng, n: int, k: int, kind: int) -> np.ndarray:
    """Session values of the kinds that give float ties and signed zeros."""
    if kind == 0:
        return rng.random((n, k)) * 100
    if kind == 1:  # thirds: sums equal on paper differ in the last bit
        return rng.integers(-3, 4, (n, k)) / 3
    if kind == 2:  # negative zeros beside sevenths
        return np.where(rng.random((n, k)) < 0.5, -0.0, rng.integers(0, 3, (n, k)) / 7)
    return rng.normal(size=(n, k)) * 1e-3


@pytest.mark.parametrize("kind", range(4))
def test_resample_sums_are_numpys_bits(kind):
    """Issue 61 item 3: the exact bootstrap's sums, a unit at a time on
    contiguous columns, are bit for bit numpy's (counts * values).sum(axis=1)
    and (counts[:, :, None] * values[None]).sum(axis=1) that froze the
    reference (signed zeros included): the faster sum moves no interval."""
    rng = np.random.default_rng(61 + kind)
    for n in range(2, stats.EXACT_BOOTSTRAP_BELOW):
        counts = stats.exact_resamples(n)[0]
        for k in (1, 2, 3, 7, 13, 40):
            values = exact_values(rng, n, k, kind)
            expected = (counts[:, :, None] * values[None]).sum(axis=1)
            assert stats.resample_sums(values).tobytes() == expected.tobytes(), (n, k)
            column = values[:, 0].copy()
            expected = (counts * column).sum(axis=1)
            assert stats.resample_sums(column).tobytes() == expected.tobytes(), n


@pytest.mark.parametrize("kind", range(4))
def test_a_quantile_from_its_tail_is_the_quantile_of_every_value(kind):
    """The quantile sorts only its tail (integer weights): the same value as
    a stable sort of every resample, whatever the ties."""
    rng = np.random.default_rng(7 + kind)
    levels = [0.025, 0.975, 0.5, 1e-6, 1 - 1e-6, 0.0, 1.0]
    for n in range(2, stats.EXACT_BOOTSTRAP_BELOW):
        weights = stats.exact_resamples(n)[1]
        for _ in range(4):
            means = stats.resample_sums(exact_values(rng, n, 1, kind)[:, 0]) / n
            order = np.argsort(means, kind="stable")
            cumulative = np.cumsum(weights[order])
            found = np.searchsorted(cumulative, [x * cumulative[-1] for x in levels])
            expected = [float(means[order][min(i, len(means) - 1)]) for i in found]
            got = stats.weighted_quantiles(means, weights, levels)
            assert np.array(got).tobytes() == np.array(expected).tobytes(), n


def test_one_method_is_resampled_once_however_many_it_is_compared_with():
    """The cold comparison's work is bounded: six methods x nine sessions,
    15 pairs, each method's value on the 24,310 exact resamples is computed
    once per column (a numerator and a denominator sum per method), not once
    per pair and side; the intervals are those computed pair by pair."""
    rng = np.random.default_rng(9)
    sessions = [f"s{i}" for i in range(9)]
    methods = [f"m{j}" for j in range(6)]
    values = {
        m: {
            s: {r: (float(rng.integers(0, 100)), 1.0) for r in (1, 2, 3)}
            for s in sessions
        }
        for m in methods
    }
    pairs = [(a, b) for i, a in enumerate(methods) for b in methods[i + 1 :]]
    calls = []
    original = basis.resample_sums

    def counted(matrix):
        calls.append(matrix.shape)
        return original(matrix)

    memo: dict = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(basis, "resample_sums", counted)
        shared = [
            basis.delta_interval(values[a], values[b], memo=memo) for a, b in pairs
        ]
    assert len(calls) == 2 * len(methods)  # 12, not 2 x 2 x 15 = 60
    assert shared == [basis.delta_interval(values[a], values[b]) for a, b in pairs]
