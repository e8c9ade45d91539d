"""Optional ``slot_judge`` metric of the slots suite: an LLM judge rates the
semantic accuracy of every predicted slot against the ground truth (0..1).

* One judge call per (session, method), ``prompts/slot_judge_v2.txt``: every
  predicted (topic, field, values) with the ground-truth values of that slot,
  or "(not in ground truth)" for an extra slot, plus the whole ground truth.
* The strict JSON reply is parsed by :func:`parse_slot_judge`; the row
  (session level) is the mean slot score. A reply that does not score exactly
  the listed slots is ``unscored`` (never a made-up number).
* No predicted slot: ``unscored`` ("no predicted slots to judge"). No judge:
  no rows at all (the metric is optional).

The predicted table is built as in :mod:`metrics.suites.slots` (writes merged in
round order).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from statistics import fmean
from typing import Any

from core.status import RowStatus
from metrics.judging import (
    Judge,
    JudgeItem,
    Outcome,
    Verdict,
    load_prompt,
    strict_json,
    template_chars,
    verdict_of,
)
from metrics.notes import note
from metrics.rows import ResultRow, RowKey, result_row
from metrics.suite import JudgeMode
from metrics.suites.slots.matching import SlotTable, memory_state, merge_writes, nested

METRIC = "slot_judge"
PROMPT = "slot_judge_v2"
NOT_IN_TRUTH = "(not in ground truth)"
NO_SLOTS = note("no_predicted_slots")
NO_FIELD = note("missing_field", field="ground_truth_slots")
NO_TRUTH = note("empty_field", field="ground_truth_slots")


def slot_part(topic: str, name: str) -> str:
    """The ``parts`` key of one slot: ``"topic/field"``."""
    return f"{topic}/{name}"


def _unit_score(score: object) -> bool:
    # type() rather than isinstance(): JSON true/false must not count as 1/0;
    # NaN fails the range test.
    return (type(score) is int or type(score) is float) and 0 <= score <= 1


def parse_slot_judge(
    text: str, expected: Iterable[tuple[str, str]] | None = None
) -> Verdict | None:
    """``{"reasoning"?: str, "scores": [{"topic": str, "field": str, "score":
    0..1}, ...]}``, each slot once; the score is the mean, ``parts`` the slot
    scores keyed ``"topic/field"``. With ``expected`` ((topic, field) pairs)
    the scored slots must be exactly those. Anything else is unparseable.

    >>> reply = '{"scores": [{"topic": "b", "field": "city", "score": 0.5}]}'
    >>> parse_slot_judge(reply).parts, parse_slot_judge(reply, [("b", "job")])
    ({'b/city': 0.5}, None)
    """
    data = strict_json(text)
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


SLOT_JUDGE = JudgeMode(METRIC, PROMPT, parse_slot_judge)


def predicted_slots(session: dict[str, Any], method: str) -> SlotTable:
    """The method's memory after its last round (``slot_matching.memory_state``).

    >>> predicted_slots({"rounds": [{"round": 2, "responses": {"M": {"slots":
    ...     {"b": {"city": "Seoul"}}}}}, {"round": 1, "responses": {"M": {}}}]}, "M")
    {('b', 'city'): ['Seoul']}
    """
    rounds = sorted(session["rounds"], key=lambda r: r["round"])
    return memory_state(r["responses"][method] for r in rounds)


def slot_lines(truth: SlotTable, predicted: SlotTable) -> str:
    """One JSON line per predicted slot, with the ground truth of that slot.

    >>> print(slot_lines({("b", "city"): ["北京"]}, {("b", "city"): ["上海"],
    ...                   ("x", "pet"): ["cat"]}))
    {"topic": "b", "field": "city", "predicted": ["上海"], "ground_truth": ["北京"]}
    {"topic": "x", "field": "pet", "predicted": ["cat"], "ground_truth": "(not in ground truth)"}
    """
    lines = []
    for (topic, name), values in predicted.items():
        line = {"topic": topic, "field": name, "predicted": values}
        line["ground_truth"] = truth.get((topic, name), NOT_IN_TRUTH)
        lines.append(json.dumps(line, ensure_ascii=False))
    return "\n".join(lines)


def judge_item(truth: SlotTable, predicted: SlotTable) -> JudgeItem:
    """The single judge request of one (session, method)."""
    ground_truth = json.dumps(nested(truth), ensure_ascii=False, indent=1)
    messages = load_prompt(PROMPT).render(
        ground_truth=ground_truth, slots=slot_lines(truth, predicted)
    )
    return JudgeItem(SLOT_JUDGE, tuple(messages))


def score_row(key: RowKey, predicted: SlotTable, outcome: Outcome) -> ResultRow:
    """The ``slot_judge`` row from one judge outcome (``status``, ``verdict``,
    ``raw``, ``note``): the mean slot score, per-slot scores in ``detail``.

    >>> from types import SimpleNamespace as Outcome
    >>> ok = Outcome(status="ok", verdict={"parts": {"b/city": 1.0, "x/pet": 0.0},
    ...              "reasoning": "pets are not in the ground truth"})
    >>> slots = {("b", "city"): ["Seoul"], ("x", "pet"): ["cat"]}
    >>> row = score_row({"session_id": "s"}, slots, ok)
    >>> row["value"], row["detail"]["scores"][1]
    (0.5, {'topic': 'x', 'field': 'pet', 'values': ['cat'], 'score': 0.0})
    >>> failed = Outcome(status="error", raw=None, note=note("http_error", status=500))
    >>> score_row({}, slots, failed)["note"]
    'judge answered HTTP 500'
    """
    detail: dict[str, Any] = {"prompt_version": PROMPT}  # JSON-ready
    if outcome.status != RowStatus.OK:
        detail["raw"] = outcome.raw
        return result_row(key, METRIC, None, outcome.status, outcome.note, detail)
    verdict = verdict_of(outcome)
    parts = verdict["parts"]
    if set(parts) != {slot_part(*slot) for slot in predicted}:
        # A cached or lenient verdict that does not cover the listed slots.
        reason = note("slots_not_matched")
        return result_row(
            key, METRIC, None, RowStatus.UNSCORED, reason, detail | {"parts": parts}
        )
    detail["scores"] = [
        {"topic": t, "field": f, "values": v, "score": parts[slot_part(t, f)]}
        for (t, f), v in predicted.items()
    ]
    detail["reasoning"] = verdict.get("reasoning")
    value = fmean(entry["score"] for entry in detail["scores"])
    return result_row(key, METRIC, value, detail=detail)


def rows(
    sessions: list[dict[str, Any]], methods: list[str], judge: Judge
) -> list[ResultRow]:
    """``slot_judge`` rows of a chunk: all its judge items in one
    ``judge.evaluate`` batch. ``judge`` must not be None.

    >>> class NeverCalled:
    ...     def evaluate(self, items): raise AssertionError(items)
    >>> s = {"session_id": "s", "ground_truth_slots": {"b": {"city": "Seoul"}},
    ...      "rounds": [{"round": 1, "responses": {"M": {"text": "hi"}}}]}
    >>> [(r["metric"], r["status"], r["note"]) for r in rows([s], ["M"], NeverCalled())]
    [('slot_judge', 'not_applicable', 'no predicted slots to judge')]
    """
    out: list[ResultRow] = []
    plan: list[tuple[RowKey, SlotTable]] = []  # (row key, predicted) per judge item
    batch: list[JudgeItem] = []
    for session in sessions:
        truth = merge_writes([session.get("ground_truth_slots")])
        for method in methods:
            key: RowKey = {
                "session_id": session["session_id"],
                "round": None,
                "method": method,
            }
            predicted = predicted_slots(session, method)
            if not truth:
                present = session.get("ground_truth_slots") is not None
                note = NO_TRUTH if present else NO_FIELD  # {} is present, empty
                out.append(result_row(key, METRIC, None, note=note))
            elif not predicted:
                out.append(result_row(key, METRIC, None, note=NO_SLOTS))
            else:
                plan.append((key, predicted))
                batch.append(judge_item(truth, predicted))
    outcomes = judge.evaluate(batch) if batch else []
    for (key, predicted), outcome in zip(plan, outcomes, strict=True):
        out.append(score_row(key, predicted, outcome))
    return out


def summary(
    values: dict[str, dict[str, float]], methods: list[str]
) -> dict[str, dict[str, float | None]]:
    """``{method: {"slot_judge_avg": mean over sessions | None}}``.

    >>> summary({"M": {"s1": 1.0, "s2": 0.5}}, ["M", "N"])
    {'M': {'slot_judge_avg': 0.75}, 'N': {'slot_judge_avg': None}}
    """
    return {
        m: {"slot_judge_avg": fmean(values[m].values()) if values.get(m) else None}
        for m in methods
    }


def estimate(
    session: dict[str, Any],
    methods: list[str],
    window: int | None,
    options: dict[str, Any],
) -> tuple[int, int]:
    """Judge calls and prompt characters of one session, per sample: one
    request per method that wrote slots, when the session has ground truth
    (whatever the run's protocol: the prompt is the suite's own)."""
    truth = merge_writes([session.get("ground_truth_slots")])
    if not truth:
        return 0, 0
    ground_truth = len(json.dumps(nested(truth), ensure_ascii=False))
    calls = chars = 0
    for method in methods:
        predicted = predicted_slots(session, method)
        if predicted:
            calls += 1
            chars += (
                template_chars(SLOT_JUDGE)
                + ground_truth
                + len(slot_lines(truth, predicted))
            )
    return calls, chars
