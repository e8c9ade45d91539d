"""The PrefEval protocol (``protocols/prefeval.toml``) and the checks suite
(``metrics/suites/checks.py``): four yes/no checks per reply, the derived
label by PrefEval's rule (correct = helpful and no violation; the error type
from the acknowledgement and hallucination checks), never guessed when a
check it needs has no verdict, and the success rate by number of filler
turns (inter-turns) as a curve with n and Wilson intervals.

The shared sample (``../shared/formats/prefeval_sample/``) converts and is
judged by the scripted loopback judge. PrefEval publishes no human labels
(nor any judge verdicts but the run files' own): there are no agreement
figures to compute for it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dataset.importers import Options
from dataset.prefeval import prefeval
from metrics import protocols
from metrics.protocol_checks import ProtocolError
from metrics.suites import checks
from testing.judge_server import ScriptedJudge
from tests import crafted
from tests.fake_judge import FakeJudge
from tests.pipeline_support import FAST_JUDGE, evaluate

SAMPLE = Path(__file__).resolve().parents[4] / "shared" / "formats" / "prefeval_sample"
RUN_FILE = (
    SAMPLE
    / "benchmark_results/explicit/generation_results/remind/travel_demo"
    / "error_demo_travel_demo_2interturn.json"
)
LOCAL = Path(__file__).parents[2] / "data" / "importers" / "prefeval_sample"
CHECKS = ("acknow", "violate", "hallucinate", "helpful")
PREFEVAL = {"protocol": protocols.builtin("prefeval").stored()}


def sample_file() -> Path:
    """The shared sample's run file (a copy in tests/data for a fresh clone)."""
    return RUN_FILE if RUN_FILE.exists() else LOCAL / RUN_FILE.name


def scripted(text: str, **verdicts: str) -> str:
    """A reply carrying the scripted judge's answer to each check
    (``1``/``0``, or ``none``: a reply without a verdict)."""
    return text + " " + " ".join(f"[[{k}={v}]]" for k, v in verdicts.items())


def recorded(item: dict) -> dict[str, str]:
    """The benchmark judge's four answers in the run file, as directives:
    PrefEval reads "yes" in the answer; an empty answer is no verdict."""
    found = item["evaluation_error_analysis"]
    return {
        key: "none"
        if not found[key]["answer"].strip()
        else "1"
        if "yes" in found[key]["answer"].lower()
        else "0"
        for key in CHECKS
    }


def sample_sessions(turns: int | None = None) -> list[dict]:
    path = sample_file()
    name = path.name if turns is None else path.name.replace("2inter", f"{turns}inter")
    sessions = []
    for number, item in enumerate(json.loads(path.read_text("utf-8")), 1):
        session = prefeval(item, number, Options(source=name))
        [round_] = session["rounds"]
        round_["responses"]["demo"] = scripted(item["response_to_q"], **recorded(item))
        sessions.append(session)
    return sessions


def session(sid: str, turns: int, reply: str, preference: str = "No spice.") -> dict:
    return {
        "session_id": sid,
        "user_profile": preference,
        "user_personality": "",
        "rounds": [
            {"round": 1, "user_message": "What to eat?", "responses": {"M": reply}}
        ],
        "meta": {
            "reference": preference,
            "inter_turns": {"count": turns, "source": "filtered_inter_turns.json"},
        },
    }


def run_checks(sessions: list[dict], methods=("M",), judge=None) -> list[dict]:
    normalized = json.loads(json.dumps(sessions))
    for s in normalized:
        for r in s["rounds"]:
            r["responses"] = {
                m: v if isinstance(v, dict) else {"text": v}
                for m, v in r["responses"].items()
            }
    return checks.run(normalized, list(methods), judge or FakeJudge(), PREFEVAL)


