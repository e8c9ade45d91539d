"""The verdict grammar (metrics/verdicts.py) on the replies real judges
write: a corpus written from public judge outputs (tests/data/
judge_replies.jsonl) and a property test rendering known verdicts in every
supported form with reasoning around them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics import protocols
from metrics.suites.alignment import parse_alignment, parse_binary
from metrics.suites.pairwise import parse_pairwise
from metrics.verdicts import BINARY, CHOICE, Kind, NoVerdict, read

CORPUS = Path(__file__).parents[1] / "data" / "judge_replies.jsonl"
PAIRWISE = {1.0: "A", 0.0: "B", 0.5: "tie"}
KINDS = {
    "mtbench_single": Kind.score(1, 10),
    "mtbench_pair": Kind.choice({"c": "tie"}),
    "aloe": Kind.score(1, 5, integer=True),
}


def corpus() -> list[dict]:
    return [
        json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()
    ]


def verdict_of(entry: dict):
    """(verdict or NoVerdict, dimensions) as the suite's parser reads it."""
    reply, kind = entry["reply"], entry["kind"]
    if kind in KINDS:
        return read(reply, KINDS[kind]), None
    parser = {"alignment": parse_alignment, "binary": parse_binary}.get(
        kind, parse_pairwise
    )
    found = parser(reply)
    if isinstance(found, NoVerdict):
        return found, None
    score = PAIRWISE[found.score] if kind == "pairwise" else found.score
    return score, found.parts


def test_the_corpus_is_read_with_no_misread_and_at_least_95_percent_scored():
    entries = corpus()
    meant = [e for e in entries if e["verdict"] is not None]
    scored, misread = [], []
    for entry in entries:
        found, _ = verdict_of(entry)
        if isinstance(found, NoVerdict):
            continue
        (scored if found == entry["verdict"] else misread).append(entry["id"])
    assert misread == []
    assert len(scored) >= 0.95 * len(meant), f"{len(scored)} of {len(meant)}"
    assert len(entries) >= 100 and {e["kind"] for e in entries} >= set(KINDS)


@pytest.mark.parametrize(
    "entry", [e for e in corpus() if e["verdict"] is None], ids=lambda e: e["id"]
)
def test_replies_cut_or_without_a_verdict_stay_unscored(entry):
    assert isinstance(verdict_of(entry)[0], NoVerdict)


@pytest.mark.parametrize(
    "entry", [e for e in corpus() if e["parts"]], ids=lambda e: e["id"]
)
def test_dimension_lines_are_read_in_every_form(entry):
    _, parts = verdict_of(entry)
    assert parts == {name: float(value) for name, value in entry["parts"].items()}


# -- property: known verdicts rendered in every form ---------------------------
REASONING = st.lists(
    st.sampled_from(
        [
            "The reply is warm and mentions the user's hobby.",
            "It ignores that the user is 22 years old and studies law.",
            "The tone is too formal for an introvert.",
            "It lists 3 restaurants near the station.",
            "回复很自然，也提到了用户的工作。",
            "답변이 자연스럽고 사용자의 취미를 언급합니다.",
            "Step 2 of the explanation could be shorter.",
            "Overall, the answer is relevant.",
            "The user asked about the weather (again).",
        ]
    ),
    max_size=5,
).map(" ".join)


def score_forms(value: str, high: str) -> list[str]:
    return [
        f"Total: \\boxed{{{value}}}",
        f"\\boxed{{{value}/{high}}}",
        f"Total: {value}/{high}",
        f"\\boxed{{**{value}**}}",
        f"\\boxed{{\\text{{{value}}}}}",
        f"Rating: [[{value}]]",
        f"Final answer: {value}",
        f"**Final score:** {value}",
        f'```json\n{{"reasoning": "ok", "score": {value}}}\n```',
        f"总分：{value}",
        f"최종 점수: {value}점",
        f"<think>maybe \\boxed{{{high}}}</think>\nTotal: {value}",
    ]


