"""Length-controlled pairwise (``metrics/suites/pairwise/length_control.py``,
issue 58 item 3): the fit against scikit-learn's L2 logistic regression and a
plain scipy maximisation of the same penalised likelihood, the reply lengths
recorded on pairwise rows, earlier runs without them, and a crafted run
through real HTTP whose judge prefers the longer reply."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from scipy.optimize import minimize

from metrics.rows import result_row
from metrics.suites import pairwise
from metrics.suites.pairwise import length_control, ranking
from tests import crafted
from tests.fake_judge import FakeJudge
from tests.store.test_workspaces import upload
from tests.web.views.test_api import wait_final

METHODS = ["A", "B", "C"]


def simulated(seed: int = 3, sessions: int = 20, gamma: float = 1.2):
    """Comparisons whose verdicts follow strengths and length, ties included."""
    rng, beta = random.Random(seed), {"A": 0.0, "B": 0.4, "C": -0.3}
    found = []
    for s in range(sessions):
        for a, b in (("A", "B"), ("A", "C"), ("B", "C")):
            for _ in range(3):
                chars_a, chars_b = rng.randint(50, 900), rng.randint(50, 900)
                eta = beta[a] - beta[b] + gamma * math.tanh((chars_a - chars_b) / 350)
                p = 1 / (1 + math.exp(-eta))
                y = 0.5 if rng.random() < 0.1 else float(rng.random() < p)
                found.append((f"s{s}", a, b, y, chars_a, chars_b))
    return found


def design(found, scale):
    """Columns B, C (±1 for the sides), tanh(Δℓ/s); targets; weights."""
    rows = []
    for _s, a, b, y, ca, cb in found:
        x = [float(a == m) - float(b == m) for m in METHODS[1:]]
        rows.append(([*x, math.tanh((ca - cb) / scale)], y))
    return rows


def scipy_reference(found, scale):
    """The penalised likelihood written out: Σ y log σ(η) + (1−y) log σ(−η) −
    α/2 ‖θ‖², maximised by BFGS."""
    rows = design(found, scale)

    def loss(theta):
        total = 0.0
        for x, y in rows:
            eta = sum(c * v for c, v in zip(theta, x, strict=True))
            total += y * math.log1p(math.exp(-eta)) + (1 - y) * math.log1p(
                math.exp(eta)
            )
        return total + ranking.BT_ALPHA / 2 * sum(v * v for v in theta)

    return minimize(loss, [0.0] * 3, method="BFGS", options={"gtol": 1e-10}).x


def sklearn_reference(found, scale):
    """scikit-learn's L2 logistic regression, each tie as half a win and half
    a loss (sample weights), C = 1/α, no intercept."""
    from sklearn.linear_model import LogisticRegression

    xs, ys, ws = [], [], []
    for x, y in design(found, scale):
        for label, weight in ((1, y), (0, 1 - y)):
            if weight:
                xs.append(x), ys.append(label), ws.append(weight)
    model = LogisticRegression(
        C=1 / ranking.BT_ALPHA, fit_intercept=False, tol=1e-12, max_iter=10_000
    )
    model.fit(np.array(xs), np.array(ys), sample_weight=np.array(ws))
    return model.coef_[0]


def test_the_fit_agrees_with_sklearn_and_a_plain_scipy_maximisation():
    found = simulated()
    fitted = length_control.estimate(found, METHODS, "A")
    assert fitted["separated"] is None
    scale = length_control.length_scale(found)
    assert scale == pytest.approx(
        math.sqrt(sum((c[4] - c[5]) ** 2 for c in found) / len(found))
    )
    ours = [fitted["beta"][1], fitted["beta"][2], fitted["gamma"]]
    for reference in (scipy_reference(found, scale), sklearn_reference(found, scale)):
        assert ours == pytest.approx(list(reference), abs=1e-5)
    assert 0.6 < fitted["gamma"] < 2.0  # the length effect simulated (1.2)


def test_the_win_rate_at_zero_length_difference_is_the_models():
    found = simulated()
    result = length_control.length_controlled(found, METHODS, "A")
    beta = dict(
        zip(METHODS, length_control.estimate(found, METHODS, "A")["beta"], strict=True)
    )
    # each method's comparisons: every session holds 3 against each opponent
    sigma = lambda x: 1 / (1 + math.exp(-x))  # noqa: E731
    for method in METHODS:
        others = [o for o in METHODS if o != method]
        expected = sum(sigma(beta[method] - beta[o]) for o in others) / 2
        lc = result["methods"][method]
        assert lc["winrate_lc"]["mean"] == pytest.approx(expected, abs=1e-12)
        assert lc["winrate_lc"]["ci_low"] <= expected <= lc["winrate_lc"]["ci_high"]
        if method == "A":  # the baseline: 0 in every resample, width 0
            assert lc["bt_lc"]["ci_low"] is None and lc["bt_lc"]["ci_high"] is None
            assert lc["bt_lc"]["ci_note"] == "ci_no_spread"
            continue
        assert lc["bt_lc"]["ci_low"] <= beta[method] <= lc["bt_lc"]["ci_high"]
    assert result["shift"] == pytest.approx(sigma(result["gamma"] * math.tanh(1)) - 0.5)
    assert result["shift_ci_low"] < result["shift"] < result["shift_ci_high"]


def test_pairwise_rows_record_both_replies_lengths():
    session = crafted.session("s1", {"A": ["short"], "B": ["a longer reply"]})
    for round_ in session["rounds"]:
        round_["responses"] = {m: {"text": t} for m, t in round_["responses"].items()}
    rows = pairwise.run([session], ["A", "B"], FakeJudge(), {})
    chars = {row["method"]: row["detail"]["chars"] for row in rows}
    assert chars == {"A": [5, 14], "B": [14, 5]}  # [own, opponent's]


def test_rows_judged_before_lengths_were_recorded_give_no_value_and_say_why():
    rows = [
        result_row(
            {"session_id": f"s{n}", "round": 1, "method": "A"},
            "pairwise@B",
            v,
            detail={"primary": True, "consistent": True, "first_wins": [v, 1 - v]},
        )
        for n, v in enumerate([1.0, 0.0, 1.0])
    ]
    found = pairwise.summarize(rows, ["A", "B"])
    for method in "AB":
        values = found["summary"][method]
        assert values["pairwise_winrate_lc"] is values["bt_lc_score"] is None
        assert values["pairwise_longer_wins_rate"] is None
        note = found["panel"]["notes"][method]["pairwise_winrate_lc"]
        assert note == {"code": "lc_pairwise_no_lengths", "params": {"n": 3}}
    assert found["validity"]["length_pairwise_effect"] is None
    assert found["summary"]["A"]["pairwise_winrate"] == pytest.approx(2 / 3)


def test_replies_of_one_length_leave_the_strengths_as_bradley_terrys():
    outcomes = [("s1", "A", "B", 1.0), ("s2", "A", "B", 0.0), ("s3", "A", "B", 1.0)]
    found = [(*o, 10, 10) for o in outcomes]
    fitted = length_control.estimate(found, ["A", "B"], "A")
    assert fitted["separated"] == "equal" and fitted["gamma"] is None
    assert fitted["beta"][1] == pytest.approx(
        ranking.bt_strengths(outcomes, ["A", "B"], "A")["B"], abs=1e-12
    )
    assert length_control.shift(fitted) is None


def sessions_equal_but_for_length(count: int = 8, rounds: int = 10):
    """Two methods whose replies say the same; Long's carry padding of 20 to
    200 characters, except in each session's first round where both are
    equally long."""
    found = []
    for s in range(count):
        long_, short = [], []
        for k in range(rounds):
            text = f"Sure, session {s} round {k}: that sounds lovely."
            pad = 0 if k == 0 else 20 * ((s + k) % 10 + 1)
            long_.append(text + " Really." * (pad // 8) + "!" * (pad % 8))
            short.append(text.replace("lovely", "lovelY"))
        found.append(crafted.session(f"s{s:02d}", {"Long": long_, "Short": short}))
    return found


def test_a_judge_that_prefers_the_longer_reply_wins_raw_but_not_controlled(
    app_factory, judge_server, tmp_path
):
    model = "judge-prefers-longer"
    app = app_factory(
        JUDGE_API_URL=judge_server.url, JUDGE_MODEL=model, JUDGE_MODELS=[model]
    )
    client = app.test_client()
    client.get("/")
    data = crafted.write(tmp_path / "p.jsonl", sessions_equal_but_for_length())
    answer = upload(client, data.read_bytes(), suites="pairwise", judge_model=model)
    assert answer.status_code == 202, answer.get_json()
    token = answer.get_json()["token"]
    results = wait_final(client, token)["results"]
    summary = results["summary"]["Long"]
    assert summary["pairwise_winrate"] == pytest.approx(0.95)  # 9 wins, 1 tie
    assert summary["pairwise_longer_wins_rate"] == pytest.approx(0.95)
    assert summary["pairwise_winrate_lc"] == pytest.approx(0.5, abs=0.05)
    assert summary["pairwise_winrate_lc_n"] == 8
    assert results["summary"]["Short"]["pairwise_winrate_lc"] == pytest.approx(
        0.5, abs=0.05
    )
    effect = results["judge_validity"]["length_pairwise_effect"]
    assert effect["value"] == 0.5 and effect["separated"] == "length"
    assert effect["n"] == 8 and effect["comparisons"] == 80
    assert effect["longer_won_share"] == 1.0
    assert effect["winrate"]["Long"] == pytest.approx(0.95)
    # the report card (docs/metrics/report-card.md) reads it: not fit, for length
    validity = results["judge_validity"]
    assert validity["report_card_verdict"] == "not_fit"
    assert "length_pairwise_effect" in validity["report_card_failing"]
    for lang in ("en", "zh", "ko"):
        page = client.get(f"/r/{token}?lang={lang}").get_data(as_text=True)
        assert 'data-testid="table-pairwise-length"' in page


def _rows_of(found) -> list[dict]:
    """Pairwise rows as the suite stores them: one per side of each
    comparison, with both replies' lengths ([own, opponent's])."""
    rows = []
    for k, (session, a, b, y, chars_a, chars_b) in enumerate(found, start=1):
        for method, other, value, chars in (
            (a, b, y, [chars_a, chars_b]),
            (b, a, 1.0 - y, [chars_b, chars_a]),
        ):
            detail = {
                "primary": method == a,
                "consistent": True,
                "first_wins": [value, 1.0 - value],
                "chars": chars,
            }
            key = {"session_id": session, "round": k, "method": method}
            rows.append(result_row(key, f"pairwise@{other}", value, detail=detail))
    return rows


def test_the_summary_s_longer_wins_and_controlled_rates_are_independently_computed():
    """Issue 58 audit: ``pairwise_longer_wins_rate`` against a plain count
    (per session, the share of a method's comparisons its reply was the
    longer in, equal lengths half; then the mean over sessions), and
    ``pairwise_winrate_lc`` against the win probability at equal lengths of
    strengths fitted by a plain scipy maximisation (each method meets each
    other equally often in every session here)."""
    found = simulated()
    summary = pairwise.summarize(_rows_of(found), METHODS)["summary"]
    shares: dict[str, dict[str, list[float]]] = {m: {} for m in METHODS}
    for session, a, b, _y, chars_a, chars_b in found:
        for method, own, other in ((a, chars_a, chars_b), (b, chars_b, chars_a)):
            longer = 1.0 if own > other else 0.5 if own == other else 0.0
            shares[method].setdefault(session, []).append(longer)
    expected = {
        m: float(np.mean([np.mean(v) for v in by_session.values()]))
        for m, by_session in shares.items()
    }
    theta = scipy_reference(found, length_control.length_scale(found))
    beta = dict(zip(METHODS, [0.0, *theta[:2]], strict=True))
    sigma = lambda x: 1 / (1 + math.exp(-x))  # noqa: E731
    for method in METHODS:
        values = summary[method]
        assert values["pairwise_longer_wins_rate"] == pytest.approx(
            expected[method], abs=1e-12
        )
        others = [o for o in METHODS if o != method]
        at_equal_lengths = sum(sigma(beta[method] - beta[o]) for o in others) / 2
        assert values["pairwise_winrate_lc"] == pytest.approx(
            at_equal_lengths, abs=1e-5
        )


def test_a_bootstrap_fits_each_distinct_resample_once(monkeypatch):
    """A resample's fit depends on its session counts alone: 500 resamples
    of three sessions are at most C(5, 3) = 10 multisets, each fitted once
    (plus the point fit), with the figures of a fit per resample (the
    module doctest's: 41 resamples separated, counted every time drawn)."""
    fitted = []
    estimate = length_control._estimate

    def counted(data, weights, baseline):
        fitted.append(tuple(weights))
        return estimate(data, weights, baseline)

    monkeypatch.setattr(length_control, "_estimate", counted)
    c = [("s1", "A", "B", 1.0, 120, 100), ("s1", "A", "B", 0.0, 80, 100)]
    c += [("s2", "A", "B", 1.0, 100, 100), ("s2", "A", "B", 0.0, 100, 90)]
    c += [("s3", "A", "B", 0.5, 60, 70), ("s3", "A", "B", 1.0, 90, 100)]
    found = length_control.length_controlled(c, ["A", "B"], "B")
    resampled = fitted[1:]  # after the point fit
    assert len(resampled) == len(set(resampled)) <= 10
    assert found["resamples_separated"] == 41
    rate = found["methods"]["A"]["winrate_lc"]
    assert (round(rate["mean"], 4), rate["ci_low"]) == (0.5985, None)
