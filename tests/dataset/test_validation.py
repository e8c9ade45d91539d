"""Validator edge cases found by review and fuzzing (regressions)."""

from __future__ import annotations

import io
import json

import pytest

import dataset

GOOD = {
    "session_id": "a",
    "user_profile": "p",
    "user_personality": "q",
    "rounds": [{"round": 1, "user_message": "m", "responses": {"A": "t"}}],
}


def codes(data: bytes, **limits) -> list[tuple]:
    report = dataset.validate_stream(io.BytesIO(data), "x.jsonl", **limits)
    return [(e.line, e.code) for e in report.errors]


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_non_json_number_constants_are_rejected(constant):
    line = json.dumps(GOOD).replace(
        '"t"', '{"text": "t", "latency_s": ' + constant + "}"
    )
    assert codes(line.encode() + b"\n") == [(1, "invalid_json")]


def test_lone_surrogate_escape_is_rejected_but_pairs_are_fine():
    lone = json.dumps(GOOD).replace('"t"', '"\\ud800"')
    pair = json.dumps(GOOD).replace('"t"', '"\\ud83d\\ude00"')
    assert codes(lone.encode() + b"\n") == [(1, "invalid_json")]
    assert codes(pair.encode() + b"\n") == []


@pytest.mark.parametrize("blank", [b"\x0c\n", b"\xc2\xa0\n"])
def test_non_json_whitespace_is_not_a_blank_line(blank):
    assert codes(blank) == [(1, "invalid_json")]


@pytest.mark.parametrize("ending", [b"\n", b"\r\n", b""])
def test_line_limit_counts_content_not_the_line_ending(ending):
    line = json.dumps(GOOD).encode()
    assert codes(line + ending, max_line_bytes=len(line)) == []
    assert codes(line + ending, max_line_bytes=len(line) - 1) == [(1, "line_too_long")]


def test_oversized_line_is_skipped_and_counting_continues():
    line = json.dumps(GOOD).encode() + b"\n"
    data = line + b'{"x": "' + b"y" * 5000 + b'"}\n' + b"[1]\n"
    assert codes(data, max_line_bytes=len(line)) == [
        (2, "line_too_long"),
        (3, "not_object"),
    ]


def test_chunk_reader_keeps_unicode_line_separators_inside_strings(tmp_path):
    session = {**GOOD, "user_profile": "line\u2028separator\x0cform feed"}
    path = tmp_path / "x.jsonl"
    data = (json.dumps(session, ensure_ascii=False) + "\n").encode()
    path.write_bytes(data)
    assert dataset.validate_file(path).valid
    [loaded] = dataset.read_sessions(path, 0, len(data))
    assert loaded["user_profile"] == session["user_profile"]


# -- every string that reaches a prompt is bounded (issue 27) -----------------------
def limited_errors(session: dict) -> list[tuple]:
    from dataset.limits import Limits

    limits = Limits(max_text_chars=100, max_list_items=3)
    report = dataset.validate_stream(
        io.BytesIO(json.dumps(session).encode()), "x.jsonl", limits=limits
    )
    return [(e.path, e.code) for e in report.errors]


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        ({"sample_dialogues": "x" * 101}, ("sample_dialogues", "too_long")),
        ({"sample_dialogues": ["x"] * 4}, ("sample_dialogues", "too_many_items")),
        (
            {"sample_dialogues": ["x" * 60, "y" * 60]},
            ("sample_dialogues", "list_too_long"),
        ),
        ({"attributes": ["x" * 60, "y" * 60]}, ("attributes", "list_too_long")),
        (
            {"ground_truth_slots": {"t": {"f": "x" * 101}}},
            ("ground_truth_slots.t.f", "too_long"),
        ),
        (
            {"ground_truth_slots": {"t": {"f" * 65: "x"}}},
            ("ground_truth_slots.t." + "f" * 64, "too_long"),
        ),
        (
            {"ground_truth_slots": {"t": {"a": "1", "b": "2", "c": "3", "d": "4"}}},
            ("ground_truth_slots.t", "too_many_items"),
        ),
    ],
)
def test_strings_and_lists_that_reach_a_prompt_are_bounded(block, expected):
    assert expected in limited_errors({**GOOD, **block})


def test_a_warning_every_session_has_is_said_once_with_its_count(tmp_path):
    from dataset import validate_file

    lines = [
        json.dumps(
            {
                "session_id": f"s{i}",
                "user_profile": "p",
                "user_personality": "",
                "rounds": [
                    {
                        "round": 1,
                        "user_message": "hi",
                        "responses": {"A": "x", "B": "y"},
                    }
                ],
            }
        )
        for i in range(5000)
    ]
    path = tmp_path / "empty.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = validate_file(path).to_dict()
    assert report["valid"]
    [warning] = report["warnings"]
    assert warning["code"] == "empty_personality"
    assert warning["count"] == 5000 and warning["lines"] == [1, 2, 3, 4, 5]
