"""How the alignment suite reads a judge's reply: the boxed total, the five
dimensions (0-20 each) and the reasoning; the binary verdict."""

from __future__ import annotations

import re

from metrics.judging import Verdict, last_boxed
from metrics.suites.alignment_summary import DIMENSIONS

_DIMENSION = {
    name: re.compile(rf"^\W*{name}\W*:\s*(\d+(?:\.\d+)?)\s*(?:/\s*20)?", re.I | re.M)
    for name in DIMENSIONS
}
_REASONING = re.compile(
    r"reasoning\s*:\s*(.*?)(?=^\W*style\W*:|\\boxed|\Z)", re.I | re.S | re.M
)


def _reasoning(text: str) -> str | None:
    match = _REASONING.search(text)
    return match.group(1).strip() if match else None


def parse_alignment(text: str) -> Verdict | None:
    """The boxed total is the score; five parsed dimensions that do not add up
    to it flag the row ``sum_mismatch``. Out-of-range values are unparseable.

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
    >>> parse_alignment("I would rate this highly.") is None
    True
    """
    total = last_boxed(text)
    if total is None or not 0 <= total <= 100:
        return None
    parts = {}
    for name, pattern in _DIMENSION.items():
        match = pattern.search(text)
        if match and 0 <= float(match.group(1)) <= 20:
            parts[name] = float(match.group(1))
    flags = []
    if len(parts) == len(DIMENSIONS) and abs(sum(parts.values()) - total) > 1e-9:
        flags.append("sum_mismatch")
    return Verdict(total, parts, flags, _reasoning(text))


def parse_binary(text: str) -> Verdict | None:
    """``\\boxed{1}`` (would keep chatting) or ``\\boxed{0}``.

    >>> parse_binary("Reasoning: dull. \\\\boxed{0}").score
    0.0
    """
    answer = last_boxed(text)
    if answer not in (0.0, 1.0):
        return None
    return Verdict(
        answer, reasoning=_reasoning(text) or text.rsplit("\\boxed", 1)[0].strip()
    )
