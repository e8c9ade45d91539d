"""Property tests: whatever bytes arrive, validation returns a well-formed report.

The only allowed outcome is a ``ValidationReport`` (never an exception) whose
``to_dict()`` is JSON-serialisable, whose codes are all known messages and
whose line numbers point inside the file (1-based physical lines) or are None.
"""

from __future__ import annotations

import copy
import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dataset
from core.problems import MESSAGES
from dataset.reader import DEFAULT_MAX_LINE_BYTES

FAST = settings(max_examples=300, deadline=None)
BOM = b"\xef\xbb\xbf"

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=12),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)

FULL_RESPONSE = {
    "text": "Hi! Pizza tonight?",
    "user_message": "Hey!",
    "latency_s": 0.4,
    "slots": {"food": {"likes": "pizza", "dislikes": ["olives"]}},
    "sim": {
        "exploration": "wide",
        "mood": "happy",
        "ordering": "strict",
        "complete": False,
        "exit": False,
        "order": ["food", "travel"],
        "tracking": ["food"],
    },
}
VALID_SESSION = {
    "session_id": "u1",
    "user_profile": "22-year-old student in NYC, likes hiking",
    "user_personality": "curious, introverted",
    "sample_dialogues": ["A: hi\nB: hey"],
    "attributes": ["witty"],
    "persona": {
        "type": "explorer",
        "exploration": "wide",
        "moods": ["happy"],
        "ordering": "strict",
        "complete": True,
    },
    "target_order": ["food", "travel"],
    "ground_truth_slots": {"food": {"likes": ["pizza"], "dislikes": "olives"}},
    "meta": {"source": "property test"},
    "rounds": [
        {"round": 1, "user_message": "Hey!", "responses": {"Base": "Hello!"}},
        {"round": 2, "user_message": "Food?", "responses": {"Base": "Sure."}},
    ],
}
for _round in VALID_SESSION["rounds"]:
    _round["responses"]["Ours"] = copy.deepcopy(FULL_RESPONSE)


def physical_lines(data: bytes) -> int:
    """Lines as ``readline`` splits them: a last line without b"\\n" counts."""
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def assert_well_formed(report, data: bytes) -> None:
    assert isinstance(report, dataset.ValidationReport)
    summary = report.to_dict()
    json.dumps(summary)
    lines = physical_lines(data)
    for problem in summary["errors"] + summary["warnings"]:
        assert problem["code"] in MESSAGES
        assert problem["line"] is None or 1 <= problem["line"] <= lines
    assert report.errors_total >= len(report.errors)
    assert report.valid == (report.errors_total == 0)


def validate(data: bytes, **limits) -> dataset.ValidationReport:
    return dataset.validate_stream(io.BytesIO(data), "x.jsonl", **limits)


# -- (a) random bytes -------------------------------------------------------------
PREFIXES = st.sampled_from([b"", b"\n", BOM, BOM + b"\n", b"\r\n"])
BODIES = st.binary() | st.lists(st.binary(max_size=40), max_size=8).map(b"\n".join)
LINE_LIMITS = st.just(DEFAULT_MAX_LINE_BYTES) | st.integers(1, 64)


@FAST
@given(prefix=PREFIXES, body=BODIES, max_line_bytes=LINE_LIMITS)
def test_random_bytes_give_a_report(prefix, body, max_line_bytes):
    data = prefix + body
    assert_well_formed(validate(data, max_line_bytes=max_line_bytes), data)


# -- (b) random JSON values, one per line -----------------------------------------
@pytest.mark.slow
@FAST
@given(
    values=st.lists(JSON_VALUES, max_size=6),
    separator=st.sampled_from(["\n", "\r\n", "\n\n"]),
)
def test_random_json_lines_give_a_report(values, separator):
    text = separator.join(json.dumps(value, ensure_ascii=False) for value in values)
    data = text.encode("utf-8")
    assert_well_formed(validate(data), data)


# -- (c) mutations of a valid session ---------------------------------------------
def value_paths(value, prefix: tuple = ()) -> list[tuple]:
    """Every path into ``value`` (keys and list indexes), the root included."""
    paths = [prefix]
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return paths
    for key, child in items:
        paths.extend(value_paths(child, (*prefix, key)))
    return paths


def parent_of(root, path: tuple):
    for key in path[:-1]:
        root = root[key]
    return root


def drop_key(session: dict, data) -> dict:
    keyed = [
        path
        for path in value_paths(session)
        if path and isinstance(parent_of(session, path), dict)
    ]
    path = data.draw(st.sampled_from(keyed), label="drop")
    del parent_of(session, path)[path[-1]]
    return session


def replace_value(session: dict, data):
    path = data.draw(st.sampled_from(value_paths(session)), label="replace")
    new_value = data.draw(JSON_VALUES, label="with")
    if not path:
        return new_value
    parent_of(session, path)[path[-1]] = new_value
    return session


def mutate(session, data):
    if isinstance(session, dict) and session and data.draw(st.booleans()):
        return drop_key(session, data)
    return replace_value(session, data)


def test_the_session_to_mutate_is_valid():
    data = (json.dumps(VALID_SESSION) + "\n").encode()
    report = validate(data)
    assert report.valid, report.to_dict()
    assert report.methods == ["Base", "Ours"]


@pytest.mark.slow
@FAST
@given(data=st.data(), mutations=st.integers(1, 3), mutated_first=st.booleans())
def test_mutated_sessions_give_a_report(data, mutations, mutated_first):
    mutated = copy.deepcopy(VALID_SESSION)
    for _ in range(mutations):
        mutated = mutate(mutated, data)
    other = dict(copy.deepcopy(VALID_SESSION), session_id="u2")
    lines = [mutated, other] if mutated_first else [other, mutated]
    payload = "".join(json.dumps(line) + "\n" for line in lines).encode()
    assert_well_formed(validate(payload), payload)
