"""Slots suite: memory writes (per-response ``slots``) against the session's
``ground_truth_slots``, plus memory latency (``docs/metrics/slots.md``).

``run`` emits session-level count rows per (session, method); ``summarize``
sums them over every session of the run (micro-averaging), so summarizing the
rows of several chunks equals summarizing one chunk holding the same sessions.

* A method's prediction is its memory after the last round: its responses'
  snapshots (``slots_state``) and updates (``slots``: a string replaces, a
  list adds, ``null`` deletes) in round order
  (:func:`metrics.suites.slots.matching.memory_state`).
* Per ground-truth (topic, field): TP when the prediction has a value, else FN.
  Each predicted slot absent from the ground truth is an FP and an extra slot.
* ``slot_exact`` = exactly matched slots (equal canonical value sets) / ground-
  truth slots. Token metrics and ``bleu1`` use matched slots only and are None
  when a method matched none. Precision with no prediction at all is 0.0 (seed).
* Per-topic ids are dynamic: rows ``slot_tp@<topic>`` / ``slot_fp@`` /
  ``slot_fn@``, summary ``slot_precision@<topic>`` / ``slot_recall@`` /
  ``slot_f1@``; only fixed ids are in ``METRICS``.
* With a judge, the optional ``slot_judge`` (:mod:`metrics.suites.slots.judge`) rates
  the predicted slots; without one it emits no rows at all.

>>> session = {"session_id": "s1", "ground_truth_slots": {"b": {"city": "北京"}},
...            "rounds": [{"round": 1, "responses": {"M": {"text": "",
...                        "slots": {"b": {"city": "上海"}}, "latency_s": 2}}}]}
>>> summary = summarize(run([session], ["M"], None, {}), ["M"])["summary"]["M"]
>>> summary["slot_f1"], summary["slot_exact"], summary["token_f1"], summary["latency_p95"]
(1.0, 0.0, 0.0, 2.0)
"""

from __future__ import annotations

import math
from typing import Any, TypedDict

from metrics.judging import Judge
from metrics.notes import Note, note
from metrics.rows import ResultRow, RowKey, result_row
from metrics.suite import (
    Chart,
    Format,
    JudgeUse,
    Metric,
    Panel,
    Suite,
    _l,
    series,
)
from metrics.suites.slots import judge as slot_judge
from metrics.suites.slots.matching import (
    SlotTable,
    diff_slots,
    memory_state,
    merge_writes,
    nested,
    prf,
)
from metrics.suites.slots.summary import (
    COUNT,
    LATENCY_IDS,
    OUTCOMES,
    SLOT_IDS,
    UNIT,
    latency_summary,
    slot_summary,
    summarize,
    topic_summary,
)

__all__ = ["latency_summary", "slot_summary", "summarize", "topic_summary"]


def _row(
    key: RowKey,
    metric: str,
    value: float | None,
    note: Note | None = None,
    detail: dict[str, Any] | None = None,
) -> ResultRow:
    return result_row(key, metric, value, note=note, detail=detail)


def run(
    sessions: list[dict[str, Any]],
    methods: list[str],
    judge: Judge | None,
    options: dict[str, Any],
) -> list[ResultRow]:
    """Session-level rows for every (session, method) of the chunk, plus the
    ``slot_judge`` rows (one ``judge.evaluate`` batch) when a judge is given."""
    rows: list[ResultRow] = []
    for session in sessions:
        truth = merge_writes([session.get("ground_truth_slots")])
        for method in methods:
            key: RowKey = {
                "session_id": session["session_id"],
                "round": None,
                "method": method,
            }
            if session.get("ground_truth_slots") is None:  # absent, not empty
                reason = note("missing_field", field="ground_truth_slots")
                rows.append(_row(key, "slot_f1", None, reason))
            elif not truth:
                reason = note("empty_field", field="ground_truth_slots")
                rows.append(_row(key, "slot_f1", None, reason))
            else:
                rows += method_rows(session, method, truth, key)
    if judge is not None:
        rows += slot_judge.rows(sessions, methods, judge)
    return rows


