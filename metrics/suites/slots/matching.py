"""Slot matching for the slots suite: canonical values, tokens, merged memory
writes and the per-session diff against the ground truth.

Values are compared after a Unicode-aware canonicalization. The source
document's rule (``docs/metrics/slots.md``) deleted every non-ASCII character,
so "北京" and "上海" both became "" and matched each other; here they stay
distinct:

>>> canonicalize("Software_Engineer!"), canonicalize("北京"), canonicalize("上海")
('software engineer', '北京', '上海')
>>> tokens("서울 강남구"), tokens("software engineer")
(['서', '울', '강', '남', '구'], ['software', 'engineer'])

A slot is keyed by ``(topic, field)`` exactly as written in the file (keys are
not canonicalized, as in ``seeds/slot-extraction-metrics.md``); only values
are.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from dataset.fields import value_text

SlotKey = tuple[str, str]
SlotTable = dict[SlotKey, list[str]]

# Scripts written without spaces between words: Hiragana/Katakana, CJK
# ideographs (Ext A, URO, compatibility, Ext B onwards) and Hangul syllables.
# Each such character is its own token, so "北京市" is 3 tokens, not 1.
_WIDE = (
    "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7a3\uf900-\ufaff\U00020000-\U0003134f"
)
_TOKEN_RE = re.compile(f"[{_WIDE}]|[^\\s{_WIDE}]+")


def canonicalize(value: str) -> str:
    """NFKC, casefold, ``_``/punctuation (P*)/symbols (S*) to spaces, collapse
    whitespace, strip. Letters, digits and marks of every script are kept.

    >>> canonicalize("  Ｓｅｏｕｌ,  KOREA ")
    'seoul korea'
    >>> canonicalize("basic_info"), canonicalize("C++"), canonicalize("—")
    ('basic info', 'c', '')
    """
    text = unicodedata.normalize("NFKC", value)
    # casefold can produce characters NFKC would rewrite again (e.g. "ǰ").
    text = unicodedata.normalize("NFKC", text.casefold())
    text = "".join(
        " " if ch == "_" or unicodedata.category(ch)[0] in "PS" else ch for ch in text
    )
    return " ".join(text.split())


def tokens(text: str) -> list[str]:
    """Whitespace tokens of canonical text; every CJK ideograph, kana and
    Hangul syllable is a token of its own (also inside mixed words).

    >>> tokens("北京市 beijing"), tokens("k팝")
    (['北', '京', '市', 'beijing'], ['k', '팝'])
    """
    return _TOKEN_RE.findall(text)


def values_of(raw: object) -> list[str]:
    """A field's value as a list of texts: ``str`` -> ``[str]``, a number
    -> its decimal text (``dataset.fields.value_text``: 22 -> "22").

    >>> values_of(22), values_of(["a", 2.5])
    (['22'], ['a', '2.5'])
    """
    items = raw if isinstance(raw, list) else [raw]
    texts = (value_text(item) for item in items)
    return [text for text in texts if text is not None]


def merge_writes(writes: Iterable[dict[str, Any] | None]) -> SlotTable:
    """Merge ``{topic: {field: str | [str]}}`` maps in order.

    Values accumulate per (topic, field): later writes add values, the first
    spelling of each canonical form is kept in order, later duplicates (same
    canonical form) and values whose canonical form is empty are dropped.
    A slot with no value left is absent.

    >>> merge_writes([{"t": {"f": "Seoul"}}, {"t": {"f": ["seoul!", "Busan", ""]}}])
    {('t', 'f'): ['Seoul', 'Busan']}
    >>> merge_writes([{"t": {"f": "?"}}, None])
    {}
    """
    written: SlotTable = {}
    for write in writes:
        for topic, fields in (write or {}).items():
            for name, raw in (fields if isinstance(fields, dict) else {}).items():
                written.setdefault((topic, name), []).extend(values_of(raw))
    table = {key: distinct(values) for key, values in written.items()}
    return {key: values for key, values in table.items() if values}


def distinct(values: list[str]) -> list[str]:
    """The first spelling of each canonical form, in order; values whose
    canonical form is empty dropped."""
    seen: set[str] = set()
    kept = []
    for value in values:
        canonical = canonicalize(value)
        if canonical and canonical not in seen:
            seen.add(canonical)
            kept.append(value)
    return kept


def memory_state(responses: Iterable[dict[str, Any]]) -> SlotTable:
    """A method's memory after its responses, in round order
    (``docs/metrics/slots.md``): a response's ``slots_state`` is the whole
    memory at that point (a snapshot: it replaces what was there); its
    ``slots`` are updates, applied after the snapshot if both are given.
    An update of a field with

    * a string replaces the slot's values (a correction: departure "ely",
      then "cambridge", leaves "cambridge");
    * a list adds its values to the slot (a slot holding a set of values);
    * ``{"value": str | [str], "append": true|false}`` adds or replaces;
    * ``null`` deletes the slot.

    >>> memory_state([{"slots": {"t": {"dep": "ely", "likes": ["tea"]}}},
    ...               {"slots": {"t": {"dep": "Cambridge", "likes": ["jazz"]}}}])
    {('t', 'dep'): ['Cambridge'], ('t', 'likes'): ['tea', 'jazz']}
    >>> memory_state([{"slots": {"t": {"dep": "ely", "day": "mon"}}},
    ...               {"slots": {"t": {"dep": None, "day": {"value": "tue", "append": True}}}}])
    {('t', 'day'): ['mon', 'tue']}
    >>> memory_state([{"slots": {"t": {"a": "x"}}}, {"slots_state": {"t": {"b": "y"}}}])
    {('t', 'b'): ['y']}
    """
    table: SlotTable = {}
    for response in responses:
        if response.get("slots_state") is not None:
            table = merge_writes([response["slots_state"]])
        for topic, fields in (response.get("slots") or {}).items():
            for name, raw in (fields if isinstance(fields, dict) else {}).items():
                _update(table, (topic, name), raw)
    return table


def _update(table: SlotTable, key: SlotKey, raw: object) -> None:
    """Apply one field update (see :func:`memory_state`)."""
    if raw is None:
        table.pop(key, None)
        return
    append = isinstance(raw, list)
    if isinstance(raw, dict):
        append, raw = bool(raw.get("append")), raw.get("value")
    values = distinct([*(table.get(key, []) if append else []), *values_of(raw)])
    if values:
        table[key] = values
    else:  # nothing left (a value that canonicalizes to nothing)
        table.pop(key, None)


def nested(table: SlotTable) -> dict[str, Any]:
    """``{(topic, field): values}`` back to ``{topic: {field: values}}``."""
    out: dict[str, Any] = {}
    for (topic, name), values in table.items():
        out.setdefault(topic, {})[name] = list(values)
    return out


def slot_tokens(values: list[str]) -> list[str]:
    """Tokens of all values of one slot, in value order."""
    return [tok for value in values for tok in tokens(canonicalize(value))]


def prf(tp: float, fp: float, fn: float) -> tuple[float, float, float]:
    """Precision, recall, F1 with the documented rule: a 0/0 ratio is 0.0
    (docs/metrics/slots.md).

    >>> prf(7, 3, 0)[0], prf(12, 0, 3)[1], prf(0, 0, 4)
    (0.7, 0.8, (0.0, 0.0, 0.0))
    """
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    return precision, recall, f1(precision, recall)


def f1(precision: float, recall: float) -> float:
    """Harmonic mean; 0.0 when both are 0.

    >>> round(f1(0.7, 0.8), 4)
    0.7467
    """
    if not precision and not recall:
        return 0.0
    return 2 * precision * recall / (precision + recall)


def bleu1(pred: list[str], ref: list[str]) -> float:
    """Unigram precision x brevity penalty, BP = exp(1 - ref/pred) when
    pred <= ref, else 1; 0.0 for an empty prediction.

    >>> round(bleu1(["engineer"], ["software", "engineer"]), 3)
    0.368
    >>> bleu1([], ["x"]), bleu1(["a", "b"], ["a"])
    (0.0, 0.5)
    """
    if not pred:
        return 0.0
    overlap = sum((Counter(pred) & Counter(ref)).values())
    penalty = math.exp(1 - len(ref) / len(pred)) if len(pred) <= len(ref) else 1.0
    return overlap / len(pred) * penalty


def percentile(ordered: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of sorted values by linear interpolation
    between the closest ranks: numpy's default ("linear", Hyndman & Fan
    type 7), the same arithmetic, so the same bits (docs/metrics/slots.md).
    The seed's index rule, sorted[max(int(0.95 n) - 1, 0)], gave the minimum
    for n = 2 and is no longer used.

    >>> percentile([3.5, 4.0], 0.95), percentile([7.0], 0.95)
    (3.975, 7.0)
    >>> percentile([200.0, 250.0, 400.0, 600.0, 800.0], 0.95)
    760.0
    """
    position = (len(ordered) - 1) * q
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    share, a, b = position - low, ordered[low], ordered[high]
    # numpy's _lerp: from the nearer end, so the result stays within [a, b]
    return b - (b - a) * (1 - share) if share >= 0.5 else a + (b - a) * share