@settings(max_examples=300, deadline=None)
@given(
    before=REASONING,
    after=REASONING,
    scale=st.sampled_from([(0, 100), (1, 10), (1, 5)]),
    data=st.data(),
)
def test_every_score_form_reads_exactly_its_value(before, after, scale, data):
    low, high = scale
    value = data.draw(st.integers(low, high))
    form = data.draw(st.sampled_from(score_forms(str(value), str(high))))
    hypothetical = data.draw(
        st.sampled_from(["", f"Had it asked, \\boxed{{{low}}} would have been fair."])
    )
    reply = f"{before}\n{form}\n{after} {hypothetical}".strip()
    assert read(reply, Kind.score(low, high)) == float(value)


@settings(max_examples=200, deadline=None)
@given(before=REASONING, value=st.sampled_from([0, 1]), data=st.data())
def test_every_binary_form_reads_exactly_its_value(before, value, data):
    word = {1: ("Yes", "true", "是", "예"), 0: ("No", "false", "否", "아니오")}[value]
    form = data.draw(
        st.sampled_from(
            [
                f"\\boxed{{{value}}}",
                f"\\boxed{{{word[0]}}}",
                f"Final answer: {word[0]}",
                f"Final answer: {value}",
                f'{{"continue": {word[1]}}}',
                f"最终答案：{word[2]}",
                f"최종 답변: {word[3]}",
                f"I must answer \\boxed{{1}} or \\boxed{{0}}.\nFinal answer: \\boxed{{{value}}}",
            ]
        )
    )
    assert read(f"{before}\n{form}", BINARY) == float(value)


@settings(max_examples=200, deadline=None)
@given(before=REASONING, winner=st.sampled_from(["A", "B", "tie"]), data=st.data())
def test_every_choice_form_reads_exactly_its_value(before, winner, data):
    arena = {"A": "A>B", "B": "B>A", "tie": "A=B"}[winner]
    form = data.draw(
        st.sampled_from(
            [
                f"\\boxed{{{winner}}}",
                f"[[{winner}]]",
                f"[[{arena}]]",
                f"Final verdict: {'Assistant ' + winner if winner != 'tie' else 'tie'}",
                f'{{"winner": "{winner}"}}',
                f"最终判断：{winner}",
                f"최종 판단: {winner}",
                f"My final verdict is [[{winner}]].",
            ]
        )
    )
    assert read(f"{before}\n{form}", CHOICE) == winner


@pytest.mark.parametrize(
    ("parse", "reply", "code"),
    [
        # MT-Bench's 1-10 form to the 0-100 question: 9 of what?
        (
            parse_alignment,
            "Reasoning: generic.\nRating: [[9]]",
            "verdict_scale_unclear",
        ),
        # a rating of 1 to the yes/no question, which asks \boxed{1} or \boxed{0}
        (
            parse_binary,
            "Too generic for this user.\nRating: [[1]]",
            "verdict_scale_unclear",
        ),
        # a bare number to the 0-100 question, which asks \boxed{}: 9 of what?
        (parse_alignment, "9", "verdict_scale_unclear"),
        # someone else's rating, reported, is no verdict of the judge's
        (
            parse_alignment,
            "The user's rating of 5 shows they were bored.",
            "no_verdict",
        ),
    ],
)
def test_a_number_without_its_scale_in_an_unasked_form_is_no_verdict(
    parse, reply, code
):
    assert parse(reply).note.code == code


def test_a_written_scale_or_the_asked_form_is_read():
    assert parse_alignment("Rating: [[90/100]]").score == 90.0
    assert parse_alignment("Total: \\boxed{9}").score == 9.0  # the asked form
    mt_bench = Kind.score(1, 10).asking('strictly this format: "Rating: [[5]]"')
    assert read("Rating: [[9]]", mt_bench) == 9.0
    aloe = Kind.score(1, 5, integer=True).asking("a single number from 1 to 5")
    assert read("4", aloe) == 4.0 and read("[[4]]", aloe).note.code == (
        "verdict_scale_unclear"
    )


