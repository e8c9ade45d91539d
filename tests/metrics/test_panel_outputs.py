"""A judge panel shown as a panel (issue 45): curves pool the judges per
item, so n counts sessions, and every paper output names the judges and
how they are pooled, with each judge's values beside the panel mean."""

from __future__ import annotations

import csv
import io

import pytest

from testing.judge_server import ScriptedJudge
from tests import crafted
from tests.pipeline_support import evaluate

JUDGES = ["judge-a", "judge-b"]


@pytest.fixture
def panel_run(app_factory, tmp_path, judge_server):
    sessions = [
        crafted.session(
            f"s{n}",
            {
                "Base": crafted.scores([40 + n] * 3, [0, 1, 0]),
                "Ours": crafted.scores([50 + n, 60 + n, 70 - n], [1, 1, 0]),
            },
        )
        for n in range(9)
    ]
    app = app_factory(JUDGE_MODELS=",".join(JUDGES))
    path = crafted.write(tmp_path / "panel.jsonl", sessions)
    document = evaluate(
        app,
        path,
        judge_server,
        suites=["alignment", "pairwise", "quality"],
        judge_models=JUDGES,
    )
    run = app.extensions["storage"].runs.get_run(document["run"]["id"])
    return app, run, document


def test_a_panel_curve_counts_sessions_not_verdicts(panel_run):
    _, _, document = panel_run
    assert document["run"]["status"] == "done"
    for method in ("Base", "Ours"):
        assert [p["n"] for p in document["curves"]["al"][method]] == [9, 9, 9]
    assert document["run"]["judge"]["models"] == JUDGES


def test_every_paper_output_names_the_panel(panel_run):
    app, run, _ = panel_run
    client = app.test_client()

    def get(name: str) -> str:
        return client.get(f"/r/{run.token}/{name}").get_data(as_text=True)

    rows = list(csv.DictReader(io.StringIO(get("summary.csv"))))
    judged = {(r["method"], r["metric"]): r["judge"] for r in rows}
    assert judged[("Ours", "al_avg")] == "panel mean (judge-a, judge-b)"
    assert judged[("Ours", "al_avg@judge-a")] == "judge-a"
    assert judged[("Ours", "binary_rate@judge-b")] == "judge-b"
    # a judged value made of every judge's verdicts together names the panel
    # (issue 61: al_lc and the pairwise rows left it empty)
    panel = "panel (judge-a, judge-b)"
    for metric in ("al_lc", "al_slope", "pairwise_winrate", "bt_score"):
        assert judged[("Ours", metric)] == panel, metric
    assert judged[("Ours", "quality_avg")] == ""  # no judge makes it
    for text in (get("export.md"), get("export.tex"), get("methods.txt")):
        assert "judge-a" in text and "judge-b" in text
        assert "mean of the panel's judges' scores" in text
    assert "| Method | judge-a | judge-b | panel mean |" in get("export.md")


def test_human_labels_belong_to_no_judge_and_stand_beside_each(
    app_factory, tmp_path, judge_server
):
    sessions = [
        crafted.session(
            f"h{n}",
            {
                method: [
                    {
                        "text": f"reply {k} [[al={40 + 10 * k + n}]] [[binary=1]]",
                        "human": {"al": 40 + 10 * k + n, "binary": 1},
                    }
                    for k in range(3)
                ]
                for method in ("Base", "Ours")
            },
        )
        for n in range(3)
    ]
    app = app_factory(JUDGE_MODELS=",".join(JUDGES))
    path = crafted.write(tmp_path / "human.jsonl", sessions)
    document = evaluate(
        app,
        path,
        judge_server,
        suites=["alignment", "pairwise", "quality"],
        judge_models=JUDGES,
    )
    labels = [r for r in document["rows"] if r["metric"] == "human_al"]
    assert len(labels) == 3 * 3 * 2  # once per reply, not once per judge
    assert all(not r["judge"] for r in labels)
    scored = {r["judge"] for r in document["rows"] if r["metric"] == "al"}
    assert scored == set(JUDGES)
    human = document["judge_validity"]["human"]
    assert set(human) == set(JUDGES)
    assert all(human[judge]["n_al"] == 18 for judge in JUDGES)


