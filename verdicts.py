"""Judge prompts and verdict parsing (pure; used by ``evaluator``).

Parsing never invents a score: a reply without a readable boxed verdict gives
``None`` and the caller records the row as ``unscored`` with the raw text.

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
>>> parse_binary("Reasoning: dull. \\\\boxed{0}").score
0.0
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from string import Template

PROMPT_DIR = Path(__file__).resolve().parent / "prompts"
DIMENSIONS = ("style", "content", "naturalness", "personalization", "conversation")
_BOXED = re.compile(r"\\boxed\{\s*(-?\d+(?:\.\d+)?)\s*\}")
_DIMENSION = {
    name: re.compile(rf"^\W*{name}\W*:\s*(\d+(?:\.\d+)?)\s*(?:/\s*20)?", re.I | re.M)
    for name in DIMENSIONS
}
_REASONING = re.compile(
    r"reasoning\s*:\s*(.*?)(?=^\W*style\W*:|\\boxed|\Z)", re.I | re.S | re.M
)


@dataclass(frozen=True)
class Prompt:
    version: str  # file stem, e.g. "alignment_v1"; stored with every score
    system: Template
    user: Template

    def render(self, **fields: str) -> list[dict]:
        return [
            {"role": "system", "content": self.system.substitute(fields)},
            {"role": "user", "content": self.user.substitute(fields)},
        ]


@lru_cache
def load_prompt(version: str) -> Prompt:
    """Read ``prompts/<version>.txt``: a ``# system`` part, then a ``# user`` part."""
    text = (PROMPT_DIR / f"{version}.txt").read_text(encoding="utf-8")
    _, system, user = re.split(r"^# (?:system|user)\n", text, flags=re.M)
    return Prompt(version, Template(system.strip()), Template(user.strip()))


@dataclass(frozen=True)
class JudgeItem:
    """One request to the judge, built by metric code, executed by evaluator."""

    mode: str  # key of PARSERS
    prompt_version: str
    messages: tuple  # of role/content dicts, as rendered
    sample: int = 0


@dataclass
class Verdict:
    score: float
    parts: dict[str, float] = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)
    reasoning: str | None = None

    def to_dict(self) -> dict:
        return {
            "score": self.score,
            "parts": self.parts,
            "flags": self.flags,
            "reasoning": self.reasoning,
        }


def _last_boxed(text: str) -> float | None:
    found = _BOXED.findall(text)
    return float(found[-1]) if found else None


def _reasoning(text: str) -> str | None:
    match = _REASONING.search(text)
    return match.group(1).strip() if match else None


def parse_alignment(text: str) -> Verdict | None:
    """The boxed total is the score; five parsed dimensions that do not add up
    to it flag the row ``sum_mismatch``. Out-of-range values are unparseable."""
    total = _last_boxed(text)
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
    answer = _last_boxed(text)
    if answer not in (0.0, 1.0):
        return None
    return Verdict(
        answer, reasoning=_reasoning(text) or text.rsplit("\\boxed", 1)[0].strip()
    )


PARSERS = {"alignment": parse_alignment, "binary": parse_binary}
