"""The optional blocks of a response (dataset/blocks.py): human labels,
recorded judges' verdicts, each checked where it stands."""

import io
import json

import pytest

import dataset
from dataset.blocks import CRITERION, JUDGE_NAME


def errors(response: dict) -> list[tuple[str, str]]:
    session = {
        "session_id": "a",
        "user_profile": "p",
        "user_personality": "q",
        "rounds": [{"round": 1, "user_message": "m", "responses": {"A": response}}],
    }
    data = json.dumps(session).encode() + b"\n"
    report = dataset.validate_stream(io.BytesIO(data), "x.jsonl")
    return [(e.code, ".".join(map(str, e.path))) for e in report.errors]


def test_well_formed_blocks_pass():
    assert errors({"text": "t", "human": {"al": 80, "binary": 1}}) == []
    assert (
        errors(
            {
                "text": "t",
                "judges": {"gpt-4o/2024": {"fluency": {"value": 4, "scale": [1, 5]}}},
            }
        )
        == []
    )


@pytest.mark.parametrize(
    ("human", "code"),
    [
        ({"al": 101}, "human_al_range"),
        ({"binary": 2}, "human_binary_value"),
        ({"binary": True}, "human_binary_value"),
    ],
)
def test_human_labels_out_of_range_are_named(human, code):
    assert [c for c, _ in errors({"text": "t", "human": human})] == [code]


def test_a_recorded_judge_s_name_must_be_a_model_name():
    found = errors({"text": "t", "judges": {"no spaces!": {}}})
    assert [c for c, _ in found] == ["recorded_judge_name"]
    assert JUDGE_NAME.fullmatch("claude-3.5/sonnet+v2")
    assert not JUDGE_NAME.fullmatch("-leading-dash")


def test_criteria_are_metric_keys():
    assert CRITERION.fullmatch("memory_consistency")
    assert not CRITERION.fullmatch("Memory Consistency")
    assert not CRITERION.fullmatch("x" * 41)
