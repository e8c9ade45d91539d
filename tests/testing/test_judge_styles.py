"""The scripted judge writes verdicts the way real judges do
(testing/judge_styles.py, testing/judge_natives.py); every style must read back
as exactly the verdict it wrote, or the suite tests that use the scripted
judge would prove nothing."""

from __future__ import annotations

import pytest

from metrics import protocols
from metrics.suites.alignment import parse_alignment, parse_binary
from metrics.suites.pairwise import parse_pairwise
from testing import judge_natives, judge_styles
from testing.judge_decisions import split_total

NAMES = ("style", "content", "naturalness", "personalization", "conversation")
STRUCTURED = (*judge_styles.ALIGNMENT_STYLES, "structured")


@pytest.mark.parametrize("style", STRUCTURED)
@pytest.mark.parametrize("total", [0, 7, 40, 55, 83, 99, 100])
def test_every_alignment_style_reads_back_its_total_and_dimensions(style, total):
    parts = split_total(total)
    verdict = parse_alignment(judge_styles.alignment_text(total, parts, style))
    assert verdict.score == float(total)
    assert verdict.parts == {n: float(v) for n, v in zip(NAMES, parts, strict=True)}
    assert verdict.flags == []


@pytest.mark.parametrize("style", STRUCTURED)
def test_a_mismatch_is_flagged_in_every_alignment_style(style):
    parts = split_total(60)
    parts[0] -= 3
    verdict = parse_alignment(judge_styles.alignment_text(60, parts, style))
    assert (verdict.score, verdict.flags) == (60.0, ["sum_mismatch"])


@pytest.mark.parametrize("style", (*judge_styles.BINARY_STYLES, "structured"))
@pytest.mark.parametrize("answer", [0, 1])
def test_every_binary_style_reads_back_its_answer(style, answer):
    assert parse_binary(judge_styles.binary_text(answer, style)).score == float(answer)


@pytest.mark.parametrize("style", (*judge_styles.PAIRWISE_STYLES, "structured"))
@pytest.mark.parametrize(("verdict", "score"), [("A", 1.0), ("B", 0.0), ("tie", 0.5)])
def test_every_pairwise_style_reads_back_its_verdict(style, verdict, score):
    assert parse_pairwise(judge_styles.pairwise_text(verdict, style)).score == score


@pytest.mark.parametrize("structured", ["", "style-structured"])
@pytest.mark.parametrize("total", [5, 40, 73, 100])
def test_native_mt_bench_and_aloe_replies_read_back(structured, total):
    mt = protocols.builtin("mt-bench").modes
    aloe = protocols.builtin("aloe").modes["alignment"]
    assert mt["alignment"].parse(judge_natives.mt_single(total, structured)).score == (
        judge_natives.scaled(total, 10)
    )
    assert aloe.parse(judge_natives.aloe(total, structured)).score == (
        judge_natives.scaled(total, 5)
    )
    for verdict, score in (("A", 1.0), ("B", 0.0), ("tie", 0.5)):
        reply = judge_natives.mt_pair(verdict, structured)
        assert mt["pairwise"].parse(reply).score == score