def method_rows(
    session: dict[str, Any], method: str, truth: SlotTable, key: RowKey
) -> list[ResultRow]:
    """Count rows, per-topic counts, ``slot_f1`` (with the diff) and ``latency``."""
    rounds = sorted(session["rounds"], key=lambda r: r["round"])
    responses = [r["responses"][method] for r in rounds]
    predicted = memory_state(responses)
    diff = diff_slots(truth, predicted)
    counts = {
        "slot_tp": diff.tp,
        "slot_fp": diff.fp,
        "slot_fn": diff.fn,
        "slot_exact_count": diff.exact,
        "token_matched": diff.token_matched,
        "token_pred": diff.token_pred,
        "token_gt": diff.token_gt,
        "bleu1_sum": diff.bleu1_sum,
        "extra_slots": len(diff.extra),
        "extra_values": diff.extra_values,
    }
    rows = [_row(key, metric, float(value)) for metric, value in counts.items()]
    for topic, outcomes in sorted(diff.per_topic.items()):
        rows += [_row(key, f"slot_{o}@{topic}", float(outcomes[o])) for o in OUTCOMES]
    detail = {
        "ground_truth": nested(truth),
        "predicted": nested(predicted),
        "matched": diff.matched,
        "missed": diff.missed,
        "extra": diff.extra,
        "exact": diff.exact_slots,
    }
    # A method that never wrote slots is scored as an empty memory (all FN):
    # dropping the session instead would flatter a method that extracts nothing.
    silent = not any(
        r.get("slots") is not None or r.get("slots_state") is not None
        for r in responses
    )
    flag = note("no_slots_written") if silent else None
    rows.append(_row(key, "slot_f1", prf(diff.tp, diff.fp, diff.fn)[2], flag, detail))
    return [*rows, _latency_row(key, responses)]


def _latency_row(key: RowKey, responses: list[dict[str, Any]]) -> ResultRow:
    """The session's latency: the sum of its rounds' ``latency_s``, or no
    value when a round lacks one (a partial sum would be an invented number)."""
    timed = [r["latency_s"] for r in responses if r.get("latency_s") is not None]
    if not timed:
        return _row(key, "latency", None, note("no_latency"))
    missing = len(responses) - len(timed)
    if missing:
        reason = note("latency_missing", missing=missing, rounds=len(responses))
        return _row(key, "latency", None, reason)
    return _row(key, "latency", math.fsum(timed))


class _SecondsOptions(TypedDict):
    """Keyword arguments of :class:`Metric` shared by the latency metrics."""

    bounds: tuple[float | None, float | None]
    format: Format


SECONDS: _SecondsOptions = {"bounds": COUNT, "format": Format.SECONDS}
# Session-level counts, summed over sessions (micro-averaging). Per topic, the
# TP/FP/FN counts and P/R/F1 are also emitted as "<id>@<topic>" (keyed).
_COUNT_LABELS = {
    "slot_tp": (_l("Slots found (TP)"), True),
    "slot_fp": (_l("Wrong or extra slots (FP)"), False),
    "slot_fn": (_l("Slots missed (FN)"), False),
    "slot_exact_count": (_l("Exact matches"), True),
    "token_matched": (_l("Matched tokens"), True),
    "token_pred": (_l("Predicted tokens"), None),
    "token_gt": (_l("Ground-truth tokens"), None),
    "bleu1_sum": (_l("BLEU-1 sum"), None),
}
_SUMMARY_LABELS = {
    "slot_precision": _l("Slot precision"),
    "slot_recall": _l("Slot recall"),
    "slot_f1": _l("Slot F1"),
    "slot_exact": _l("Exact match"),
    "token_precision": _l("Token precision"),
    "token_recall": _l("Token recall"),
    "token_f1": _l("Token F1"),
    "bleu1": _l("BLEU-1"),
}
_LATENCY_LABELS = {
    "latency_mean": _l("Mean latency (s)"),
    "latency_median": _l("Median latency (s)"),
    "latency_p95": _l("P95 latency (s)"),
    "latency_total": _l("Total latency (s)"),
}