# -- issue 56: a JSON verdict is read only from the fields its mode declares --
# WildBench's judge answers {"strengths", "weaknesses", "score": "1~10"}: a
# 1-10 rating, which the 0-100 question must not store as 6 of 100.
WILDBENCH = [
    {
        "strengths": "The response acknowledges the user's love of hiking and suggests a trail.",
        "weaknesses": "It ignores that the user is an introvert and the tone is too chatty.",
        "score": "6",
    },
    {
        "strengths": "Relevant and accurate; it recalls the user's job as a nurse.",
        "weaknesses": "The closing question is generic and the reply is a bit long.",
        "score": "7",
    },
    {
        "strengths": "Polite.",
        "weaknesses": "It does not address the user's question at all and repeats the previous turn.",
        "score": "3",
    },
    {
        "strengths": "Warm, concise and personalized; it picks up the marathon training.",
        "weaknesses": "It could have asked a follow-up question.",
        "score": "8",
    },
    {
        "strengths": "The information about the museum is correct.",
        "weaknesses": "Formal and impersonal for an extroverted teenager; no follow-up.",
        "score": "5",
    },
]


@pytest.mark.parametrize("reply", WILDBENCH, ids=lambda r: r["score"])
def test_a_json_verdict_in_a_field_the_mode_does_not_declare_is_no_number(reply):
    """Issue 56: WildBench's {"score": "6"} (1-10) to the 0-100 question was
    stored as 6 of 100."""
    for text in (
        json.dumps(reply),
        "```json\n" + json.dumps(reply, indent=4) + "\n```",
    ):
        assert parse_alignment(text).note.code == "verdict_scale_unclear"


def test_a_score_of_1_to_the_yes_no_question_is_not_continue():
    """Issue 56: {"score": "1"} (the worst rating) was read as 'continue'."""
    for text in ('{"score": "1"}', '{"score": 1}', '{"rating": 0}'):
        assert parse_binary(text).note.code == "verdict_scale_unclear"
    assert parse_pairwise('{"better": "A"}').note.code == "no_verdict"


def test_the_fields_a_mode_declares_are_read():
    assert parse_alignment('{"reasoning": "ok", "total": 85}').score == 85.0
    assert parse_binary('{"reasoning": "no", "answer": 0}').score == 0.0
    assert parse_binary('```json\n{"continue": true}\n```').score == 1.0
    assert parse_pairwise('{"reasoning": "r", "winner": "B"}').score == 0.0
    # a declared field wins over an undeclared one in the same object
    assert parse_alignment('{"score": 6, "total": 60}').score == 60.0


# -- issue 56: a reply that only repeats the prompt's format example ----------
MT_BENCH = protocols.builtin("mt-bench").modes


@pytest.mark.parametrize(
    ("parse", "reply"),
    [
        (
            MT_BENCH["alignment"].parse,
            "I need to rate the response on a scale of 1 to 10 in the format "
            '"Rating: [[5]]", for example.',
        ),
        (parse_binary, "The format is \\boxed{1} (continue). Let me think…"),
        (parse_pairwise, 'For example, "\\boxed{A}" if A is better…'),
        (MT_BENCH["pairwise"].parse, "e.g. [[A]] if assistant A is better."),
        (parse_alignment, "Output such as Total: \\boxed{85} is expected."),
        (parse_pairwise, "例如，\\boxed{A} 表示 A 更好。"),
        (parse_binary, "格式是 \\boxed{1}（继续）。我先想一想。"),
        (parse_pairwise, "예를 들어 \\boxed{A}는 A가 더 낫다는 뜻입니다."),
        (parse_binary, "답변 형식은 \\boxed{1}입니다. 생각해 보겠습니다."),
    ],
)
def test_a_reply_that_only_repeats_the_format_example_has_no_verdict(parse, reply):
    """Issue 56: these were read as 5, 1 and A."""
    assert parse(reply).note.code == "no_verdict"


def test_a_real_verdict_after_a_format_example_wins():
    example = 'The format is "Rating: [[5]]", for example. The reply is fine.\n'
    assert MT_BENCH["alignment"].parse(example + "Rating: [[7]]").score == 7.0
    thought = "The format is \\boxed{1} (continue). The reply ignores my job.\n"
    assert parse_binary(thought + "Final answer: \\boxed{0}").score == 0.0
    assert parse_binary('Final answer: "Yes"').score == 1.0  # a quoted value only
    assert parse_pairwise('My final verdict: "[[B]]"').score == 0.0
