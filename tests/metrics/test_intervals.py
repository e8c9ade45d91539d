"""Counts and intervals that mean what they say (issue 45): the Wilcoxon p
(Pratt's zeros since issue 58), a win-rate interval inside [0, 1], Bradley-Terry
intervals without separated resamples, a disconnected design named as such,
and a Δ equal to the difference of the values shown."""

from __future__ import annotations

import random
from types import SimpleNamespace

import numpy as np
import pytest
from scipy import stats as scipy_stats

from metrics import stats
from metrics.suites.pairwise import ranking
from metrics.suites.pairwise.bt_separation import separation
from metrics.suites.pairwise.summary import _separation, _winrate_ci
from reports import tables


def test_wilcoxon_is_exact_on_the_nonzero_differences():
    """Without zeros, matched against scipy's exact test (no ties among the
    differences, n <= 30); with zeros, Pratt's ranks (issue 58):
    tests/metrics/test_sign_flips.py."""
    rng = random.Random(7)
    for _ in range(200):
        nonzero = rng.sample(range(1, 200), rng.randint(2, 30))
        signed = [d * rng.choice((-1, 1)) / 10 for d in nonzero]
        expected = scipy_stats.wilcoxon(
            signed, zero_method="wilcox", method="exact"
        ).pvalue
        assert stats.wilcoxon_p(signed) == pytest.approx(expected, rel=1e-12)
    # the issue-45 case: five wins among 14 sessions, nine ties; with Pratt's
    # ranks the wins take ranks 10..14, and T+ is still the largest sum
    assert stats.wilcoxon_p([1.0, 2.0, 3.0, 4.0, 5.0] + [0.0] * 9) == 0.0625


def test_the_win_rate_interval_stays_within_zero_and_one():
    shares = [1.0] * 7 + [0.5, 0.0]
    t_interval = stats.mean_ci(shares)
    assert t_interval["ci_high"] > 1.0  # what was shown before
    found = _winrate_ci(shares)
    assert 0.0 <= found["ci_low"] <= found["mean"] <= found["ci_high"] <= 1.0


def test_bt_leaves_separated_resamples_out_and_refuses_past_five_percent():
    # A beats B in 5 of 6 sessions: many resamples hold A's wins only
    lopsided = [(f"s{i}", "A", "B", 1.0) for i in range(5)] + [("s5", "A", "B", 0.0)]
    found = ranking.bt_with_ci(lopsided, ["A", "B"], "B")
    assert found["A"]["mean"] == pytest.approx(np.log(5), abs=1e-3)  # 5 wins to 1
    assert found["A"]["resamples_separated"] > 0.05 * ranking.BT_RESAMPLES
    assert found["A"]["ci_low"] is None and found["A"]["ci_high"] is None
    # balanced enough that no resample separates: an interval, none left out
    even = [(f"s{i}", "A", "B", 1.0 if i % 2 else 0.0) for i in range(40)]
    balanced = ranking.bt_with_ci(even, ["A", "B"], "B")
    assert balanced["A"]["ci_low"] is not None
    assert balanced["A"]["resamples_separated"] <= 0.05 * ranking.BT_RESAMPLES


def test_groups_never_compared_are_named_as_such():
    outcomes = [
        ("s1", "A", "B", 1.0),
        ("s1", "B", "A", 0.0),
        ("s2", "A", "B", 0.5),
        ("s1", "C", "D", 0.5),
        ("s2", "C", "D", 1.0),
    ]
    assert _separation(outcomes, ["A", "B", "C", "D"]) == {"groups": "A, B; C, D"}
    wins = np.array([[0, 1, 0], [1, 0, 0], [0, 0, 0]])
    assert separation(wins, ["A", "B", "C"]) == {"apart": [["A", "B"], ["C"]]}


def test_a_shown_delta_is_the_difference_of_the_shown_values():
    """0.844 and 0.836 both show as 0.84: the Δ beside them is 0.00, not the
    +0.01 their unrounded difference (0.008) rounds to."""
    metric = SimpleNamespace(id="slot_f1", compare="slot_f1")
    comparisons = [
        {
            "metric": "slot_f1",
            "a": "Base",
            "b": "Ours",
            "diff": -0.008,
            "ci_low": -0.02,
            "ci_high": 0.01,
            "p_value": 0.5,
            "n": 9,
        }
    ]
    summary = {"Base": {"slot_f1": 0.836}, "Ours": {"slot_f1": 0.844}}
    found = tables._column_versus(
        comparisons, summary, metric, ["Base", "Ours"], "Base"
    )
    assert found["Ours"]["diff"] == pytest.approx(0.008)
    assert found["Ours"]["shown_diff"] == 0.0