def _count(metric_id: str) -> Metric:
    label, higher = _COUNT_LABELS[metric_id]
    return Metric(
        metric_id,
        label,
        "session",
        bool(higher),
        COUNT,
        Format.COUNT,
        ranked=higher is not None,
        keyed=metric_id in ("slot_tp", "slot_fp", "slot_fn"),
    )


# slot_f1, extra_slots and extra_values are also emitted as session rows under
# the same id; they are registered once, at summary level.
METRICS: tuple[Metric, ...] = (
    *(_count(metric_id) for metric_id in _COUNT_LABELS),
    Metric(
        "latency",
        _l("Session latency (s)"),
        "session",
        False,
        **SECONDS,
        description=_l("Sum of the method's latency_s over the rounds of a session."),
    ),
    Metric(
        "slot_f1",
        _SUMMARY_LABELS["slot_f1"],
        "summary",
        True,
        UNIT,
        Format.RATE,
        compare="slot_f1",
        keyed=True,
        description=_l(
            "Micro-averaged F1 of predicted slots against the ground truth."
        ),
        basis=_l("micro-average over the slots of all sessions"),
    ),
    *(
        Metric(
            i,
            _SUMMARY_LABELS[i],
            "summary",
            True,
            UNIT,
            Format.RATE,
            keyed=i in ("slot_precision", "slot_recall"),
            source="slot_f1",
        )
        for i in SLOT_IDS[:8]
        if i != "slot_f1"
    ),
    Metric(
        "extra_slots",
        _l("Extra (hallucinated) slots"),
        "summary",
        False,
        COUNT,
        Format.COUNT,
        source="slot_f1",
        description=_l("Predicted slots that are not in the ground truth."),
    ),
    Metric(
        "extra_values",
        _l("Extra values"),
        "summary",
        False,
        COUNT,
        Format.COUNT,
        source="slot_f1",
    ),
    Metric(
        "latency_mean",
        _LATENCY_LABELS["latency_mean"],
        "summary",
        False,
        compare="latency",
        **SECONDS,
    ),
    *(
        Metric(i, _LATENCY_LABELS[i], "summary", False, source="latency", **SECONDS)
        for i in LATENCY_IDS[1:]
    ),
    Metric(
        "slot_judge",
        _l("LLM judge score (slots)"),
        "session",
        True,
        UNIT,
        Format.RATE,
        needs_judge=True,
        agreement="interval",
        description=_l(
            "Mean semantic accuracy (0-1) of the predicted slots, rated by the judge."
        ),
    ),
    Metric(
        "slot_judge_avg",
        _l("LLM judge score (slots)"),
        "summary",
        True,
        UNIT,
        Format.RATE,
        needs_judge=True,
        compare="slot_judge",
    ),
)

SUITE = Suite(
    name="slots",
    label=_l("Slot-extraction memory"),
    description=_l(
        "What a method's memory wrote (per-response slots) against the session's ground-truth slots, and its latency."
    ),
    metrics=METRICS,
    run=run,
    summarize=summarize,
    session_fields=("ground_truth_slots",),
    response_fields=("slots|slots_state",),  # updates, or full snapshots
    judge=JudgeUse.OPTIONAL,  # slot_judge
    modes=(slot_judge.SLOT_JUDGE,),
    estimate=slot_judge.estimate,
    order=60,
    panel=Panel(
        charts=(
            Chart(
                "slots_prf",
                "bars",
                _l("Slot precision, recall, F1 and exact match"),
                "summary",
                series=series(
                    "slot_precision",
                    "slot_recall",
                    "slot_f1",
                    "slot_exact",
                    "slot_judge_avg",
                ),
            ),
            Chart(
                "slots_topics",
                "heatmap",
                _l("Slot F1 per topic"),
                "panel.per_topic_f1",
                columns="panel.topics",
            ),
            Chart(
                "slots_extra",
                "bars",
                _l("Hallucinated slots and values"),
                "summary",
                series=series("extra_slots", "extra_values"),
            ),
            Chart(
                "slots_latency",
                "box",
                _l("Latency per session"),
                "panel.latency",
                y_title=_l("seconds"),
                marks="panel.latency_p95",
                mark_label=_l("P95"),
            ),
        ),
    ),
)
