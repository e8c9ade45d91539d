"""The forms a judge writes a verdict in, as data (``docs/judge-replies.md``).

Real judges do not answer in one format: GPT-4-class models box or bracket
their verdict, local models write "Total: 85/100", reasoning models draft in
``<think>`` blocks and correct themselves, some answer in JSON or in
Chinese or Korean. This module turns a reply into its *answer text* (drafts
removed, wrappers such as ``**85**`` and ``\\text{85}`` unwrapped) and lists
the *candidates* in it: every place a verdict could be read from, with the
raw value, whether a verdict label names it, and whether the sentence around
it is counterfactual ("had it used the name, \\boxed{35} would ...") or an
example of the format ("the format is \\boxed{1}"). Which candidate wins is
:mod:`metrics.verdicts`' decision.

>>> answer_text("<think>maybe 60</think>**Total:** \\\\boxed{\\\\text{85}}")
'Total: \\\\boxed{85}'
>>> [(c.raw, c.labelled) for c in candidates("Rating: [[7]]. Also \\\\boxed{6}")]
[('7', True), ('6', False)]
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

# Drafts: everything inside a reasoning block is never a verdict source. An
# opened block that never closes (a reply cut off while thinking) leaves
# nothing after its opening tag.
_DRAFT = re.compile(
    r"<(think|thinking|reasoning|scratchpad)>.*?(?:</\1>|\Z)", re.S | re.I
)
_LATEX_WRAPPER = re.compile(
    r"\\(?:text|textbf|textit|mathrm|mathbf|mbox|operatorname)\s*\{([^{}]*)\}"
)
_MARKUP = re.compile(r"\*\*|__|(?<!\\)\$|\\[()\[\]]|`")

# Labels that name a verdict wherever they stand on a line ...
STRONG_LABELS = (
    r"final\s+(?:answer|verdict|decision|rating|score|judg(?:e)?ment|grade|result)",
    r"overall\s+(?:rating|score|grade)?",
    r"total\s*(?:score|points)?",
    r"rating",
    r"verdict",
    r"decision",
    r"winner",
    r"better\s+(?:response|reply)",
    r"rate\s+(?:it|this|that|the)(?:\s+(?:response|reply|answer))?(?:\s+(?:an?|as|at))?",
)
# Chinese and Korean labels: no spaces around words, so no word boundaries.
CJK_LABELS = (
    "总分",
    "总评分",
    "总得分",
    "最终得分",
    "最终评分",
    "最终答案",
    "最终判断",
    "最终裁决",
    "最终结论",
    "最终结果",
    "评分",
    "结论",
    "판정",
    "총점",
    "최종\\s*점수",
    "최종\\s*판단",
    "최종\\s*답변",
    "최종\\s*평가",
    "최종\\s*결론",
    "최종\\s*결과",
    "최종",
)
# ... and labels that only do so at the start of a line ("Helpfulness score:
# 8" inside an explanation is a sub-score, not the verdict).
LINE_LABELS = (
    r"score",
    r"answer",
    r"grade",
    r"result",
    "得分",
    "答案",
    "点数",
    "점수",
    "답변",
    "답",
)
LABEL_SEPARATOR = r"\s*(?:\([^()\n]{0,40}\))?\s*(?:is|of|=|:|-|–|—|→|为|是|은|는|:)?\s*"
_LINE_START = r"(?:^|\n)[ \t>#*\-•+]*(?:\d{1,2}[.)]\s*)?"
_LABEL = re.compile(
    rf"(?:(?:{_LINE_START}(?:{'|'.join(LINE_LABELS)})|(?<![^\W\d_])"
    rf"(?:{'|'.join(STRONG_LABELS)}))(?![^\W\d_])|(?:{'|'.join(CJK_LABELS)})){LABEL_SEPARATOR}",
    re.I,
)
# A boxed or double-bracketed value; the box may hold one level of braces.
_BOX = re.compile(
    r"\\(?:boxed|fbox)\s*\{((?:[^{}]|\{[^{}]*\})*)\}|\[\[([^\[\]\n]{1,40})\]\]"
)
# What may follow a label as a bare value: a number with an optional
# denominator or unit, or a word up to the end of its phrase.
_BARE = re.compile(
    r"(-?\d+(?:\.\d+)?(?:\s*(?:/|out\s+of|of)\s*\d+(?:\.\d+)?)?(?:\s*(?:points?|pts|分|점))?"
    r"|(?:assistant|response|reply|model|answer|option|助手|回答)?\s*[^\s.,;:!?。，；：！？()]{1,12})",
    re.I,
)
_FIRST_LINE = re.compile(r"([^\s.)]{1,12})[ \t]*\n")
_ARITHMETIC = re.compile(r"[\d.\s+*×x/()]+=\s*(-?\d+(?:\.\d+)?)(?!.*=)", re.I)
# Counterfactual sentences: a value in them is what the verdict would have
# been, not what it is.
_COUNTERFACTUAL = re.compile(
    r"\b(?:would|could|might|should)\s+have\b|\bhad\s+(?:it|the|they|this|that|he|she)\b"
    r"|\bif\b[^.\n]*\bhad\b|\bwere\s+it\b|\botherwise\b|\bjustified\b|\binstead\s+of\b"
    r"|如果|假如|要是|本可|本应|若是|만약|더라면|였다면|했다면|았다면|었다면",
    re.I,
)
# Sentences that quote or illustrate the asked format: a verdict in them is
# an example of the format, not the judge's ("in the format "Rating: [[5]]",
# for example", "The format is \\boxed{1} (continue)").
_EXAMPLE = re.compile(
    r"\bfor\s+(?:example|instance)\b|\be\.\s?g\.|\bsuch\s+as\b|\bexample\s*:"
    r"|\bin\s+the\s+format\b|\bformat\s+(?:is|was|should\s+be|would\s+be|like)\b"
    r"|例如|比如|譬如|举例|格式|예를\s*들어|예시|형식",
    re.I,
)
_QUOTES = {'"': '"', "“": "”", "„": "“", "「": "」", "『": "』", "«": "»"}
_ALTERNATIVE = re.compile(
    r"\s(?:or|and)\s|\s/\s|,\s|、|或者|或|还是|또는|혹은|이나", re.I
)
# "e.g." and "i.e." end no sentence: "e.g. \\boxed{A}" is in the sentence
# that says it is an example.
_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)[.!?](?:\s|$)|[。！？\n]")
JSON_VERDICT_KEYS = (
    "score",
    "total",
    "total_score",
    "overall",
    "overall_score",
    "rating",
    "final_score",
    "final_rating",
    "verdict",
    "final_verdict",
    "winner",
    "better",
    "answer",
    "final_answer",
    "decision",
    "continue",
    "would_continue",
    "keep_chatting",
    "result",
)


@dataclass(frozen=True)
class Candidate:
    """One place a verdict could be read from."""

    raw: str  # the value as written ("85/100", "Yes", "A>B", "7")
    start: int  # where it is in the answer text (its order)
    labelled: bool  # a verdict label or a JSON verdict key names it
    counterfactual: bool = False  # its sentence says what would have been
    # how it is written: "box" (\boxed{}), "brackets" ([[ ]]), "bare" (after
    # a label, or the whole reply) or "json"; and the label before it (for
    # "json", the key it was read from)
    form: str = "bare"
    label: str = ""
    # its sentence quotes or illustrates the format ("for example",
    # "the format is \\boxed{1}", a verdict in quotation marks): not given
    example: bool = False


@functools.lru_cache(maxsize=8)  # a reply's verdict and its parts read it both
def answer_text(reply: str) -> str:
    """The reply without drafts and wrappers, NFKC-normalised (full-width
    digits and colons become ASCII)."""
    text = unicodedata.normalize("NFKC", _DRAFT.sub(" ", reply))
    for _ in range(3):  # nested wrappers: \textbf{\text{85}}
        text = _LATEX_WRAPPER.sub(r"\1", text)
    return _MARKUP.sub("", text).strip()


def candidates(text: str, fields: frozenset[str] = frozenset()) -> list[Candidate]:
    """Every candidate of an answer text, in the order they appear. A JSON
    object gives the value of its first key among ``fields`` (the ones its
    mode declares), else of its first key among ``JSON_VERDICT_KEYS``: the
    reader decides whether that key counts (``metrics.verdicts.read``)."""
    found: dict[int, Candidate] = {}
    labels = {  # where each label ends -> (its words, where it starts)
        match.end(): (_label_word(match.group(0)), match.start())
        for match in _LABEL.finditer(text)
        if not _REPORTED.search(text, max(match.start() - 16, 0), match.start())
    }
    for match in _BOX.finditer(text):
        raw = (match.group(1) if match.group(1) is not None else match.group(2)).strip()
        label, phrase = _label_of(text, labels, match.start())
        form = "box" if match.group(1) is not None else "brackets"
        found[match.start()] = _candidate(
            text, raw, (match.start(), phrase), bool(label), form, label
        )
    for end, (word, phrase) in labels.items():
        if end in found or _BOX.match(text, end):
            continue
        bare = _BARE.match(text, end)
        if bare:
            raw = _after_arithmetic(text, end) or bare.group(1)
            where = (end, phrase)
            found[end] = _candidate(text, raw.strip(), where, True, "bare", word)
    for start, raw, key in _json_values(text, fields):
        json_found = _candidate(text, raw, (start, start), True, "json", key)
        found.setdefault(start, json_found)
    whole = text.strip()
    if whole and not found and len(whole) <= 24 and "\n" not in whole:
        found[0] = Candidate(whole.rstrip(".。!"), 0, True)  # the reply is the value
    first = _FIRST_LINE.match(whole)
    if first and 0 not in found:  # "4\n\nThe reply is generic." (a bare answer first)
        found[0] = Candidate(first.group(1), 0, True)
    return sorted(found.values(), key=lambda c: c.start)


def _label_of(
    text: str, labels: dict[int, tuple[str, int]], start: int
) -> tuple[str, int]:
    """The label of a box at ``start`` and where its phrase starts (no
    label: "" and the box's start)."""
    for end, (word, label_start) in labels.items():
        if _same_phrase(text, end, start):
            return word, label_start
    return "", start


def _same_phrase(text: str, label_end: int, start: int) -> bool:
    """A box right after a label ("Total: \\boxed{80}", "verdict is [[A]]")."""
    between = text[label_end:start] if label_end <= start else "\n"
    return (
        len(between) <= 24
        and not _SENTENCE_END.search(between)
        and not _BOX.search(between)
    )


def _after_arithmetic(text: str, start: int) -> str | None:
    """ "Total: 18 + 17 + 16 = 51": the value after the last ``=``."""
    line = text[start:].split("\n", 1)[0]
    match = _ARITHMETIC.match(line)
    return match.group(1) if match and "+" in line else None


def _candidate(
    text: str,
    raw: str,
    where: tuple[int, int],
    labelled: bool,
    form: str,
    label: str,
) -> Candidate:
    """``where``: the value's start, and where its phrase (its label, or
    the value itself) starts."""
    start, phrase = where
    if form == "json":  # its own text (the reasoning) says not how it is meant
        sentence = text[_sentence_start(text, start) : start]
    else:
        sentence = _sentence(text, start)
    counterfactual = bool(_COUNTERFACTUAL.search(sentence))
    example = bool(_EXAMPLE.search(sentence)) or _quoted(text, phrase)
    return Candidate(raw, start, labelled, counterfactual, form, label, example)


def _quoted(text: str, phrase: int) -> bool:
    """A verdict inside quotation marks that open before its label (or
    before the value, without one): it is quoted, not given ("the format
    "Rating: [[5]]""). ``Final answer: "Yes"`` quotes only the value."""
    # a label's match may begin at the newline before it: phrase + 1
    line = text[text.rfind("\n", 0, phrase + 1) + 1 : phrase]
    closing = None
    for char in line:
        if closing is None and char in _QUOTES:
            closing = _QUOTES[char]
        elif char == closing:
            closing = None
    return closing is not None


def _label_word(label: str) -> str:
    """A label as its words, lower-cased ("**Total score:** " -> "total score")."""
    return " ".join(re.findall(r"[^\W\d_]+", label.lower()))


# A label someone else's rating is reported under, not the judge's verdict:
# "the user's rating of 5", "their score was 3".
_REPORTED = re.compile(
    r"(?:'s|’s|\b(?:their|his|her|its|your|user|users|human|annotator)s?)\s+$", re.I
)


def _sentence(text: str, position: int) -> str:
    end_match = _SENTENCE_END.search(text, position)
    end = end_match.start() if end_match else len(text)
    return text[_sentence_start(text, position) : end]


def _sentence_start(text: str, position: int) -> int:
    return max((m.end() for m in _SENTENCE_END.finditer(text, 0, position)), default=0)


def offered_together(text: str, left: Candidate, right: Candidate) -> bool:
    """Two values offered as a choice in one phrase ("answer \\boxed{1} or
    \\boxed{0}", "[[A]] if A is better, [[B]] if B is"): the reply restates
    the instructions there; neither is a verdict."""
    between = text[left.start : right.start]
    return (
        len(between) <= 60
        and not _SENTENCE_END.search(between)
        and bool(_ALTERNATIVE.search(between))
    )


_DECODER = json.JSONDecoder()  # stateless: one for every reply and thread


def json_objects(text: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(start, object)`` of every JSON object in the text (fenced or not)."""
    position = text.find("{")
    while position != -1:
        try:
            value, end = _DECODER.raw_decode(text, position)
        except ValueError:
            position = text.find("{", position + 1)
            continue
        if isinstance(value, dict):
            yield position, value
        position = text.find("{", end)


def json_key(key: object) -> str:
    """A JSON key as fields are declared and looked up ("Final Score" ->
    "final_score")."""
    return str(key).strip().lower().replace(" ", "_")


def _json_values(text: str, fields: frozenset[str]) -> Iterator[tuple[int, str, str]]:
    """``(start, value, key)`` of each JSON object's verdict: a declared
    field first, else a key judges write verdicts under."""
    for start, value in json_objects(text):
        keyed = {json_key(k): v for k, v in value.items()}
        for key in (*sorted(fields), *JSON_VERDICT_KEYS):
            if key in keyed and isinstance(keyed[key], (int, float, str, bool)):
                found = keyed[key]
                written = str(int(found)) if isinstance(found, bool) else str(found)
                yield start, written, key
                break
