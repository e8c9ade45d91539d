"""One verdict grammar for every protocol (``docs/judge-replies.md``).

A reply's candidates (:mod:`metrics.verdict_forms`) are read as values of
the protocol's kind of verdict: a score on a scale, a binary answer, or a
choice between replies. Then:

1. values in a counterfactual sentence, values offered together as a
   choice ("\\boxed{1} or \\boxed{0}") and values quoting or illustrating
   the format ("in the format "Rating: [[5]]", for example") are set aside;
2. the **last labelled** value wins ("Total:", "Rating: [[7]]", "Final
   answer:", JSON keys, a reply that is only the value): judges correct
   themselves, and a label is what makes a number a verdict;
3. without a label, unlabelled values (boxes, ``[[...]]``) must all agree;
4. anything else is refused: ``no_verdict``, ``ambiguous_verdict`` (with the
   values), or ``verdict_out_of_scale``. Never a guess.

>>> SCORE_0_100 = Kind.score(0, 100)
>>> read("Total: 85/100", SCORE_0_100)
85.0
>>> read("Total: \\\\boxed{70}. Had it used her name, \\\\boxed{35} would be fair.", SCORE_0_100)
70.0
>>> read("\\\\boxed{70} ... \\\\boxed{35}", SCORE_0_100).note.code
'ambiguous_verdict'
>>> read("Final answer: Yes", BINARY), read("My final verdict is [[B]]", CHOICE)
(1.0, 'B')
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any, Final

from metrics.notes import Note, note
from metrics.verdict_forms import (
    Candidate,
    answer_text,
    candidates,
    json_key,
    json_objects,
    offered_together,
)

_NUMBER = re.compile(
    r"(-?\d+(?:\.\d+)?)\s*(?:(?:/|out\s+of|of)\s*(\d+(?:\.\d+)?)|(%))?"
    r"\s*(?:points?|pts|分|점)?\.?",
    re.I,
)
_PREFIX = re.compile(
    r"^(?:assistant|response|reply|model|option|answer|助手|回答|응답)\s*", re.I
)

BINARY_WORDS = {
    "1": 1.0,
    "0": 0.0,
    "yes": 1.0,
    "no": 0.0,
    "y": 1.0,
    "n": 0.0,
    "true": 1.0,
    "false": 0.0,
    "continue": 1.0,
    "stop": 0.0,
    "是": 1.0,
    "否": 0.0,
    "会": 1.0,
    "不会": 0.0,
    "继续": 1.0,
    "不继续": 0.0,
    "예": 1.0,
    "네": 1.0,
    "아니오": 0.0,
    "아니요": 0.0,
    "계속": 1.0,
    "중단": 0.0,
}
CHOICE_WORDS = {
    "a": "A",
    "b": "B",
    "tie": "tie",
    "draw": "tie",
    "equal": "tie",
    "平局": "tie",
    "平手": "tie",
    "相当": "tie",
    "무승부": "tie",
    "동점": "tie",
    "a>b": "A",
    "a>>b": "A",
    "b<a": "A",
    "b>a": "B",
    "b>>a": "B",
    "a<b": "B",
    "a=b": "tie",
    "b=a": "tie",
}


@dataclass(frozen=True)
class Kind:
    """What a verdict is: ``score`` on [low, high], ``binary`` or ``choice``
    (``words`` maps the written word, lower-cased, to the verdict)."""

    kind: str
    low: float = 0.0
    high: float = 0.0
    integer: bool = False
    words: dict[str, Any] = field(default_factory=dict)
    # the forms the protocol's prompt asks for ("box", "brackets", "bare")
    # and the labels it writes ("total", "rating"); None: every form
    forms: frozenset[str] | None = None
    labels: frozenset[str] = frozenset()
    # the JSON fields the mode declares its verdict in ("total", "answer");
    # a verdict under any other key is on no known scale. None: every key
    fields: frozenset[str] | None = None

    def asking(self, prompt: str, fields: Iterable[str] = ()) -> Kind:
        """This kind, told which forms and labels ``prompt`` asks for and
        which JSON ``fields`` hold the verdict: a number without its scale
        then counts only in those (``read``)."""
        forms = {"box"} if "\\boxed" in prompt else set()
        forms |= {"brackets"} if "[[" in prompt else set()
        labels = {_words(found) for found in _ASKED_LABEL.findall(prompt)}
        return replace(
            self,
            forms=frozenset(forms or {"bare"}),
            labels=frozenset(labels),
            fields=frozenset(json_key(name) for name in fields),
        )

    @classmethod
    def score(cls, low: float, high: float, integer: bool = False) -> Kind:
        return cls("score", float(low), float(high), integer)

    @classmethod
    def choice(cls, extra: dict[str, Any] | None = None) -> Kind:
        return cls("choice", words={**CHOICE_WORDS, **(extra or {})})


BINARY = Kind("binary", 0.0, 1.0, True, BINARY_WORDS)
CHOICE = Kind.choice()


@dataclass(frozen=True)
class NoVerdict:
    """Why a reply has no verdict (the row is ``unscored`` with this note)."""

    note: Note


class _Mark(Enum):
    """What a written value is when it is no verdict on the scale."""

    OUT_OF_SCALE = 1  # a value of the right form that the scale excludes
    SCALE_UNCLEAR = 2  # a number, in a form the prompt did not ask, no scale


OUT_OF_SCALE: Final = _Mark.OUT_OF_SCALE
SCALE_UNCLEAR: Final = _Mark.SCALE_UNCLEAR
# a written value: a number or a choice's word, or a mark saying why it is no
# verdict on the scale
Value = float | str | _Mark
_ASKED_LABEL = re.compile(r"([^\W\d_][^\W\d_ ]*(?: [^\W\d_]+){0,2})\s*[:：]")


def _words(label: str) -> str:
    return " ".join(re.findall(r"[^\W\d_]+", label.lower()))


def _written_scale(raw: str) -> bool:
    """ "85/100", "8 out of 10", "85%": the value says its scale."""
    number = _NUMBER.fullmatch(raw.strip().strip("*_`'\".。").strip())
    return number is not None and bool(number.group(2) or number.group(3))


def asked(candidate: Candidate, kind: Kind) -> bool:
    """Whether a number without its scale counts. A box, double brackets or
    a bare reply ("9") count where the prompt asks for that form: "Rating:
    [[9]]" (MT-Bench's 1-10 form) to a question asking \\boxed{0-100} may
    be 9 of 10, and "[[1]]" to a yes/no question asking \\boxed{1} may be
    a rating of 1. A number after a verdict label ("Final score: 72")
    counts: that is how judges write verdicts they do not wrap. JSON
    verdicts count where their field is declared (``declared``).

    >>> kind = Kind.score(0, 100).asking("Total: \\\\boxed{<sum>}")
    >>> asked(Candidate("9", 0, True, form="brackets", label="rating"), kind)
    False
    >>> asked(Candidate("85", 0, True, form="bare", label="final score"), kind)
    True
    """
    if kind.forms is None or candidate.form == "json":
        return True
    if candidate.form == "bare" and candidate.label:
        return True
    return candidate.form in kind.forms


def declared(candidate: Candidate, kind: Kind) -> bool:
    """Whether a JSON verdict is in a field the mode declares (every other
    candidate is). A verdict under another key is on no known scale:
    WildBench's ``{"score": "6"}`` is 6 of 10, and ``{"score": "1"}`` to the
    yes/no question is the worst rating, not "continue".

    >>> kind = BINARY.asking("Final answer: 1 or 0", fields=["answer"])
    >>> declared(Candidate("1", 0, True, form="json", label="score"), kind)
    False
    >>> declared(Candidate("1", 0, True, form="json", label="answer"), kind)
    True
    """
    if candidate.form != "json" or kind.fields is None:
        return True
    return candidate.label in kind.fields


def value_of(raw: str, kind: Kind) -> Value | None:
    """The verdict a written value means; ``OUT_OF_SCALE``; or None when it
    is not a value of this kind at all (a sub-score "18/20" on a 0-100
    scale, a word that is no verdict).

    >>> value_of("85/100", Kind.score(0, 100)), value_of("18/20", Kind.score(0, 100))
    (85.0, None)
    >>> value_of("Assistant A", CHOICE), value_of("120", Kind.score(0, 100)) is OUT_OF_SCALE
    ('A', True)
    """
    text = raw.strip().strip("*_`'\".。").strip()
    if kind.kind == "choice":
        word = _PREFIX.sub("", text).strip().lower().replace(" ", "")
        return kind.words.get(word)
    number = _NUMBER.fullmatch(text)
    if number is None:
        return kind.words.get(text.lower()) if kind.kind == "binary" else None
    value = float(number.group(1))
    denominator = 100.0 if number.group(3) else number.group(2)
    if denominator is not None and float(denominator) != kind.high:
        return None  # a value on another scale: a part, not the verdict
    if kind.kind == "binary":
        return value if value in (0.0, 1.0) else OUT_OF_SCALE
    if not kind.low <= value <= kind.high or (kind.integer and value != int(value)):
        return OUT_OF_SCALE
    return value


def read(reply: str, kind: Kind) -> float | str | NoVerdict:
    """The verdict of a reply (a float, or a choice's word), or a
    :class:`NoVerdict` saying why there is none."""
    text = answer_text(reply)
    valued: list[tuple[Candidate, Value]] = []
    for candidate in candidates(text, kind.fields or frozenset()):
        value = value_of(candidate.raw, kind)
        numeric = _NUMBER.fullmatch(candidate.raw.strip()) is not None
        if value is not None and numeric and not _written_scale(candidate.raw):
            value = value if asked(candidate, kind) else SCALE_UNCLEAR
        if value is not None and not declared(candidate, kind):
            # {"score": "6"} (WildBench, 1-10) to a 0-100 question: 6 of what?
            value = SCALE_UNCLEAR if numeric else None
        if value is not None:
            valued.append((candidate, value))
    offered = _offered_together(text, valued)
    kept = [
        (candidate, value)
        for index, (candidate, value) in enumerate(valued)
        if index not in offered
        and not candidate.counterfactual
        and not candidate.example  # "the format is \\boxed{1}": not given
    ]
    labelled = [pair for pair in kept if pair[0].labelled]
    if labelled:
        chosen = labelled[-1][1]
    elif len({_key(value) for _, value in kept}) == 1:
        chosen = kept[-1][1]
    elif kept:
        shown = ", ".join(dict.fromkeys(_shown(value) for _, value in kept))
        return NoVerdict(note("ambiguous_verdict", values=shown))
    else:
        return NoVerdict(note("no_verdict"))
    if chosen is OUT_OF_SCALE:
        return NoVerdict(note("verdict_out_of_scale", low=kind.low, high=kind.high))
    if chosen is SCALE_UNCLEAR:  # "Rating: [[9]]" to a 0-100 question: 9 of what?
        return NoVerdict(note("verdict_scale_unclear", low=kind.low, high=kind.high))
    return chosen


def _offered_together(
    text: str, valued: Sequence[tuple[Candidate, object]]
) -> set[int]:
    offered: set[int] = set()
    for index in range(len(valued) - 1):
        (left, a), (right, b) = valued[index], valued[index + 1]
        if _key(a) != _key(b) and offered_together(text, left, right):
            offered |= {index, index + 1}
    return offered


def _key(value: object) -> str:
    if value is SCALE_UNCLEAR:
        return "unclear"
    return "out" if value is OUT_OF_SCALE else str(value)


def _shown(value: Value) -> str:
    if value is OUT_OF_SCALE or value is SCALE_UNCLEAR:
        return "?"
    return f"{value:g}" if isinstance(value, float) else str(value)


def read_parts(
    reply: str, parts: dict[str, tuple[str, ...]], high: float
) -> dict[str, Any]:
    """Sub-scores on [0, high] by name, from lines such as "Style: 15/20",
    "2. **Content** (0-20): 16", "Style 15, Content 16", "风格：15分" or
    JSON keys; ``parts`` maps each name to the words that may label it. The
    last well-formed value of a part counts; a part without one is absent.

    >>> read_parts("- Style - 15 out of 20\\n2. Content (0-20): 16", {"style": ("style",),
    ...     "content": ("content",)}, 20)
    {'style': 15.0, 'content': 16.0}
    """
    text = answer_text(reply)
    found: dict[str, float] = {}
    objects = [obj for _, obj in json_objects(text)]  # read once for every part
    for name, words in parts.items():
        for match in _part_pattern(words).finditer(text):
            value = value_of(match.group(1), Kind.score(0, high))
            if isinstance(value, float):
                found[name] = value
        for obj in objects:
            keyed = {str(k).lower(): v for k, v in obj.items()}
            for word in words:
                got = keyed.get(word.lower())
                if isinstance(got, bool) or not isinstance(got, (int, float)):
                    continue
                if 0 <= got <= high:
                    found[name] = float(got)
    return found


@functools.cache  # a suite has a handful of parts; each reply reads all
def _part_pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    names = "|".join(re.escape(word) for word in words)
    return re.compile(
        rf"(?:(?:^|\n)[ \t>#*\-•+]*(?:\d{{1,2}}[.)]\s*)?|[,;:|(，；、（]\s*)(?:{names})"
        r"(?![a-z])\s*(?:score|得分|评分|점수)?\s*(?:\(\s*[^()\n]{0,12}\)|\[[^\[\]\n]{0,12}\])?"
        r"\s*(?:[:=\-–—]|is)?\s*"
        r"(\d+(?:\.\d+)?(?:\s*(?:/|out\s+of)\s*\d+(?:\.\d+)?)?(?:\s*(?:points?|分|점))?)",
        re.I,
    )
