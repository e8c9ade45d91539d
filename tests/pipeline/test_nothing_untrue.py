"""Nothing untrue (issue 45): a file with no reply to evaluate is invalid, a
run with nothing evaluated is never ``done``, a blank reply is never scored,
a number is a slot value, and a warning counts every line that has it."""

from __future__ import annotations

import io
import json

import dataset
from metrics import registry
from metrics.suites.slots import matching as slot_matching
from tests import crafted
from tests.pipeline_support import evaluate


def _validate(sessions: list[dict]):
    text = "".join(json.dumps(session) + "\n" for session in sessions)
    stream = io.BytesIO(text.encode())
    return dataset.validate_stream(stream, "f.jsonl", suites=registry.suites())


def _session(name: str, replies: dict, **extra) -> dict:
    return {**crafted.session(name, {m: [r] for m, r in replies.items()}), **extra}


def test_a_file_whose_every_reply_is_missing_or_blank_is_invalid():
    report = _validate(
        [_session("a", {"A": None, "B": "  "}), _session("b", {"A": "", "B": None})]
    )
    assert not report.valid
    assert [problem.code for problem in report.errors] == ["no_replies"]
    assert _validate([_session("a", {"A": None, "B": "fine"})]).valid


def test_an_unknown_field_is_counted_on_every_line_that_has_it():
    report = _validate([_session(str(n), {"A": "x"}, extra=1) for n in range(7)])
    [warning] = [
        w for w in report.to_dict()["warnings"] if w["code"] == "unknown_field"
    ]
    assert (warning["count"], warning["lines"]) == (7, [1, 2, 3, 4, 5])


def test_a_missing_reply_warning_names_the_lines_that_lack_one():
    """Issue 56: ``replies_missing`` said ``lines: [null]``. Its count and
    lines are those of the sessions (lines) lacking a reply of the method,
    as for every grouped warning; a method first seen on line 5 is lacking
    on the four lines before it."""
    base = {"A": "x", "B": "y"}
    sessions = [
        _session("1", base),
        _session("2", {"A": "x", "B": None}),
        _session("3", {"A": "x"}),
        _session("4", base),
        _session("5", {**base, "C": "z"}),
    ]
    warned = {
        w["path"]: w
        for w in _validate(sessions).to_dict()["warnings"]
        if w["code"] == "replies_missing"
    }
    shown = {
        path: (w["line"], w["count"], w["lines"], w["params"]["missing"])
        for path, w in warned.items()
    }
    assert shown == {"B": (2, 2, [2, 3], 2), "C": (1, 4, [1, 2, 3, 4], 4)}


def test_a_number_is_a_slot_value_read_as_its_text():
    session = _session(
        "s",
        {"A": {"text": "ok", "slots": {"me": {"age": 22}}}},
        ground_truth_slots={"me": {"age": "22", "h": [1.5, "x"]}},
    )
    assert _validate([session]).valid
    assert slot_matching.values_of(22) == slot_matching.values_of("22") == ["22"]
    bad = _session("s", {"A": "ok"}, ground_truth_slots={"me": {"ok": True}})
    assert [p.code for p in _validate([bad]).errors] == ["wrong_type"]


def test_a_blank_reply_is_unscored_in_every_suite_and_never_judged(
    app_factory, tmp_path, judge_server
):
    sessions = [
        crafted.session(
            "a", {"A": ["first [[al=50]]", "", "third"], "B": ["one", "two", "three"]}
        )
    ]
    path = crafted.write(tmp_path / "b.jsonl", sessions)
    document = evaluate(
        app_factory(), path, judge_server, suites=["alignment", "quality"]
    )
    blank = [
        row for row in document["rows"] if (row["round"], row["method"]) == (2, "A")
    ]
    assert {(row["metric"], row["status"], row["note_code"]) for row in blank} == {
        ("al", "unscored", "empty_response"),
        ("coherence", "unscored", "empty_response"),  # its headline metric
    }
    assert document["run"]["status"] == "partial"  # and says so
    # 5 of the 6 replies judged, each twice (alignment and binary)
    assert document["run"]["counts"]["judge_calls"] == 10


def test_a_run_with_nothing_evaluated_fails_with_the_reason(app_factory, tmp_path):
    """The pairwise judge without a judge: every row is not_configured (it
    was 'done', and the CLI exited 0, with nothing evaluated)."""
    app = app_factory()
    path = crafted.write(tmp_path / "n.jsonl", crafted.alignment_sessions())
    document = evaluate(app, path, None, suites=["pairwise"])
    assert document["run"]["status"] == "failed"
    run = app.extensions["storage"].runs.get_run(document["run"]["id"])
    assert run.failure["code"] == "nothing_to_evaluate"
    assert run.failure["params"]["not_configured"] == 20
    result = app.test_cli_runner().invoke(
        args=["evaluate", str(path), "--suite", "pairwise"]
    )
    assert result.exit_code == 1, result.output