def _pairwise_rows(outcomes) -> list[dict]:
    """Primary pairwise rows of (session, method, opponent, value)."""
    return [
        {
            "session_id": s,
            "round": 1,
            "method": a,
            "metric": f"pairwise@{b}",
            "value": v,
            "status": "ok",
            "detail": {"primary": True},
        }
        for s, a, b, v in outcomes
    ]


def test_the_bt_interval_says_how_many_resamples_it_left_out():
    """Issue 58 (F8): the interval is conditional on dropping separated
    resamples; the summary says how many beside it, and a note says why."""
    from metrics.suites.pairwise.summary import summarize

    # A beats B in 14 of 20 sessions: a few resamples hold A's wins only
    mixed = [(f"s{i}", "A", "B", 1.0 if i < 14 else 0.0) for i in range(20)]
    direct = ranking.bt_with_ci(mixed, ["A", "B"], "B")["A"]["resamples_separated"]
    found = summarize(_pairwise_rows(mixed), ["A", "B"])
    summary, notes = found["summary"], found["panel"]["notes"]
    for method in ("A", "B"):
        assert summary[method]["bt_resamples_left_out"] == direct
    # A, the first method, is the baseline fixed at 0: its [0, 0] is no
    # interval (ci_no_spread); B's is the one the left-out count qualifies
    assert summary["A"]["bt_ci_low"] is None
    assert notes["A"]["bt_ci_low"] == {"code": "ci_no_spread"}
    assert summary["B"]["bt_ci_low"] is not None
    note = notes["B"]["bt_ci_low"]
    assert note == {
        "code": "bt_resamples_left_out",
        "params": {"left_out": direct, "resamples": ranking.BT_RESAMPLES},
    }
    # past 5% separated: no interval, and the note says why
    lopsided = [(f"s{i}", "A", "B", 1.0) for i in range(5)] + [("s5", "A", "B", 0.0)]
    found = summarize(_pairwise_rows(lopsided), ["A", "B"])
    assert found["summary"]["A"]["bt_ci_low"] is None
    assert found["panel"]["notes"]["A"]["bt_ci_high"]["code"] == "bt_ci_too_separated"
    # balanced: none left out, said as 0, no note
    even = [(f"s{i}", "A", "B", 1.0 if i % 2 else 0.0) for i in range(40)]
    found = summarize(_pairwise_rows(even), ["A", "B"])
    assert found["summary"]["A"]["bt_resamples_left_out"] == 0
    said = found["panel"].get("notes", {})
    assert "bt_ci_low" not in said.get("B", {})  # (A's: the baseline's)


def test_separated_resamples_are_counted_as_an_independent_count_finds():
    """Issue 58 audit (F8): ``bt_resamples_left_out`` against two independent
    computations. Two methods, one comparison per session: a resample is
    separated exactly when every session it draws was won by the same side
    (a tie gives each side half a win). (1) The same documented draws
    (sessions in sorted order, ``default_rng(BOOTSTRAP_SEED)``, n draws per
    resample) counted by that rule, not by the product's graph search; (2)
    the count is a plausible draw of Binomial(500, p) with p = (k/n)^n +
    ((n−k)/n)^n the exact chance that a resample is one-sided (scipy)."""
    from metrics.stats import BOOTSTRAP_SEED

    for won, of, ties in ((14, 20, 0), (5, 6, 0), (9, 12, 1), (4, 6, 0)):
        outcomes = [
            (f"s{i}", "A", "B", 1.0 if i < won else 0.5 if i < won + ties else 0.0)
            for i in range(of)
        ]
        found = ranking.bt_with_ci(outcomes, ["A", "B"], "B")["A"]
        scores = [s for _, _, _, s in sorted(outcomes)]  # the sessions' order
        rng = np.random.default_rng(BOOTSTRAP_SEED)
        one_sided = 0
        for _ in range(ranking.BT_RESAMPLES):
            drawn = [scores[i] for i in rng.integers(0, of, of)]
            one_sided += all(s == 1.0 for s in drawn) or all(s == 0.0 for s in drawn)
        assert found["resamples_separated"] == one_sided
        p = (won / of) ** of + ((of - won - ties) / of) ** of
        low, high = scipy_stats.binom.interval(0.9999, ranking.BT_RESAMPLES, p)
        assert low <= found["resamples_separated"] <= high