# Each of PrefEval's outcomes, from crafted replies whose scripted verdicts
# are the combination that gives it (checked by hand against the rule).
CRAFTED = {
    "correct": dict(acknow="1", violate="0", hallucinate="0", helpful="1"),
    "correct_unacknowledged": dict(
        acknow="0", violate="0", hallucinate="0", helpful="1"
    ),
    "unhelpful": dict(acknow="0", violate="0", hallucinate="0", helpful="0"),
    "unhelpful_violating": dict(acknow="1", violate="1", hallucinate="1", helpful="0"),
    "inconsistent": dict(acknow="1", violate="1", hallucinate="0", helpful="1"),
    "hallucinated_violation": dict(
        acknow="1", violate="1", hallucinate="1", helpful="1"
    ),
    "unaware_violation": dict(acknow="0", violate="1", hallucinate="0", helpful="1"),
    # the hallucination check is not needed when nothing was acknowledged
    "unaware_violation_no_h": dict(
        acknow="0", violate="1", hallucinate="none", helpful="1"
    ),
}
EXPECTED = {
    "correct": ("correct", 1.0),
    "correct_unacknowledged": ("correct", 1.0),
    "unhelpful": ("unhelpful", 0.0),
    "unhelpful_violating": ("unhelpful", 0.0),
    "inconsistent": ("inconsistent", 0.0),
    "hallucinated_violation": ("hallucinated_violation", 0.0),
    "unaware_violation": ("unaware_violation", 0.0),
    "unaware_violation_no_h": ("unaware_violation", 0.0),
}


def test_the_protocol_has_the_four_checks_and_prefevals_rule():
    protocol = protocols.builtin("prefeval")
    assert list(protocol.checks) == list(CHECKS)
    assert all(m.verdict.kind == "binary" for m in protocol.checks.values())
    label = protocol.labels["outcome"]
    assert label.success == {"correct"}
    assert set(label.labels) == {
        "correct",
        "unhelpful",
        "inconsistent",
        "hallucinated_violation",
        "unaware_violation",
    }
    # the mode's verdicts read back in the form the prompt asks
    assert (
        protocol.checks["violate"].parse("It suggests curry.\n\\boxed{yes}").score == 1
    )
    assert protocol.checks["helpful"].parse("Answer: No").score == 0


@pytest.mark.parametrize("case", sorted(CRAFTED))
def test_each_outcome_from_crafted_replies(case):
    rows = run_checks([session("s", 2, scripted("A reply.", **CRAFTED[case]))])
    [label] = [r for r in rows if r["metric"] == "label@outcome"]
    expected, value = EXPECTED[case]
    assert (label["detail"]["label"], label["value"], label["status"]) == (
        expected,
        value,
        "ok",
    )
    assert label["detail"]["inter_turns"] == 2
    found = {r["metric"]: r["value"] for r in rows if r["metric"].startswith("check@")}
    assert found == {
        f"check@{k}": None if v == "none" else float(v)
        for k, v in CRAFTED[case].items()
    }


@pytest.mark.parametrize(
    ("verdicts", "waiting"),
    [
        # helpful unknown: unhelpful comes first, nothing can be decided
        (dict(acknow="1", violate="0", hallucinate="0", helpful="none"), "helpful"),
        # a helpful reply without a violation verdict: correct or an error
        (dict(acknow="1", violate="none", hallucinate="0", helpful="1"), "violate"),
        # acknowledged and violating: the error type needs the hallucination check
        (dict(acknow="1", violate="1", hallucinate="none", helpful="1"), "hallucinate"),
        (dict(acknow="none", violate="1", hallucinate="0", helpful="1"), "acknow"),
    ],
)
def test_a_label_that_needs_a_missing_verdict_is_unscored_never_guessed(
    verdicts, waiting
):
    rows = run_checks([session("s", 2, scripted("A reply.", **verdicts))])
    [label] = [r for r in rows if r["metric"] == "label@outcome"]
    assert (label["value"], label["status"], label["note_code"]) == (
        None,
        "unscored",
        "label_undecided",
    )
    assert label["note_params"] == {"checks": waiting}
    assert waiting in label["note"]


