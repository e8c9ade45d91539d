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

import json
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
    items: list[str] = field(default_factory=list)  # e.g. ALMP's attribute list

    def to_dict(self) -> dict:
        return {
            "score": self.score,
            "parts": self.parts,
            "flags": self.flags,
            "reasoning": self.reasoning,
            "items": self.items,
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


# -- roleplay (JERA, ALMP): strict JSON replies ------------------------------
JERA_SCALES = ("immersivity", "consistency", "creativity")
JERA_ITEMS_PER_SCALE = 10
ALMP_MAX_ATTRIBUTE_CHARS = 80
# The whole reply may be one ```json fenced block; nothing may precede or follow.
_FENCE = re.compile(r"\A```(?:json)?[ \t]*\n(.*?)\n?[ \t]*```\Z", re.S | re.I)


def _strict_json(text: str):
    """The reply as JSON, or None: the reply must be the JSON value alone."""
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1)
    try:
        return json.loads(body)
    except ValueError:
        return None


def _likert(answer) -> bool:
    # type() rather than isinstance(): JSON true/false must not count as 1/0.
    return type(answer) is int and 1 <= answer <= 10


def parse_jera(text: str) -> Verdict | None:
    """``{"reasoning"?: str, "immersivity": [10 ints], "consistency": [...],
    "creativity": [...]}`` with every answer an integer 1..10; the score is
    the total (30..300), parts the three sub-scale sums (10..100). Anything
    else (29 answers, an 11, words, extra keys or prose) is unparseable."""
    data = _strict_json(text)
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
    data = _strict_json(text)
    if not isinstance(data, list) or not all(isinstance(x, str) for x in data):
        return None
    attributes = [" ".join(x.split()) for x in data]
    if any(not a or len(a) > ALMP_MAX_ATTRIBUTE_CHARS for a in attributes):
        return None
    unique: dict[str, str] = {}
    for attribute in attributes:
        unique.setdefault(attribute.casefold(), attribute)  # first spelling wins
    return Verdict(float(len(unique)), items=list(unique.values()))


PARSERS.update(
    {"jera": parse_jera, "almp_extract": parse_almp, "almp_infer": parse_almp}
)


# -- slots (optional judge): per-slot semantic accuracy, strict JSON ----------
def slot_part(topic: str, name: str) -> str:
    """The ``parts`` key of one slot: ``"topic/field"``."""
    return f"{topic}/{name}"


def _unit_score(score) -> bool:
    # type() rather than isinstance(): JSON true/false must not count as 1/0;
    # NaN fails the range test.
    return type(score) in (int, float) and 0 <= score <= 1


def parse_slot_judge(text: str, expected=None) -> Verdict | None:
    """``{"reasoning"?: str, "scores": [{"topic": str, "field": str, "score":
    0..1}, ...]}``, each slot once; the score is the mean, ``parts`` the slot
    scores keyed ``"topic/field"``. With ``expected`` ((topic, field) pairs)
    the scored slots must be exactly those. Anything else is unparseable.

    >>> reply = '{"scores": [{"topic": "b", "field": "city", "score": 0.5}]}'
    >>> parse_slot_judge(reply).parts, parse_slot_judge(reply, [("b", "job")])
    ({'b/city': 0.5}, None)
    """
    data = _strict_json(text)
    if not isinstance(data, dict) or set(data) - {"reasoning"} != {"scores"}:
        return None
    reasoning, entries = data.get("reasoning"), data["scores"]
    if reasoning is not None and not isinstance(reasoning, str):
        return None
    if not isinstance(entries, list) or not entries:
        return None
    slots: dict[tuple[str, str], float] = {}
    for entry in entries:
        if not isinstance(entry, dict) or set(entry) != {"topic", "field", "score"}:
            return None
        key = (entry["topic"], entry["field"])
        if not all(isinstance(part, str) for part in key) or key in slots:
            return None
        if not _unit_score(entry["score"]):
            return None
        slots[key] = float(entry["score"])
    if expected is not None and set(slots) != {tuple(key) for key in expected}:
        return None
    parts = {slot_part(*key): score for key, score in slots.items()}
    if len(parts) != len(slots):  # "a/b"+"c" and "a"+"b/c" would share a key
        return None
    return Verdict(sum(slots.values()) / len(slots), parts, reasoning=reasoning)


PARSERS["slot_judge"] = parse_slot_judge
