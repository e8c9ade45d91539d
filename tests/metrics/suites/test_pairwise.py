"""The pairwise suite end to end through real HTTP against the scripted judge:
position bias (both orders, flips as ties), win rates, Bradley–Terry
strengths against an independent maximum-likelihood fit, and the judge
audit; plus the fit itself on hand-made outcomes."""

from __future__ import annotations

import math

import pytest
from scipy.optimize import minimize

from metrics.rows import result_row
from metrics.suites import pairwise
from metrics.suites.pairwise import ranking
from tests import crafted
from tests.pipeline.service.test_comparison import scores_of
from tests.store.test_workspaces import upload
from tests.web.views.test_api import wait_final

JUDGES = ["scripted", "scripted-position-a"]
STRENGTHS = {"Weak": 0, "Mid": 1, "Strong": 5}


def strength_sessions(strengths: dict[str, float], sessions: int, rounds: int):
    return [
        crafted.session(
            f"s{s:03d}",
            {
                m: [f"reply {m} {s} {k} [[strength={v}]]" for k in range(rounds)]
                for m, v in strengths.items()
            },
        )
        for s in range(sessions)
    ]


@pytest.fixture
def judged(app_factory, judge_server, tmp_path):
    app = app_factory(
        JUDGE_API_URL=judge_server.url, JUDGE_MODEL="scripted", JUDGE_MODELS=JUDGES
    )
    client = app.test_client()
    client.get("/")

    def run(sessions, model="scripted", **fields):
        data = crafted.write(tmp_path / "p.jsonl", sessions).read_bytes()
        answer = upload(client, data, suites="pairwise", judge_model=model, **fields)
        assert answer.status_code == 202, answer.get_json()
        body = wait_final(client, answer.get_json()["token"])
        return body["results"], answer.get_json()["token"]

    run.client = client
    return run


def reference_bt(outcomes, methods, baseline):
    """Bradley–Terry by direct maximum likelihood (scipy), ties as half a win."""
    others = [m for m in methods if m != baseline]

    def strengths(free):
        return {baseline: 0.0, **dict(zip(others, free, strict=True))}

    def loss(free):
        beta = strengths(free)
        total = 0.0
        for _s, a, b, won in outcomes:
            p = 1 / (1 + math.exp(-(beta[a] - beta[b])))
            total -= won * math.log(p) + (1 - won) * math.log(1 - p)
        return total

    return strengths(minimize(loss, [0.0] * len(others), method="BFGS").x)


def test_position_bias_is_measured_both_orders(judged):
    sessions = strength_sessions(STRENGTHS, sessions=4, rounds=2)
    fair, _ = judged(sessions)
    validity = fair["judge_validity"]
    assert validity["position_consistency"] == 1.0
    assert validity["pairwise_comparisons"] == 3 * 4 * 2

    biased, token = judged(sessions, model="scripted-position-a")
    validity = biased["judge_validity"]
    # Weak vs Mid are 1 apart: the biased judge says "A" in both orders, a
    # flip; the other two pairs are 4 and 5 apart and stay consistent.
    assert validity["position_consistency"] == pytest.approx(2 / 3)
    assert "position_consistency" not in validity["reasons"]
    flipped = scores_of(judged.client, token, "pairwise@Mid", "Weak")
    assert set(flipped.values()) == {0.5}  # flips are ties
    # first position: of the 2 x 24 single-order verdicts, the Weak–Mid ones
    # (16) all chose A; the decisive others split evenly between positions
    assert 0.5 < validity["first_position_rate"] <= 1.0
    page = judged.client.get(f"/r/{token}?lang=zh").get_data(as_text=True)
    assert 'data-testid="judge-audit"' in page and "0.667" in page