def test_no_judge_gives_not_configured_checks_and_labels():
    rows = checks.run(
        [
            {
                **session("s", 2, "x"),
                "rounds": [
                    {"round": 1, "user_message": "q", "responses": {"M": {"text": "x"}}}
                ],
            }
        ],
        ["M"],
        None,
        PREFEVAL,
    )
    assert {(r["metric"], r["status"]) for r in rows} == {
        *((f"check@{k}", "not_configured") for k in CHECKS),
        ("label@outcome", "not_configured"),
    }


def test_a_session_without_the_preference_is_not_applicable_for_the_checks_that_read_it():
    s = session("s", 2, scripted("A reply.", **CRAFTED["correct"]))
    del s["meta"]["reference"]
    rows = run_checks([s])
    status = {r["metric"]: (r["status"], r.get("note_code")) for r in rows}
    # acknowledgement reads only the request and the reply
    assert status["check@acknow"] == ("ok", None)
    for check in ("violate", "hallucinate", "helpful"):
        assert status[f"check@{check}"] == ("not_applicable", "missing_field")
    assert status["label@outcome"] == ("unscored", "label_undecided")


def test_success_rate_by_inter_turns_with_n_and_wilson_intervals():
    from scipy.stats import binomtest

    # 2 turns: 3 of 4 correct; 10 turns: 1 of 4 correct, one undecided
    replies = {
        2: ["correct", "correct", "correct", "unhelpful"],
        10: ["correct", "inconsistent", "unaware_violation", "unaware_violation"],
    }
    sessions = [
        session(f"t{turns}/{i}", turns, scripted("A reply.", **CRAFTED[case]))
        for turns, cases in replies.items()
        for i, case in enumerate(cases)
    ]
    sessions.append(
        session(
            "t10/undecided",
            10,
            scripted(
                "A reply.", acknow="1", violate="none", hallucinate="0", helpful="1"
            ),
        )
    )
    rows = run_checks(sessions)
    found = checks.summarize(rows, ["M"])
    points = found["curves"]["label_rate"]["M"]
    assert [(p["k"], p["mean"], p["n"], p["unscored"]) for p in points] == [
        (2, 0.75, 4, 0),
        (10, 0.25, 4, 1),
    ]
    for point, successes in zip(points, (3, 1), strict=True):
        low, high = binomtest(successes, 4).proportion_ci(method="wilson")
        assert point["ci_low"] == pytest.approx(low, abs=1e-12)
        assert point["ci_high"] == pytest.approx(high, abs=1e-12)
    assert points[1]["labels"] == {
        "correct": {"n": 1, "share": 0.25},
        "inconsistent": {"n": 1, "share": 0.25},
        "unaware_violation": {"n": 2, "share": 0.5},
    }
    summary = found["summary"]["M"]
    assert summary["label_rate"] == 0.5  # 4 of 8 scored
    low, high = binomtest(4, 8).proportion_ci(method="wilson")
    assert summary["label_rate_ci_low"] == pytest.approx(low, abs=1e-12)
    assert summary["check_rate@helpful"] == pytest.approx(8 / 9)
    shares = found["panel"]["label_shares"]
    assert "M · correct" not in shares  # the error types only
    assert shares["M · unaware_violation"] == [  # 0 where it did not occur
        {"k": 2, "mean": 0.0, "n": 4, "label": "unaware_violation"},
        {"k": 10, "mean": 0.5, "n": 4, "label": "unaware_violation"},
    ]


@pytest.fixture
def server():
    with ScriptedJudge() as judge:
        yield judge


