"""Optional ``slot_judge`` metric of the slots suite: the strict JSON parser,
rows from a fake judge, and end to end through the scripted judge over HTTP."""

from __future__ import annotations

import json

import pytest

from evaluator import Judge, JudgeConfig
from metrics.judging import load_prompt
from metrics.suites import slots
from metrics.suites.slots import judge as slot_judge
from metrics.suites.slots.judge import parse_slot_judge
from testing.judge_server import ScriptedJudge
from tests.fake_judge import FakeJudge, scripted

TRUTH = {"basic_info": {"city": "北京", "job": "engineer"}}


def reply(*scores, reasoning=None) -> str:
    payload = {"scores": [{"topic": t, "field": f, "score": s} for t, f, s in scores]}
    if reasoning is not None:
        payload["reasoning"] = reasoning
    return json.dumps(payload, ensure_ascii=False)


def session(sid, *writes, truth=TRUTH, method="M") -> dict:
    """Method ``method`` writes ``writes[i]`` (None: no ``slots``) in round i+1."""
    rounds = []
    for k, write in enumerate(writes, 1):
        response = {"text": "..."} | ({"slots": write} if write is not None else {})
        rounds.append(
            {"round": k, "user_message": "hi", "responses": {method: response}}
        )
    return {"session_id": sid, "ground_truth_slots": truth, "rounds": rounds}


def judged(rows):
    return {
        (r["session_id"], r["method"]): r for r in rows if r["metric"] == "slot_judge"
    }


# -- parser ---------------------------------------------------------------------
def test_parser_accepts_valid_and_fenced_json():
    text = reply(("b", "city", 1), ("b", "job", 0.5), reasoning="job is vague")
    verdict = parse_slot_judge(text)
    assert verdict.score == 0.75
    assert verdict.parts == {"b/city": 1.0, "b/job": 0.5}
    assert verdict.reasoning == "job is vague"
    assert parse_slot_judge(f"```json\n{text}\n```").to_dict() == verdict.to_dict()
    assert slots.SUITE.modes[0].parse is parse_slot_judge


@pytest.mark.parametrize(
    "text",
    [
        reply(("b", "city", 1.5)),
        reply(("b", "city", -0.1)),
        reply(("b", "city", True)),
        reply(("b", "city", "1")),
        reply(("b", "city", 1), ("b", "city", 1)),
        reply(),
        '{"scores": [{"topic": "b", "field": "city", "score": NaN}]}',
        '{"scores": [{"topic": "b", "field": "city"}]}',
        '{"scores": [], "extra": 1}',
        '{"scores": [{"topic": "b", "field": "city", "score": 1}], "reasoning": 3}',
        "The city is right, so 1.0.",
        "Here you go: " + reply(("b", "city", 1)),
    ],
)
def test_parser_rejects_anything_else(text):
    assert parse_slot_judge(text) is None


def test_parser_with_expected_slots_requires_exact_coverage():
    text = reply(("b", "city", 1))
    assert parse_slot_judge(text, [("b", "city")]).score == 1.0
    assert parse_slot_judge(text, [("b", "city"), ("b", "job")]) is None  # missing
    assert parse_slot_judge(text, []) is None  # not listed


# -- prompt and rows ---------------------------------------------------------------
def test_prompt_lists_every_predicted_slot_with_its_ground_truth():
    truth = {("b", "city"): ["北京"]}
    predicted = {("b", "city"): ["上海"], ("x", "pet"): ["cat"]}
    item = slot_judge.judge_item(truth, predicted)
    assert (item.mode.name, item.prompt_version) == ("slot_judge", "slot_judge_v2")
    user = item.messages[-1]["content"]
    block = user.split("<<<SLOTS\n")[1].split("\nSLOTS>>>")[0]
    lines = [json.loads(line) for line in block.splitlines()]
    assert lines == [
        {
            "topic": "b",
            "field": "city",
            "predicted": ["上海"],
            "ground_truth": ["北京"],
        },
        {
            "topic": "x",
            "field": "pet",
            "predicted": ["cat"],
            "ground_truth": "(not in ground truth)",
        },
    ]
    assert "Slot extraction judging task" in user
    assert load_prompt("slot_judge_v2").version == "slot_judge_v2"