@dataclass
class SlotDiff:
    """Counts and lists of one (session, method) prediction vs ground truth."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    exact: int = 0
    token_matched: int = 0
    token_pred: int = 0
    token_gt: int = 0
    bleu1_sum: float = 0.0
    extra_values: int = 0
    per_topic: dict[str, Counter[str]] = field(default_factory=dict)
    matched: list[list[str]] = field(default_factory=list)
    missed: list[list[str]] = field(default_factory=list)
    extra: list[list[str]] = field(default_factory=list)
    exact_slots: list[list[str]] = field(default_factory=list)

    def count(self, topic: str, outcome: str) -> None:
        setattr(self, outcome, getattr(self, outcome) + 1)
        self.per_topic.setdefault(topic, Counter())[outcome] += 1


def diff_slots(truth: SlotTable, predicted: SlotTable) -> SlotDiff:
    """Compare merged tables (as built by :func:`merge_writes`).

    >>> d = diff_slots({("b", "city"): ["北京市"]}, {("b", "city"): ["北京市"],
    ...                 ("x", "job"): ["a", "b"]})
    >>> d.tp, d.fp, d.fn, d.exact, d.extra, d.extra_values
    (1, 1, 0, 1, [['x', 'job']], 2)
    """
    diff = SlotDiff()
    for key, gt_values in truth.items():
        pred_values = predicted.get(key)
        if not pred_values:
            diff.count(key[0], "fn")
            diff.missed.append(list(key))
            continue
        diff.count(key[0], "tp")
        diff.matched.append(list(key))
        _score_values(diff, key, gt_values, pred_values)
    for key, pred_values in predicted.items():
        if key not in truth and pred_values:
            diff.count(key[0], "fp")
            diff.extra.append(list(key))
            diff.extra_values += len(pred_values)
    return diff


def _score_values(
    diff: SlotDiff, key: SlotKey, gt_values: list[str], pred_values: list[str]
) -> None:
    if {canonicalize(v) for v in gt_values} == {canonicalize(v) for v in pred_values}:
        diff.exact += 1
        diff.exact_slots.append(list(key))
    gt_tokens, pred_tokens = slot_tokens(gt_values), slot_tokens(pred_values)
    diff.token_matched += sum((Counter(gt_tokens) & Counter(pred_tokens)).values())
    diff.token_pred += len(pred_tokens)
    diff.token_gt += len(gt_tokens)
    diff.bleu1_sum += bleu1(pred_tokens, gt_tokens)
