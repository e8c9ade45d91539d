"""Paired effect sizes and power (issue 58): a paired comparison reports dz,
the matched-pairs rank-biserial and the SD of the differences, no Welch t or
Cohen's d (independent-samples statistics), and the sessions the paired
t-test needs for 80% power, checked against scipy's noncentral t and a
simulation."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats as scipy_stats

from metrics import power, stats
from tests import crafted
from tests.pipeline_support import evaluate


def scipy_power(dz: float, n: int) -> float:
    """Two-sided paired t-test power from scipy.stats.nct and t directly."""
    critical = scipy_stats.t.ppf(0.975, n - 1)
    shift = dz * np.sqrt(n)
    return float(
        scipy_stats.nct.sf(critical, n - 1, shift)
        + scipy_stats.nct.cdf(-critical, n - 1, shift)
    )


def test_a_paired_comparison_has_paired_effect_sizes_only():
    found = stats.compare_paired(
        "al",
        "Ours",
        "Base",
        {"s1": 62.0, "s2": 70.0, "s3": 55.0, "s4": 80.0, "s5": 66.0},
        {"s1": 58.0, "s2": 61.0, "s3": 57.0, "s4": 71.0, "s5": 60.0},
    )
    assert not {"welch_t", "welch_p", "cohens_d"} & set(found)
    assert found["effect_size_name"] == "dz"
    diffs = np.array([4.0, 9.0, -2.0, 9.0, 6.0])
    assert found["sd_diff"] == pytest.approx(diffs.std(ddof=1), rel=1e-12)
    assert found["effect_size"] == pytest.approx(diffs.mean() / diffs.std(ddof=1))
    assert found["rank_biserial"] == pytest.approx(13 / 15)
    assert found["sessions_for_80_power"] == 9
    assert found["sessions_for_80_power_note"] is None


def test_dz_and_sd_diff_equal_scipy_s_one_sample_t():
    """Issue 58 audit: d_z = t / √n of scipy's one-sample t-test on the
    differences, and sd_diff = scipy.stats.tstd (n − 1), on random samples
    with ties and zeros; below the resolution the differences do not vary."""
    rng = np.random.default_rng(5858)
    for _ in range(200):
        n = int(rng.integers(2, 40))
        diffs = [float(v) for v in rng.integers(-6, 9, size=n) / 4]
        if len(set(diffs)) < 2:
            continue
        t = scipy_stats.ttest_1samp(diffs, 0.0).statistic
        assert stats.cohens_dz(diffs) == pytest.approx(t / np.sqrt(n), abs=1e-12)
        assert stats.sd_diff(diffs) == pytest.approx(scipy_stats.tstd(diffs), rel=1e-12)
    assert stats.cohens_dz([0.5, 0.5, 0.5]) is None and stats.sd_diff([0.5]) is None


def _rank_biserial_from_scipy(diffs: list[float]) -> float:
    """Kerby's simple difference on Pratt's ranks, from scipy's rankdata."""
    d = np.asarray(diffs)
    ranks = scipy_stats.rankdata(np.abs(d))
    ranks[d == 0] = 0.0
    n = len(d)
    return float((ranks[d > 0].sum() - ranks[d < 0].sum()) / (n * (n + 1) / 2))


def test_rank_biserial_equals_an_independent_computation():
    rng = np.random.default_rng(58)
    for _ in range(300):
        n = int(rng.integers(2, 40))
        diffs = [float(v) for v in rng.integers(-4, 5, size=n) / 2]
        assert stats.rank_biserial(diffs) == pytest.approx(
            _rank_biserial_from_scipy(diffs), abs=1e-12
        )
    # zeros count in the denominator as neither a win nor a loss
    assert stats.rank_biserial([1.0, 2.0, 3.0, 4.0, 5.0] + [0.0] * 9) == 60 / 105
    assert stats.rank_biserial([0.0, 0.0]) == 0.0
    assert stats.rank_biserial([1.0]) is None


def test_rank_biserial_agrees_with_scipy_s_pratt_statistic():
    """T+ as scipy's Wilcoxon (Pratt, one-sided 'greater') reports it."""
    diffs = [0.0, 0.0, 1.0, -2.0, 3.0, 3.0, -0.5, 4.0]
    t_plus = scipy_stats.wilcoxon(
        diffs, zero_method="pratt", alternative="greater", method="approx"
    ).statistic
    n = len(diffs)
    ranks = scipy_stats.rankdata(np.abs(diffs))
    nonzero_sum = ranks[np.asarray(diffs) != 0].sum()
    expected = (2 * t_plus - nonzero_sum) / (n * (n + 1) / 2)
    assert stats.rank_biserial(diffs) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("dz", [0.05, 0.2, 0.35, 0.5, 0.8, 1.2, 2.0, 3.5, -0.6])
def test_sessions_for_power_against_scipy_s_noncentral_t(dz):
    n = power.sessions_for_power(dz)
    assert n is not None and n >= 2
    assert scipy_power(abs(dz), n) >= 0.8
    if n > 2:
        assert scipy_power(abs(dz), n - 1) < 0.8
    assert power.paired_t_power(abs(dz), n) == pytest.approx(
        scipy_power(abs(dz), n), abs=1e-10
    )