def test_win_rates_and_bradley_terry_follow_the_scripted_strengths(judged):
    strengths = {"A": 0, "B": 1, "C": 2}
    results, _ = judged(strength_sessions(strengths, sessions=30, rounds=2))
    summary = results["summary"]
    order = sorted(strengths, key=lambda m: summary[m]["bt_score"])
    assert order == ["A", "B", "C"]
    assert summary["A"]["bt_score"] == 0.0  # the first method is the baseline
    rates = [summary[m]["pairwise_winrate"] for m in ("A", "B", "C")]
    assert rates == sorted(rates) and summary["C"]["pairwise_winrate_n"] == 30

    outcomes = [
        (r["session_id"], r["method"], r["metric"].split("@")[1], r["value"])
        for r in results["rows"]
        if r["metric"].startswith("pairwise@")
        and r["status"] == "ok"
        and r["method"] < r["metric"].split("@")[1]
    ]
    reference = choix_bt(outcomes, ["A", "B", "C"], "A")
    for method in ("B", "C"):
        assert summary[method]["bt_score"] == pytest.approx(reference[method], abs=2e-3)
        low, high = summary[method]["bt_ci_low"], summary[method]["bt_ci_high"]
        assert low < summary[method]["bt_score"] < high


def test_a_baseline_compares_each_method_with_it_only(judged):
    # strengths a point apart: each side wins some comparisons (no separation)
    sessions = strength_sessions({"A": 0, "B": 1, "C": 2}, sessions=12, rounds=2)
    results, _ = judged(sessions, pairwise_baseline="B")
    metrics = {(r["method"], r["metric"]) for r in results["rows"]}
    assert ("A", "pairwise@C") not in metrics
    assert {("A", "pairwise@B"), ("C", "pairwise@B"), ("B", "pairwise@A")} <= metrics
    assert results["summary"]["B"]["bt_score"] == 0.0


def test_unparseable_verdicts_are_unscored_never_guessed(judged):
    sessions = strength_sessions({"A": 0, "B": 3}, sessions=2, rounds=1)
    sessions[0]["rounds"][0]["responses"]["B"] += " [[fault=garbage]]"
    results, _ = judged(sessions)
    statuses = {
        (r["session_id"], r["method"]): r["status"]
        for r in results["rows"]
        if r["metric"].startswith("pairwise@")
    }
    assert statuses[("s000", "A")] == statuses[("s000", "B")] == "unscored"
    assert statuses[("s001", "A")] == "ok"
    assert results["summary"]["A"]["pairwise_winrate_n"] == 1


def choix_bt(outcomes, methods, baseline):
    """choix's fit, a tie entered once each way and a win twice (the same
    maximum as half-weighted ties)."""
    import choix

    data = []
    for _s, a, b, won in outcomes:
        i, j, wins = methods.index(a), methods.index(b), round(won * 2)
        data += [(i, j)] * wins + [(j, i)] * (2 - wins)
    params = choix.opt_pairwise(len(methods), data, alpha=1e-6)
    return {
        m: params[i] - params[methods.index(baseline)] for i, m in enumerate(methods)
    }


def test_bt_fit_matches_maximum_likelihood_with_half_ties():
    outcomes = [
        ("s1", "A", "B", 1.0),
        ("s1", "A", "B", 0.5),
        ("s2", "A", "B", 0.0),
        ("s2", "B", "C", 1.0),
        ("s3", "B", "C", 0.5),
        ("s3", "A", "C", 1.0),
        ("s4", "C", "A", 1.0),
        ("s4", "B", "C", 0.0),
    ]
    fitted = ranking.bt_strengths(outcomes, ["A", "B", "C"], "A")
    for reference in (reference_bt, choix_bt):
        expected = reference(outcomes, ["A", "B", "C"], "A")
        for method in "ABC":
            assert fitted[method] == pytest.approx(expected[method], abs=1e-3)
    assert ranking.bt_strengths([("s", "A", "B", 1.0)], ["A", "B", "C"], "A") is None


