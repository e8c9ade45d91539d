"""The roleplay suite's judge modes and the parsers of their replies: JERA's
30 Likert items and ALMP's attribute lists."""

from __future__ import annotations

from metrics.judging import Verdict, strict_json
from metrics.suite import (
    JudgeMode,
)

JERA_SCALES = ("immersivity", "consistency", "creativity")
JERA_ITEMS_PER_SCALE = 10
JERA_ROWS = ("jera", *(f"jera_{scale}" for scale in JERA_SCALES))
ALMP_MAX_ATTRIBUTE_CHARS = 80


# -- verdicts -----------------------------------------------------------------
def _likert(answer: object) -> bool:
    # type() rather than isinstance(): JSON true/false must not count as 1/0.
    return type(answer) is int and 1 <= answer <= 10


def parse_jera(text: str) -> Verdict | None:
    """``{"reasoning"?: str, "immersivity": [10 ints], "consistency": [...],
    "creativity": [...]}`` with every answer an integer 1..10; the score is
    the total (30..300), parts the three sub-scale sums (10..100). Anything
    else (29 answers, an 11, words, extra keys or prose) is unparseable."""
    data = strict_json(text)
    if not isinstance(data, dict) or set(data) - {"reasoning"} != set(JERA_SCALES):
        return None
    reasoning = data.get("reasoning")
    if reasoning is not None and not isinstance(reasoning, str):
        return None
    parts = {}
    for scale in JERA_SCALES:
        answers = data[scale]
        if not isinstance(answers, list) or len(answers) != JERA_ITEMS_PER_SCALE:
            return None
        if not all(_likert(answer) for answer in answers):
            return None
        parts[scale] = float(sum(answers))
    return Verdict(sum(parts.values()), parts, reasoning=reasoning)


def parse_almp(text: str) -> Verdict | None:
    """A JSON list of short attribute strings (``[]`` allowed); the score is
    how many distinct (case-insensitive) attributes it holds."""
    data = strict_json(text)
    if not isinstance(data, list) or not all(isinstance(x, str) for x in data):
        return None
    attributes = [" ".join(x.split()) for x in data]
    if any(not a or len(a) > ALMP_MAX_ATTRIBUTE_CHARS for a in attributes):
        return None
    unique: dict[str, str] = {}
    for attribute in attributes:
        unique.setdefault(attribute.casefold(), attribute)  # first spelling wins
    return Verdict(float(len(unique)), items=list(unique.values()))


JERA = JudgeMode("jera", "jera_v2", parse_jera)
ALMP_EXTRACT = JudgeMode("almp_extract", "almp_extract_v2", parse_almp)
ALMP_INFER = JudgeMode("almp_infer", "almp_infer_v2", parse_almp)
MODES = (JERA, ALMP_EXTRACT, ALMP_INFER)