def test_the_sample_converts_and_evaluates_with_the_scripted_judge(
    app_factory, server, tmp_path
):
    """The sample's run file (4 items, PrefEval's own verdicts given to the
    scripted judge): the four checks, the labels PrefEval's rule gives, and
    accuracy 1/4 at 2 inter-turns; a copy at 5 inter-turns makes a second
    point. The item whose hallucination verdict is empty (truncated) is
    still an unaware violation: nothing was acknowledged."""
    app = app_factory(JUDGE_API_URL=server.url, JUDGE_MODEL="scripted", **FAST_JUDGE)
    sessions = sample_sessions() + sample_sessions(5)[:2]
    path = crafted.write(tmp_path / "prefeval.jsonl", sessions)
    document = evaluate(app, path, None, suites=["checks"], protocol="prefeval")
    assert document["run"]["judge"]["protocol"]["name"] == "prefeval"
    rows = document["rows"]
    labels = {  # the label of each item is the one-hot row that is 1
        r["session_id"]: r["metric"].split(":", 1)[1]
        for r in rows
        if r["metric"].startswith("label_is@outcome:") and r["value"] == 1.0
    }
    assert labels == {
        "explicit/travel_demo/2turn/0": "correct",
        "explicit/travel_demo/2turn/1": "unhelpful",
        "explicit/travel_demo/2turn/2": "hallucinated_violation",
        "explicit/travel_demo/2turn/3": "unaware_violation",
        "explicit/travel_demo/5turn/0": "correct",
        "explicit/travel_demo/5turn/1": "unhelpful",
    }
    judged = [r for r in rows if r["metric"].startswith("check@")]
    assert len(judged) == 6 * 4
    [empty] = [r for r in judged if r["status"] != "ok"]
    assert (empty["session_id"], empty["metric"], empty["status"]) == (
        "explicit/travel_demo/2turn/3",
        "check@hallucinate",
        "unscored",
    )
    points = document["curves"]["label_rate"]["demo"]
    assert [(p["k"], p["mean"], p["n"]) for p in points] == [(2, 0.25, 4), (5, 0.5, 2)]
    assert all(p["ci_low"] is not None and p["ci_high"] is not None for p in points)
    summary = document["summary"]["demo"]
    assert summary["label_rate"] == pytest.approx(2 / 6)
    assert summary["label_share@outcome:unaware_violation"] == pytest.approx(1 / 6)
    assert summary["label_share@outcome:inconsistent"] == 0.0
    # PrefEval publishes no human labels: no agreement figure to compute
    assert document["judge_validity"]["human"] is None
    # the truncated verdict is unscored, so the run says partial
    assert document["run"]["status"] == "partial"
    # the dashboard draws the curve (x = inter-turns, a tick at each) and the
    # error types' shares
    run = app.extensions["storage"].runs.get_run(document["run"]["id"])
    client = app.test_client()
    page = client.get(f"/r/{run.token}").get_data(as_text=True)
    figures = json.loads(page.split('id="figures">', 1)[1].split("</script>", 1)[0])
    curve = next(
        f for f in figures.values() if "inter-turns (95% Wilson" in json.dumps(f)
    )
    [line] = [t for t in curve["data"] if t.get("mode") == "lines+markers"]
    assert (line["x"], line["y"]) == ([2, 5], [0.25, 0.5])
    assert [c[0] for c in line["customdata"]] == [4, 2]  # n per point
    assert curve["layout"]["xaxis"]["tickvals"] == [2, 5]
    shares = next(f for f in figures.values() if "Error types by" in json.dumps(f))
    names = {t.get("name") for t in shares["data"]} - {None}
    assert names == {
        "demo · unaware_violation",
        "demo · unhelpful",
        "demo · hallucinated_violation",
    }
    assert "Success rate by number of inter-turns" in page
    # the exports: the results document (above), the rows, Markdown and LaTeX
    rows_csv = client.get(f"/r/{run.token}/export.csv").get_data(as_text=True)
    assert "label_is@outcome:unaware_violation" in rows_csv
    markdown = client.get(f"/r/{run.token}/export.md").get_data(as_text=True)
    assert "| demo | 2 | 0.250 | \\[0.046, 0.699\\] | 4 | 0 |" in markdown
    assert "| demo | 5 | 0.500 |" in markdown
    tex = client.get(f"/r/{run.token}/export.tex").get_data(as_text=True)
    assert "demo & 2 & 0.250 & [0.046, 0.699] & 4 & 0 &" in tex