def test_with_two_methods_the_baseline_is_the_first_method():
    outcomes = [("s1", "A", "B", 1.0), ("s2", "A", "B", 0.0), ("s3", "A", "B", 1.0)]
    assert pairwise.bt_baseline(outcomes, ["A", "B"]) == "A"
    rows = [
        result_row(
            {"session_id": s, "round": 1, "method": a},
            f"pairwise@{b}",
            v,
            detail={"primary": True, "consistent": True, "first_wins": [v, 1 - v]},
        )
        for s, a, b, v in outcomes
    ]
    summary = pairwise.summarize(rows, ["A", "B"])["summary"]
    assert summary["A"]["bt_score"] == 0.0
    assert summary["B"]["bt_score"] == pytest.approx(-math.log(2), abs=1e-3)


def test_a_sweep_is_reported_as_separation_never_as_a_strength():
    outcomes = [(f"s{n}", "A", other, 1.0) for n in range(4) for other in ("B", "C")]
    outcomes += [("s0", "B", "C", 1.0), ("s1", "B", "C", 0.0)]
    rows = [
        result_row(
            {"session_id": s, "round": 1, "method": a},
            f"pairwise@{b}",
            v,
            detail={"primary": True, "consistent": True, "first_wins": [v, 1 - v]},
        )
        for s, a, b, v in outcomes
    ]
    found = pairwise.summarize(rows, ["A", "B", "C"])
    for method in "ABC":
        values = found["summary"][method]
        assert values["bt_score"] is values["bt_ci_low"] is values["bt_ci_high"] is None
    reason = found["panel"]["reasons"]["bt_forest"]
    assert reason == {
        "code": "bt_separation",
        "params": {"unbeaten": "A", "winless": "B, C"},
    }
    assert found["summary"]["A"]["pairwise_winrate"] == 1.0  # the win rates stand


BT_SCRIPT = """
import json, random
from metrics.suites.pairwise import ranking
rnd = random.Random(7)
methods = [f"m{i}" for i in range(6)]
outcomes = [(f"s{s}", methods[i], methods[j], rnd.choice([0.0, 0.5, 1.0]))
            for s in range(30) for i in range(6) for j in range(i + 1, 6)]
found = ranking.bt_with_ci(outcomes, methods, "m0")
hexed = lambda v: None if v is None else v.hex()  # the baseline: no interval
print(json.dumps({m: [hexed(v["mean"]), hexed(v["ci_low"]), hexed(v["ci_high"])]
                  for m, v in found.items()}))
"""


def test_bradley_terry_is_bit_identical_whatever_the_blas_threads():
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    outputs = set()
    for threads in ("1", "4"):
        env = {
            **os.environ,
            "OMP_NUM_THREADS": threads,
            "OPENBLAS_NUM_THREADS": threads,
            "MKL_NUM_THREADS": threads,
        }
        done = subprocess.run(
            [sys.executable, "-c", BT_SCRIPT],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        outputs.add(done.stdout)
    assert len(outputs) == 1


def test_a_bootstrap_fits_each_distinct_resample_once(monkeypatch):
    """bt_with_ci's resamples: one fit per distinct session counts (six
    sessions: at most C(11, 6) = 462 multisets, fewer drawn), with the
    figures of a fit per resample (its doctest's 178 separated)."""
    fitted = []
    fit = ranking.fit

    def counted(wins, baseline):
        fitted.append(wins.tobytes())
        return fit(wins, baseline)

    monkeypatch.setattr(ranking, "fit", counted)
    lopsided = [(f"s{i}", "A", "B", 1.0) for i in range(5)] + [("s5", "A", "B", 0.0)]
    found = ranking.bt_with_ci(lopsided, ["A", "B"], "B")["A"]
    resampled = fitted[1:]  # after the point fit
    # (one fit per resample not separated was 322)
    assert len(resampled) < 500 - 178
    assert (round(found["mean"], 3), found["resamples_separated"]) == (1.609, 178)