def test_rows_from_a_fake_judge_one_batch_one_call_per_pair():
    sessions = [
        session(
            "s1", {"basic_info": {"city": "北京"}}, {"basic_info": {"job": "chef"}}
        ),
        session("s2", None, None),
        session("s3", {"hobby": {"sport": "chess"}}, truth={}),
    ]
    judge = FakeJudge(scripted)
    rows = slots.run(sessions, ["M"], judge, {})
    assert len(judge.batches) == 1 and len(judge.batches[0]) == 1
    by_pair = judged(rows)
    first = by_pair["s1", "M"]
    assert (first["status"], first["round"], first["value"]) == ("ok", None, 0.75)
    assert [s["score"] for s in first["detail"]["scores"]] == [1.0, 0.5]
    assert first["detail"]["reasoning"] == "scripted slot verdict."
    assert by_pair["s2", "M"]["status"] == "not_applicable"
    assert by_pair["s2", "M"]["note"] == "no predicted slots to judge"
    assert (
        by_pair["s3", "M"]["note"] == "ground_truth_slots has no non-empty value"
    )  # {}
    json.dumps(rows)
    result = slots.summarize(rows, ["M"])
    assert result["summary"]["M"]["slot_judge_avg"] == 0.75
    assert result["session_values"]["slot_judge"] == {"M": {"s1": 0.75}}


def test_a_reply_missing_a_listed_slot_is_unscored():
    write = {"basic_info": {"city": "北京", "job": "engineer"}}
    judge = FakeJudge(lambda item: reply(("basic_info", "city", 1)))
    (row,) = judged(slots.run([session("s1", write)], ["M"], judge, {})).values()
    assert (row["status"], row["value"]) == ("unscored", None)
    assert row["note"] == "the judge did not score exactly the listed slots"


def test_no_judge_no_slot_judge_rows():
    rows = slots.run([session("s1", {"basic_info": {"city": "北京"}})], ["M"], None, {})
    assert not judged(rows)
    result = slots.summarize(rows, ["M"])
    assert result["summary"]["M"]["slot_judge_avg"] is None
    assert result["session_values"]["slot_judge"] == {}


def test_metrics_registered():
    by_id = {m.id: m for m in slots.SUITE.metrics}
    assert by_id["slot_judge"].level == "session" and by_id["slot_judge"].needs_judge
    assert by_id["slot_judge_avg"].compare == "slot_judge"


# -- end to end over HTTP ------------------------------------------------------------
def test_end_to_end_through_the_scripted_judge():
    sessions = [
        session("exact", {"basic_info": {"city": "北京", "job": "engineer"}}),
        session("half", {"basic_info": {"city": "上海"}}, {"pets": {"kind": "cat"}}),
        session("broken", {"basic_info": {"city": "[[fault=garbage]]"}}),
        session("silent", None),
    ]
    methods = ["M"]
    with ScriptedJudge() as server:
        config = JudgeConfig(
            base_url=server.url, model="scripted", max_retries=1, backoff_cap_s=0.05
        )
        rows = slots.run(sessions, methods, Judge(config), {})
        calls = server.state.calls
    by_pair = judged(rows)
    assert by_pair["exact", "M"]["value"] == 1.0
    assert by_pair["half", "M"]["value"] == 0.5
    scores = by_pair["half", "M"]["detail"]["scores"]
    assert [(s["topic"], s["score"]) for s in scores] == [
        ("basic_info", 0.5),
        ("pets", 0.5),
    ]
    broken = by_pair["broken", "M"]
    assert (broken["status"], broken["value"]) == ("unscored", None)
    assert "could not be parsed" in broken["note"]
    assert by_pair["silent", "M"]["note"] == "no predicted slots to judge"
    assert calls == 4  # three judged pairs, the garbage one asked twice
    summary = slots.summarize(rows, methods)
    assert summary["summary"]["M"]["slot_judge_avg"] == 0.75
    assert summary["session_values"]["slot_judge"] == {"M": {"exact": 1.0, "half": 0.5}}