@pytest.mark.parametrize(
    ("change", "key", "said"),
    [
        (
            lambda t: t.replace(
                "acknow = 1, hallucinate = 1", "acknow = 1, halucinate = 1"
            ),
            "labels.outcome.rules",
            "halucinate is not a yes/no check",
        ),
        (
            lambda t: t.replace(
                '  { label = "unaware_violation", when = { helpful = 1, violate = 1, acknow = 0 } },\n',
                "",
            ),
            "labels.outcome.rules",
            "no rule gives a label when acknow = 0, hallucinate = 0, helpful = 1, violate = 1",
        ),
        (
            lambda t: t.replace('success = ["correct"]', 'success = ["right"]'),
            "labels.outcome.success",
            "no rule gives right",
        ),
        (
            lambda t: t.replace(
                '[modes.acknow]\nkind = "binary"', '[modes.acknow]\nkind = "choice"'
            ),
            "modes.acknow.kind",
            'or a yes/no check (kind = "binary")',
        ),
        (
            lambda t: t.replace("$reference", "$preference", 1),
            "modes.violate.user",
            "unknown placeholder",
        ),
    ],
)
def test_a_broken_label_or_check_is_refused_naming_the_key(change, key, said):
    text = (protocols.PROTOCOL_DIR / "prefeval.toml").read_text("utf-8")
    broken = change(text)
    assert broken != text
    with pytest.raises(ProtocolError) as caught:
        protocols.load(broken)
    problems = {(k, str(p.get("detail", ""))) for _, k, _, p in caught.value.problems}
    assert any(k == key and said in detail for k, detail in problems), problems


def recorded_sample(tmp_path) -> Path:
    """The sample's run file converted by the importer (PrefEval's own
    verdicts on each reply as the recorded judge PrefEval-judge), each reply
    scripting the same verdicts for the run's judge, but the fourth item's
    hallucination check, which the run's judge answers no (PrefEval's is
    empty)."""
    path = sample_file()
    sessions = []
    for number, item in enumerate(json.loads(path.read_text("utf-8")), 1):
        session = prefeval(item, number, Options(source=path.name))
        reply = session["rounds"][0]["responses"]["demo"]
        said = recorded(item)
        said["hallucinate"] = (
            "0" if said["hallucinate"] == "none" else said["hallucinate"]
        )
        reply["text"] = scripted(reply["text"], **said)
        sessions.append(session)
    return crafted.write(tmp_path / "recorded.jsonl", sessions)


def test_prefevals_own_verdicts_are_a_recorded_judge_without_any_judge(
    app_factory, tmp_path
):
    """A run file's evaluation_error_analysis enters as the recorded judge
    PrefEval-judge: with no judge configured, no call, its four verdicts per
    reply (the empty one left out), its labels by PrefEval's rule and its
    accuracy 1/4, the sample's stated figure."""
    app = app_factory()
    document = evaluate(
        app, recorded_sample(tmp_path), None, suites=["checks"], protocol="prefeval"
    )
    assert document["run"]["counts"]["judge_calls"] == 0
    rows = document["rows"]
    verdicts = [r for r in rows if r["metric"].startswith("recorded_check@")]
    assert len(verdicts) == 4 * 4 - 1  # the empty hallucination verdict left out
    labels = {
        r["session_id"].rsplit("/", 1)[1]: r["metric"].rsplit(":", 1)[1]
        for r in rows
        if r["metric"].startswith("recorded_label_is@PrefEval-judge@outcome:")
        and r["value"] == 1.0
    }
    assert labels == {
        "0": "correct",
        "1": "unhelpful",
        "2": "hallucinated_violation",
        "3": "unaware_violation",
    }
    summary = document["summary"]["demo"]
    assert summary["recorded_label_rate@PrefEval-judge@outcome"] == 0.25
    [point] = document["curves"]["recorded_label_rate@PrefEval-judge@outcome"]["demo"]
    assert (point["k"], point["mean"], point["n"]) == (2, 0.25, 4)
    # the run's own checks: not configured, never a number
    own = [r for r in rows if r["metric"].startswith(("check@", "label@"))]
    assert {r["status"] for r in own} == {"not_configured"}


