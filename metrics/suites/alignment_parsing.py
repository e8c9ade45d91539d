"""How the alignment suite reads a judge's reply: the total (0-100), the
five dimensions (0-20 each) and the reasoning; the binary verdict. The
verdict grammar is the one every protocol shares (:mod:`metrics.verdicts`,
``docs/judge-replies.md``)."""

from __future__ import annotations

import re

from metrics.judging import Verdict
from metrics.suites.alignment_summary import DIMENSIONS
from metrics.verdicts import BINARY, Kind, NoVerdict, read, read_parts

TOTAL = Kind.score(0, 100)
# The words a dimension is written with, in the languages of our prompts.
DIMENSION_WORDS = {
    "style": ("style", "风格", "語氣", "스타일"),
    "content": ("content", "内容", "내용"),
    "naturalness": ("naturalness", "自然度", "自然性", "자연스러움", "자연성"),
    "personalization": ("personalization", "personalisation", "个性化", "개인화"),
    "conversation": (
        "conversation",
        "conversational",
        "对话",
        "对话性",
        "대화",
        "대화성",
    ),
}
# What the prompts ask for: quoted in a re-ask, and as structured output.
ALIGNMENT_FORMAT = "\n".join(
    [*(f"{name.capitalize()}: <score>/20" for name in DIMENSIONS),
     "Total: \\boxed{<sum of the five scores>}"]
)  # fmt: skip
BINARY_FORMAT = "\\boxed{1} (continue) or \\boxed{0} (stop), on the last line"


def _object(fields: dict) -> dict:
    return {
        "type": "object",
        "properties": fields,
        "required": list(fields),
        "additionalProperties": False,
    }


ALIGNMENT_SCHEMA = _object(
    {"reasoning": {"type": "string"}}
    | {name: {"type": "integer"} for name in DIMENSIONS}
    | {"total": {"type": "integer"}}
)
BINARY_SCHEMA = _object(
    {"reasoning": {"type": "string"}, "answer": {"type": "integer", "enum": [0, 1]}}
)
_REASONING = re.compile(
    r"(?:reasoning|理由|分析|이유|근거)\s*[:：]\s*(.*?)(?=^\W*style\W*:|\\boxed|\Z)",
    re.I | re.S | re.M,
)


def _reasoning(text: str) -> str | None:
    match = _REASONING.search(text)
    return match.group(1).strip() if match else None


def parse_alignment(text: str) -> Verdict | NoVerdict:
    """The total is the score; five parsed dimensions that do not add up
    to it flag the row ``sum_mismatch``. Out-of-range values are refused.

    >>> reply = '''Reasoning: warm and specific.
    ... Style: 18/20
    ... Content: 17/20
    ... Naturalness: 16/20
    ... Personalization: 15/20
    ... Conversation: 14/20
    ... Total: \\\\boxed{80}'''
    >>> verdict = parse_alignment(reply)
    >>> verdict.score, verdict.parts["style"], verdict.flags
    (80.0, 18.0, [])
    >>> parse_alignment("I would rate this highly.").note.code
    'no_verdict'
    """
    total = read(text, TOTAL)
    if isinstance(total, NoVerdict):
        return total
    parts = read_parts(text, {d: DIMENSION_WORDS[d] for d in DIMENSIONS}, 20)
    flags = []
    if len(parts) == len(DIMENSIONS) and abs(sum(parts.values()) - total) > 1e-9:
        flags.append("sum_mismatch")
    return Verdict(total, parts, flags, _reasoning(text))


def parse_binary(text: str) -> Verdict | NoVerdict:
    """Would keep chatting (1) or not (0): ``\\boxed{1}``, "Final answer:
    Yes", ``{"continue": false}``, ...

    >>> parse_binary("Reasoning: dull. \\\\boxed{0}").score
    0.0
    """
    answer = read(text, BINARY)
    if isinstance(answer, NoVerdict):
        return answer
    return Verdict(answer, reasoning=_reasoning(text) or _before_verdict(text))


def _before_verdict(text: str) -> str | None:
    return text.rsplit("\\boxed", 1)[0].strip() or None
