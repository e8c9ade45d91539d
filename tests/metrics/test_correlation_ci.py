"""Agreement per criterion (metrics/correlation_ci.py), issue 58 audit: each
statistic and its interval against an independent computation (scipy,
scikit-learn, numpy written out here); the module's doctests run too."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from metrics import correlation_ci


def pairs(seed: int, n: int, points: int = 5):
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, points + 1, size=n)
    noise = rng.integers(-1, 2, size=n)
    return truth.tolist(), np.clip(truth + noise, 1, points).tolist()


@pytest.mark.parametrize("seed", range(6))
def test_coefficients_and_intervals_are_scipy_s(seed):
    judged, labelled = pairs(seed, 12 + 7 * seed)
    n = len(judged)
    found = correlation_ci.criterion_agreement(judged, labelled)
    result = stats.pearsonr(judged, labelled)
    assert found["pearson"] == pytest.approx(result.statistic, abs=1e-12)
    assert found["pearson_ci"] == pytest.approx(
        list(result.confidence_interval(0.95)), abs=1e-12
    )
    z = stats.norm.ppf(0.975)
    rho = stats.spearmanr(judged, labelled).statistic
    tau = stats.kendalltau(judged, labelled).statistic  # tau-b
    for name, value, se in (
        ("spearman", rho, math.sqrt((1 + rho**2 / 2) / (n - 3))),  # Bonett-Wright
        ("kendall", tau, math.sqrt(0.437 / (n - 4))),  # Fieller et al.
    ):
        assert found[name] == pytest.approx(value, abs=1e-12)
        ends = [math.tanh(math.atanh(value) + s * z * se) for s in (-1, 1)]
        assert found[f"{name}_ci"] == pytest.approx(ends, abs=1e-12)


def quadratic_kappa(a, b, points) -> float:
    """Cohen's κ with quadratic weights from its definition: 1 − Σ w·O / Σ w·E
    over the contingency table of the scale's points."""
    k = len(points)
    index = {p: i for i, p in enumerate(points)}
    observed = np.zeros((k, k))
    for x, y in zip(a, b, strict=True):
        observed[index[x], index[y]] += 1
    observed /= observed.sum()
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    grid = np.arange(k)
    weights = (grid[:, None] - grid[None, :]) ** 2 / (k - 1) ** 2
    return float(1 - (weights * observed).sum() / (weights * expected).sum())


@pytest.mark.parametrize("seed", range(6))
def test_weighted_kappa_is_its_definition(seed):
    judged, labelled = pairs(seed, 30)
    found = correlation_ci.weighted_kappa(judged, labelled, [1, 5])
    assert found == pytest.approx(
        quadratic_kappa(judged, labelled, [1, 2, 3, 4, 5]), abs=1e-12
    )


@pytest.mark.slow
def test_the_kappa_interval_is_scikit_learn_s_kappa_on_each_resample():
    """The closed form on every resample is scikit-learn's quadratic κ of
    that resample; a resample where a side is constant is left out and
    counted; the ends are numpy's quantiles of the rest."""
    from sklearn.metrics import cohen_kappa_score

    judged, labelled = [1, 2, 3, 4, 2, 3, 1, 4], [1, 2, 4, 4, 1, 3, 2, 3]
    ends, left_out = correlation_ci.kappa_interval(judged, labelled)
    rng = np.random.default_rng(correlation_ci.KAPPA_SEED)
    picks = rng.integers(0, len(judged), size=(correlation_ci.KAPPA_RESAMPLES, 8))
    kappas, constant = [], 0
    for row in picks:
        a, b = [judged[i] for i in row], [labelled[i] for i in row]
        if len(set(a)) < 2 or len(set(b)) < 2:
            constant += 1
            continue
        # every point of the scale as a label: a resample without a middle
        # point keeps the points' distances
        kappas.append(cohen_kappa_score(a, b, labels=[1, 2, 3, 4], weights="quadratic"))
    assert left_out == constant
    assert ends == pytest.approx(list(np.quantile(kappas, [0.025, 0.975])), abs=1e-9)