def _panel_rows(failing: set[tuple[str, int]]) -> list[dict]:
    """Two sessions x two rounds of method M judged by "a" and "b"; "b"
    answers HTTP 500 (an ``error`` row on every metric it was asked) for
    the (session, round) items in ``failing``."""
    rows = []
    for session, start in (("s1", 50.0), ("s2", 70.0)):
        for k in (1, 2):
            for judge in ("a", "b"):
                failed = judge == "b" and (session, k) in failing
                value = None if failed else start + 10 * k + (judge == "b")
                for metric in ("al", "al_style", "binary"):
                    scored = (
                        value
                        if metric == "al"
                        else (5.0 if metric == "al_style" else 1.0)
                    )
                    rows.append(
                        {
                            "session_id": session,
                            "round": k,
                            "method": "M",
                            "metric": metric,
                            "judge": judge,
                            "value": None if failed else scored,
                            "status": "error" if failed else "ok",
                        }
                    )
            chars = {"metric": "response_chars", "judge": "", "value": 10.0 * k}
            rows.append(
                {"session_id": session, "round": k, "method": "M", "status": "ok"}
                | chars
            )
    return rows


def test_a_judge_that_failed_every_call_leaves_no_panel_value():
    """Issue 56: judge b answered HTTP 500 to every call; al_avg was null
    but the slope, intercept, R², al_lc, the dimensions and the AL(k) curve
    carried judge a's values as the panel's, and al_avg_n said 2."""
    from metrics import engine

    every = {(s, k) for s in ("s1", "s2") for k in (1, 2)}
    found = engine.aggregate(lambda suite: _panel_rows(every), ["alignment"], ["M"])
    summary = found["summary"]["M"]
    nulled = ("al_avg", "al_slope", "al_intercept", "al_r2", "al_lc")
    for metric in (*nulled, "al_style_avg", "binary_rate", "al_session_slope"):
        assert summary[metric] is None, metric
        assert summary[f"{metric}_n"] == 0, metric
    assert summary["al_avg@a"] == 75.0 and summary["al_avg@b"] is None
    assert found["curves"]["al"]["M"] == []
    note = found["summary_notes"]["M"]["al_slope"]
    assert note == {"code": "panel_no_common_items", "params": {"judges": "b"}}
    reasons = found["panels"]["alignment"]["reasons"]
    assert reasons["al_curve"]["code"] == "panel_no_common_items"


def test_a_judge_that_failed_some_calls_keeps_the_panel_to_common_items():
    from metrics import engine

    found = engine.aggregate(
        lambda suite: _panel_rows({("s1", 2)}), ["alignment"], ["M"]
    )
    summary = found["summary"]["M"]
    # items scored by both: s1 k1 (60, 61), s2 k1 (80, 81), s2 k2 (90, 91)
    # round 2 rests on one of two sessions: drawn, left out of al_avg
    # (sparse rounds, issue 58); al_avg_all_rounds keeps it
    assert summary["al_avg"] == (60.5 + 80.5) / 2
    assert summary["al_avg_all_rounds"] == ((60.5 + 80.5) / 2 + 90.5) / 2
    assert [p["n"] for p in found["curves"]["al"]["M"]] == [2, 1]
    assert summary["al_avg_n"] == 2
    note = found["summary_notes"]["M"]["al_avg"]
    params = {"judges": "b", "items": 1}
    assert note == {"code": "panel_common_items", "params": params}


def test_a_panel_with_no_common_item_says_so_on_its_card(app_factory, tmp_path):
    """Judge b answers HTTP 500 to every call: the alignment card says the
    panel has no value and why (it said "18 values not scored: judge
    answered HTTP 500", as if nothing had been scored), the causes below."""
    with ScriptedJudge() as judge:
        sessions = [
            crafted.session(
                f"s{n}",
                {
                    m: [f"{m} {k} [[al=60]] [[fault@judge-b=500x9]]" for k in range(2)]
                    for m in ("Base", "Ours")
                },
            )
            for n in range(2)
        ]
        app = app_factory(JUDGE_MODELS=",".join(JUDGES), JUDGE_MAX_RETRIES=0)
        path = crafted.write(tmp_path / "down.jsonl", sessions)
        document = evaluate(app, path, judge, suites=["alignment"], judge_models=JUDGES)
    assert document["summary"]["Base"]["al_avg@judge-a"] == 60.0
    assert document["summary"]["Base"]["al_avg"] is None
    run = app.extensions["storage"].runs.get_run(document["run"]["id"])
    page = app.test_client().get(f"/r/{run.token}?lang=en").get_data(as_text=True)
    said = "No panel value: no item was scored by every judge of the panel; judge-b"
    assert said in page
    assert "judge answered HTTP 500" in page  # the cause, under it