def test_the_runs_judge_is_compared_with_the_recorded_judge_check_by_check(
    app_factory, server, tmp_path
):
    from sklearn.metrics import cohen_kappa_score

    app = app_factory(JUDGE_API_URL=server.url, JUDGE_MODEL="scripted", **FAST_JUDGE)
    document = evaluate(
        app, recorded_sample(tmp_path), None, suites=["checks"], protocol="prefeval"
    )
    summary = document["summary"]["demo"]
    # the same verdicts on every item both answered: agreement 1
    assert summary["check_agreement@PrefEval-judge@violate"] == 1.0
    assert summary["check_kappa@PrefEval-judge@violate"] == pytest.approx(
        cohen_kappa_score(["0", "0", "1", "1"], ["0", "0", "1", "1"])
    )
    # hallucinate: 3 items both answered (PrefEval's fourth is empty)
    run = app.extensions["storage"].runs.get_run(document["run"]["id"])
    table = {
        (r["judge"], r["check"]): r
        for r in run.aggregates["panels"]["checks"]["recorded_agreement"]
    }
    assert table[("PrefEval-judge", "hallucinate")]["n"] == 3
    assert table[("PrefEval-judge", "acknow")] == {
        "judge": "PrefEval-judge",
        "check": "acknow",
        "n": 4,
        "agreement": 1.0,
        "kappa": 1.0,
    }
    page = app.test_client().get(f"/r/{run.token}").get_data(as_text=True)
    assert "This run&#39;s judge against the recorded judges" in page or (
        "This run's judge against the recorded judges" in page
    )
    # the methods' success rates compared session by session: one method
    # here, so no comparison, and the session values are there for them
    assert document["comparisons"] == []
    # one number of inter-turns: the interval is an error bar (no band)
    figures = json.loads(page.split('id="figures">', 1)[1].split("</script>", 1)[0])
    curve = next(
        f for f in figures.values() if "inter-turns (95% Wilson" in json.dumps(f)
    )
    [line] = [t for t in curve["data"] if t.get("mode") == "lines+markers"]
    [point] = document["curves"]["label_rate"]["demo"]
    assert line["error_y"]["array"] == [pytest.approx(point["ci_high"] - point["mean"])]
    assert line["error_y"]["arrayminus"] == [
        pytest.approx(point["mean"] - point["ci_low"])
    ]
    # both judges' accuracy by inter-turns, side by side in the table
    assert (
        summary["label_rate"] == summary["recorded_label_rate@PrefEval-judge@outcome"]
    )


@pytest.mark.parametrize(("successes", "n"), [(0, 6), (6, 6), (0, 1), (3, 7)])
def test_wilson_bounds_match_scipy_and_are_exact_at_the_ends(successes, n):
    from scipy.stats import binomtest

    low, high = binomtest(successes, n).proportion_ci(method="wilson")
    found = checks.wilson(successes, n)
    assert found == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))
    if successes == 0:  # not 2.8e-17: a share of none has 0 as its bound
        assert found[0] == 0.0
    if successes == n:
        assert found[1] == 1.0


def test_methods_are_compared_on_the_success_rate_session_by_session(
    app_factory, server, tmp_path
):
    app = app_factory(JUDGE_API_URL=server.url, JUDGE_MODEL="scripted", **FAST_JUDGE)
    cases = ["correct", "unhelpful", "inconsistent", "correct", "correct", "correct"]
    sessions = []
    for i, case in enumerate(cases):
        s = session(f"s{i}", 2, "x")
        s["rounds"][0]["responses"] = {
            "A": scripted("a", **CRAFTED[case]),
            "B": scripted("b", **CRAFTED["unhelpful"]),
        }
        sessions.append(s)
    path = crafted.write(tmp_path / "two.jsonl", sessions)
    document = evaluate(app, path, None, suites=["checks"], protocol="prefeval")
    [found] = [c for c in document["comparisons"] if c["metric"] == "label"]
    assert (found["a"], found["b"], found["n"]) == ("A", "B", 6)
    assert found["diff"] == pytest.approx(4 / 6)
    assert found["value_metric"] == "label_rate"
