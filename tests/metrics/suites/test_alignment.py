"""Alignment verdict parsing and its prompt files."""

from __future__ import annotations

import pytest

from metrics.suites.alignment import ALIGNMENT, BINARY, parse_alignment, parse_binary
from metrics.verdicts import NoVerdict

FULL = """Reasoning: fine.
Style: 18/20
Content: 17/20
Naturalness: 16/20
Personalization: 15/20
Conversation: 14/20
Total: \\boxed{80}"""


def test_alignment_sum_mismatch_is_flagged_and_the_boxed_total_wins():
    verdict = parse_alignment(FULL.replace("\\boxed{80}", "\\boxed{85}"))
    assert verdict.score == 85.0
    assert verdict.flags == ["sum_mismatch"]


def test_alignment_without_all_dimensions_is_not_flagged():
    verdict = parse_alignment("Style: 10/20\nTotal: \\boxed{50}")
    assert (verdict.score, verdict.parts, verdict.flags) == (50.0, {"style": 10.0}, [])


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "Total: \\boxed{}",
        "Total: \\boxed{180}",
        "Total: \\boxed{-5}",
        "Total: \\boxed{eighty}",
    ],
)
def test_unparseable_alignment_never_becomes_a_number(reply):
    assert isinstance(parse_alignment(reply), NoVerdict)


@pytest.mark.parametrize(
    ("reply", "expected"), [("\\boxed{1}", 1.0), ("x \\boxed{0}", 0.0)]
)
def test_binary(reply, expected):
    assert parse_binary(reply).score == expected


@pytest.mark.parametrize("reply", ["\\boxed{2}", "maybe", "\\boxed{0.5}", ""])
def test_unparseable_binary(reply):
    assert isinstance(parse_binary(reply), NoVerdict)


def test_two_different_unlabelled_verdicts_are_refused_with_both_values():
    refused = parse_binary("I considered \\boxed{1} but no.\n\\boxed{0}")
    assert refused.note.code == "ambiguous_verdict"
    assert refused.note.params == {"values": "1, 0"}


def test_a_labelled_verdict_wins_over_an_earlier_unlabelled_one():
    assert parse_binary("I considered \\boxed{1} but no.\nFinal answer: 0").score == 0.0


@pytest.mark.parametrize("mode", [ALIGNMENT, BINARY], ids=lambda m: m.name)
def test_prompts_render_every_field_and_keep_user_text_literal(mode):
    fields = {
        "profile": "学生 $HOME",
        "personality": "shy",
        "history": "(none)",
        "user_message": "Hi ${x}",
        "response": "<b>Hello</b>",
    }
    messages = mode.template.render(**fields)
    assert [m["role"] for m in messages] == ["system", "user"]
    user = messages[1]["content"]
    for value in fields.values():
        assert value in user
    assert "<<<RESPONSE\n<b>Hello</b>\nRESPONSE>>>" in user
