"""The malformed-input corpus (tests/corpus/malformed) against the validator.

Each file holds one problem family; the table below is the exact set of
``(line, code, path)`` errors the validator must report for it. Lines are
1-based physical lines, blank lines included; ``None`` is a file-level
problem. Messages are not asserted (they are translated elsewhere).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

import dataset

CORPUS = Path(__file__).parents[1] / "corpus" / "malformed"
# files that were rejected until missing replies could be expressed: valid
# now, each with one warning per method that lacks replies
MISSING_REPLIES = Path(__file__).parents[1] / "corpus" / "missing_replies"
MISSING = "missing_field"
TYPE = "wrong_type"

EXPECTED_ERRORS: dict[str, set[tuple[int | None, str, str]]] = {
    "01_empty_file.jsonl": {(None, "empty_file", "")},
    "02_only_blank_lines.jsonl": {(None, "empty_file", "")},
    "wrong_extension.txt": {(None, "bad_extension", "")},
    "03_not_utf8_line2.jsonl": {(2, "not_utf8", "")},
    "04_bom_then_invalid_json_line3.jsonl": {(3, "invalid_json", "")},
    "05_crlf_missing_profile_line3.jsonl": {(3, MISSING, "user_profile")},
    "06_invalid_json_truncated.jsonl": {(2, "invalid_json", "")},
    "07_invalid_json_trailing_comma.jsonl": {(2, "invalid_json", "")},
    "08_invalid_json_single_quotes.jsonl": {
        (1, "invalid_json", ""),
        (3, "invalid_json", ""),
    },
    "09_not_object_array.jsonl": {(2, "not_object", "")},
    "10_not_object_string_and_number.jsonl": {
        (2, "not_object", ""),
        (3, "not_object", ""),
    },
    "11_not_object_null.jsonl": {(2, "not_object", "")},
    "12_missing_session_id.jsonl": {(2, MISSING, "session_id")},
    "13_missing_user_profile.jsonl": {(2, MISSING, "user_profile")},
    "14_missing_user_personality.jsonl": {(2, MISSING, "user_personality")},
    "15_missing_rounds.jsonl": {(2, MISSING, "rounds")},
    "16_session_id_number.jsonl": {(2, TYPE, "session_id")},
    "17_rounds_object.jsonl": {(2, TYPE, "rounds")},
    "18_round_string_and_boolean.jsonl": {
        (2, "round_as_string", "rounds[0].round"),  # "1": says how to convert
        (3, TYPE, "rounds[0].round"),
    },
    "19_responses_array.jsonl": {(2, TYPE, "rounds[0].responses")},
    "20_response_number.jsonl": {(2, TYPE, "rounds[0].responses.Base")},
    "21_response_object_without_text.jsonl": {
        (2, MISSING, "rounds[0].responses.Base.text")
    },
    "22_latency_negative_and_string.jsonl": {
        (2, "negative_latency", "rounds[0].responses.Ours.latency_s"),
        (4, TYPE, "rounds[0].responses.Ours.latency_s"),
    },
    "23_empty_user_profile.jsonl": {(2, "empty_value", "user_profile")},
    "24_empty_rounds.jsonl": {(2, "empty_value", "rounds")},
    "25_empty_responses.jsonl": {(2, "empty_value", "rounds[0].responses")},
    "26_duplicate_session_ids.jsonl": {(3, "duplicate_session", "session_id")},
    "27_round_order_and_round_zero.jsonl": {
        (1, "round_order", "rounds[2].round"),
        (2, "round_zero_based", "rounds[0].round"),  # says how to convert
    },
    "30_attributes_string.jsonl": {(2, TYPE, "attributes")},
    "31_persona_complete_string.jsonl": {(2, TYPE, "persona.complete")},
    "32_ground_truth_topic_not_object.jsonl": {(2, TYPE, "ground_truth_slots.food")},
    "33_sim_order_not_list.jsonl": {(2, TYPE, "rounds[0].responses.Ours.sim.order")},
    "34_sample_dialogues_number.jsonl": {(2, TYPE, "sample_dialogues")},
    "35_blank_lines_interleaved.jsonl": {
        (5, "invalid_json", ""),
        (7, "not_object", ""),
    },
    "36_round_entry_string.jsonl": {(2, TYPE, "rounds[0]")},
}
EXPECTED_WARNINGS = {
    "04_bom_then_invalid_json_line3.jsonl": {(1, "bom_removed", "")},
}
KNOWN_PATH_BUGS: dict[str, str] = {}

SEED_LINE = (
    '{"session_id":"user_001","user_profile":"22-year-old student in NYC, likes hiking",'
    '"user_personality":"curious, introverted, witty","rounds":[{"round":1,'
    '"user_message":"Hey!","responses":{"Base":"Hello!","Ours":"Hey! What\'s up?"}}]}'
)


def corpus_files() -> list[Path]:
    return sorted(path for path in CORPUS.iterdir() if path.is_file())


def validate(path: Path, **limits) -> dataset.ValidationReport:
    return dataset.validate_file(path, filename=path.name, **limits)


def triples(problems) -> set[tuple[int | None, str, str]]:
    return {(problem.line, problem.code, problem.path) for problem in problems}


def session_line(session_id: str, responses: list[dict] | None = None) -> str:
    rounds = responses or [{"Base": "Hello.", "Ours": "Hi there!"}]
    return json.dumps(
        {
            "session_id": session_id,
            "user_profile": "28, nurse in Lyon, likes climbing",
            "user_personality": "calm, curious",
            "rounds": [
                {"round": number, "user_message": "Hi!", "responses": replies}
                for number, replies in enumerate(rounds, start=1)
            ],
        }
    )


def path_case(name: str):
    if name in KNOWN_PATH_BUGS:
        mark = pytest.mark.xfail(reason=KNOWN_PATH_BUGS[name], strict=True)
        return pytest.param(name, marks=mark)
    return name


# -- the corpus -----------------------------------------------------------------
def test_corpus_has_at_least_25_files():
    assert len(corpus_files()) >= 25


def test_every_corpus_file_has_an_expectation():
    assert {path.name for path in corpus_files()} == set(EXPECTED_ERRORS)


@pytest.mark.parametrize("name", sorted(EXPECTED_ERRORS))
def test_corpus_file_reports_exactly_the_expected_lines_and_codes(name):
    report = validate(CORPUS / name)
    found = {(line, code) for line, code, _ in triples(report.errors)}
    assert found == {(line, code) for line, code, _ in EXPECTED_ERRORS[name]}
    assert report.errors_total == len(EXPECTED_ERRORS[name])
    assert not report.valid


@pytest.mark.parametrize("name", [path_case(name) for name in sorted(EXPECTED_ERRORS)])
def test_corpus_file_reports_the_expected_paths(name):
    assert triples(validate(CORPUS / name).errors) == EXPECTED_ERRORS[name]


@pytest.mark.parametrize("name", sorted(EXPECTED_ERRORS))
def test_corpus_file_warnings(name):
    expected = EXPECTED_WARNINGS.get(name, set())
    assert triples(validate(CORPUS / name).warnings) == expected


@pytest.mark.parametrize("name", sorted(EXPECTED_ERRORS))
def test_cli_rejects_corpus_file_with_the_same_lines(runner, name):
    result = runner.invoke(args=["validate", str(CORPUS / name), "--json"])
    assert result.exit_code == 1, result.output
    errors = json.loads(result.stdout)["errors"]
    assert Counter(error["line"] for error in errors) == Counter(
        line for line, _, _ in EXPECTED_ERRORS[name]
    )


def test_oversized_line_is_reported_and_the_next_line_still_checked(tmp_path):
    filler = "x" * 5000
    oversized = session_line("s2").replace("Lyon", f"Lyon {filler}")
    path = tmp_path / "oversized.jsonl"
    path.write_text(
        "\n".join([session_line("s1"), oversized, session_line("s1")]) + "\n"
    )
    report = validate(path, max_line_bytes=1024)
    assert triples(report.errors) == {
        (2, "line_too_long", ""),
        (3, "duplicate_session", "session_id"),
    }
    assert report.errors[0].params["size"] == len(oversized) + 1
    assert report.errors[0].params["limit"] == 1024


# -- valid inputs ---------------------------------------------------------------
def test_seed_readme_example_validates(tmp_path):
    path = tmp_path / "seed.jsonl"
    path.write_text(SEED_LINE + "\n")
    report = validate(path)
    assert report.valid, report.to_dict()
    assert (report.sessions, report.methods) == (1, ["Base", "Ours"])
    assert report.warnings == []


def test_crlf_bom_and_blank_lines_validate_with_a_bom_warning(tmp_path):
    lines = ["", session_line("s1"), "", "   ", session_line("s2"), ""]
    path = tmp_path / "windows.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(lines).encode() + b"\r\n")
    report = validate(path)
    assert report.valid, report.to_dict()
    assert report.sessions == 2
    assert triples(report.warnings) == {(1, "bom_removed", "")}


def test_string_and_object_responses_can_be_mixed(tmp_path):
    rounds = [
        {"Base": "Hello.", "Ours": {"text": "Hi!", "latency_s": 0.4}},
        {"Base": {"text": "Sure."}, "Ours": "Of course!"},
    ]
    path = tmp_path / "mixed.jsonl"
    path.write_text(session_line("s1", rounds) + "\n" + session_line("s2") + "\n")
    report = validate(path)
    assert report.valid, report.to_dict()
    assert (report.sessions, report.rounds) == (2, 3)


# -- the error cap --------------------------------------------------------------
def test_error_cap_keeps_200_errors_and_counts_the_rest(tmp_path):
    path = tmp_path / "many.jsonl"
    path.write_text("[]\n" * 500)
    report = validate(path, max_errors=200)
    assert len(report.errors) == 200
    assert report.errors_total == 500
    errors = report.to_dict()["errors"]
    assert report.to_dict()["errors_total"] == 500
    assert len(errors) == 201
    assert [error["line"] for error in errors[:200]] == list(range(1, 201))
    summary = errors[-1]
    assert (summary["line"], summary["code"]) == (None, "too_many_errors")
    assert summary["params"]["count"] == 300


@pytest.mark.parametrize(
    ("name", "methods", "warned"),
    [
        ("later_session_lacks_a_reply.jsonl", ["Base", "Ours"], {"Ours": (1, 4)}),
        ("method_in_one_session.jsonl", ["Base", "Ours", "Extra"], {"Extra": (1, 2)}),
    ],
)
def test_a_missing_reply_is_valid_and_counted_per_method(name, methods, warned):
    report = validate(MISSING_REPLIES / name)
    assert report.valid and report.methods == methods
    found = report.to_dict()["warnings"]
    assert {
        w["path"]: (w["params"]["missing"], w["params"]["total"]) for w in found
    } == (warned)
    # on the one line lacking a reply of the method (issue 56: it was null)
    assert all(w["code"] == "replies_missing" for w in found)
    assert {w["path"]: (w["line"], w["lines"]) for w in found} == {
        method: (3, [3]) if method == "Ours" else (1, [1]) for method in warned
    }


def test_other_spellings_of_our_layout_name_the_converter(tmp_path):
    line = json.loads(SEED_LINE)
    line["user_profile"] = ["22-year-old student.", "Likes hiking."]
    path = tmp_path / "persona_list.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    [problem] = validate(path).errors
    assert (problem.code, problem.path) == ("listed_persona", "user_profile")
    assert "convert --from lenient" in problem.message