def integrated_power(dz: float, n: int) -> float:
    """Power by numerical integration over S = sqrt(chi2(n-1)/(n-1)):
    E[P(Z > t_c S - delta) + P(Z < -t_c S - delta)] (scipy.integrate)."""
    from scipy import integrate

    df, shift = n - 1, dz * np.sqrt(n)
    critical = scipy_stats.t.ppf(0.975, df)
    chi = scipy_stats.chi(df, scale=1 / np.sqrt(df))

    def inner(s: float) -> float:
        tails = scipy_stats.norm.sf(critical * s - shift)
        return chi.pdf(s) * (tails + scipy_stats.norm.cdf(-critical * s - shift))

    return integrate.quad(inner, 0, np.inf, limit=200)[0]


@pytest.mark.parametrize("dz", [7.0, 8.0, 9.5, 12.0, 40.0])
def test_large_effects_on_two_or_three_sessions(dz):
    """scipy's noncentral t CDF is NaN far in a tail (df 1, noncentrality
    above 7.5): the power is integrated instead, and the plan found for
    dz 8 and 9.5 was 2 sessions where 3 are needed (the witness found it)."""
    for n in (2, 3):
        assert power.paired_t_power(dz, n) == pytest.approx(
            integrated_power(dz, n), abs=1e-7
        )
    n = power.sessions_for_power(dz)
    assert integrated_power(dz, n) >= 0.8
    if n > 2:
        assert integrated_power(dz, n - 1) < 0.8


def test_power_of_the_planned_sessions_in_a_simulation():
    """dz = 0.5 asks 34 sessions: simulated paired t-tests (fixed seed)
    reject at about 80%, and 33 sessions at less."""
    rng = np.random.default_rng(2014)
    for n, low, high in ((34, 0.797, 0.820), (20, 0.55, 0.59)):
        diffs = rng.normal(0.5, 1.0, size=(40_000, n))
        p = scipy_stats.ttest_1samp(diffs, 0.0, axis=1).pvalue
        rejected = float(np.mean(p < 0.05))
        assert low < rejected < high, (n, rejected)
        assert power.paired_t_power(0.5, n) == pytest.approx(rejected, abs=0.01)


def test_power_is_null_with_a_reason():
    no_effect = stats.compare_paired("m", "A", "B", {1: 1.0, 2: 0.0}, {1: 0.0, 2: 1.0})
    assert no_effect["effect_size"] == 0.0
    assert no_effect["sessions_for_80_power"] is None
    assert no_effect["sessions_for_80_power_note"] == "power_no_effect"
    same = stats.compare_paired("m", "A", "B", {1: 2.0, 2: 3.0}, {1: 1.0, 2: 2.0})
    assert same["sessions_for_80_power_note"] == "power_no_spread"
    assert same["sd_diff"] == 0.0
    one = stats.compare_paired("m", "A", "B", {1: 2.0}, {1: 1.0})
    assert one["sessions_for_80_power_note"] == "power_too_few_sessions"
    assert power.sessions_for_power(0.001) is None  # past 1,000,000 sessions
    assert power.power_note(0.001, 9, None) == "power_beyond_max"


def test_min_effect_plans_the_sessions_for_an_effect_the_reader_sets():
    [found] = stats.add_min_effect([{"metric": "al"}], 0.3)
    assert found["min_effect"] == 0.3
    n = found["sessions_for_min_effect"]
    assert scipy_power(0.3, n) >= 0.8 > scipy_power(0.3, n - 1)
    assert stats.add_min_effect([{"metric": "al"}], None) == [{"metric": "al"}]


@pytest.fixture
def one_run(app_factory, tmp_path, judge_server):
    app = app_factory(JUDGE_API_URL=judge_server.url, JUDGE_MODEL="scripted")
    path = crafted.write(tmp_path / "a.jsonl", crafted.alignment_sessions())
    document = evaluate(app, path, judge_server, suites=["alignment"])
    return app, app.extensions["storage"].runs.get_run(document["run"]["id"])


def test_min_effect_on_the_cli_and_the_api(one_run):
    app, run = one_run
    runner = app.test_cli_runner()
    result = runner.invoke(
        args=["report", run.token, "--format", "json", "--min-effect", "0.5"]
    )
    assert result.exit_code == 0, result.output
    comparisons = json.loads(result.stdout)["comparisons"]
    assert comparisons and all(c["sessions_for_min_effect"] == 34 for c in comparisons)
    plain = runner.invoke(args=["report", run.token, "--format", "json"])
    assert "sessions_for_min_effect" not in json.loads(plain.stdout)["comparisons"][0]
    refused = runner.invoke(
        args=["report", run.token, "--format", "json", "--min-effect", "0"]
    )
    assert refused.exit_code == 2
    client = app.test_client()
    body = client.get(f"/api/v1/runs/{run.token}/results?min_effect=0.8").get_json()
    assert {c["sessions_for_min_effect"] for c in body["comparisons"]} == {15}
    bad = client.get(f"/api/v1/runs/{run.token}/results?min_effect=-1")
    assert bad.status_code == 400
    assert bad.get_json()["errors"][0]["code"] == "bad_min_effect"
