"""Slots suite: memory writes (per-response ``slots``) against the session's
``ground_truth_slots``, plus memory latency.

``run`` emits session-level count rows per (session, method); ``summarize``
sums them over every session of the run (micro-averaging), so summarizing the
rows of several chunks equals summarizing one chunk holding the same sessions.

* A method's prediction is the merge of its responses' ``slots`` in round order
  (:func:`metrics.slot_matching.merge_writes`); a response without ``slots``
  wrote nothing that round.
* Per ground-truth (topic, field): TP when the prediction has a value, else FN.
  Each predicted slot absent from the ground truth is an FP and an extra slot.
* ``slot_exact`` = exactly matched slots (equal canonical value sets) / ground-
  truth slots. Token metrics and ``bleu1`` use matched slots only and are None
  when a method matched none. Precision with no prediction at all is 0.0 (seed).
* Per-topic ids are dynamic: rows ``slot_tp@<topic>`` / ``slot_fp@`` /
  ``slot_fn@``, summary ``slot_precision@<topic>`` / ``slot_recall@`` /
  ``slot_f1@``; only fixed ids are in ``METRICS``.
* With a judge, the optional ``slot_judge`` (:mod:`metrics.slot_judge`) rates
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
from collections import Counter, defaultdict
from statistics import fmean, median

from metrics import slot_judge
from metrics.registry import Metric
from metrics.rows import result_row
from metrics.slot_matching import diff_slots, f1, merge_writes, nested, p95_index, prf

SUITE = "slots"
OUTCOMES = ("tp", "fp", "fn")
COUNTS = (
    "slot_tp",
    "slot_fp",
    "slot_fn",
    "slot_exact_count",
    "token_matched",
    "token_pred",
    "token_gt",
    "bleu1_sum",
    "extra_slots",
    "extra_values",
)
TOPIC_COUNTS = tuple(f"slot_{outcome}@" for outcome in OUTCOMES)


def _row(key: dict, metric: str, value, note=None, detail=None) -> dict:
    return result_row(key, metric, value, note=note, detail=detail)


def run(sessions: list[dict], methods: list[str], judge, options: dict) -> list[dict]:
    """Session-level rows for every (session, method) of the chunk, plus the
    ``slot_judge`` rows (one ``judge.evaluate`` batch) when a judge is given."""
    rows = []
    for session in sessions:
        truth = merge_writes([session.get("ground_truth_slots")])
        for method in methods:
            key = {"session_id": session["session_id"], "round": None, "method": method}
            if not session.get("ground_truth_slots"):
                rows.append(
                    _row(key, "slot_f1", None, "session lacks ground_truth_slots")
                )
            elif not truth:
                note = "ground_truth_slots has no non-empty value"
                rows.append(_row(key, "slot_f1", None, note))
            else:
                rows += method_rows(session, method, truth, key)
    if judge is not None:
        rows += slot_judge.rows(sessions, methods, judge)
    return rows


def method_rows(session: dict, method: str, truth: dict, key: dict) -> list[dict]:
    """Count rows, per-topic counts, ``slot_f1`` (with the diff) and ``latency``."""
    rounds = sorted(session["rounds"], key=lambda r: r["round"])
    responses = [r["responses"][method] for r in rounds]
    predicted = merge_writes(r.get("slots") for r in responses)
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
    silent = not any(r.get("slots") is not None for r in responses)
    note = "no response of this method carries slots" if silent else None
    rows.append(_row(key, "slot_f1", prf(diff.tp, diff.fp, diff.fn)[2], note, detail))
    return [*rows, _latency_row(key, responses)]


def _latency_row(key: dict, responses: list[dict]) -> dict:
    timed = [r["latency_s"] for r in responses if r.get("latency_s") is not None]
    if not timed:
        return _row(key, "latency", None, "no response of this method has latency_s")
    missing = len(responses) - len(timed)
    note = (
        f"latency_s missing in {missing} of {len(responses)} rounds"
        if missing
        else None
    )
    return _row(key, "latency", math.fsum(timed), note)


# -- summary ---------------------------------------------------------------
def _ours(row: dict) -> bool:
    metric = row["metric"]
    return (
        row["status"] == "ok"
        and row["value"] is not None
        and (
            metric in COUNTS
            or metric in ("slot_f1", "latency")
            or metric.startswith(TOPIC_COUNTS)
        )
    )


def _collect(rows: list[dict]):
    totals = defaultdict(Counter)  # method -> metric -> summed count
    per_session = defaultdict(lambda: defaultdict(dict))  # metric -> method -> sid
    for row in filter(_ours, rows):
        if row["metric"] in ("slot_f1", "latency"):
            per_session[row["metric"]][row["method"]][row["session_id"]] = row["value"]
        else:
            totals[row["method"]][row["metric"]] += row["value"]
    return totals, per_session


def slot_summary(counts: Counter) -> dict:
    """Micro-averaged slot, token and BLEU-1 metrics from summed session counts.

    >>> s = slot_summary(Counter(slot_tp=7, slot_fp=3, slot_fn=0, slot_exact_count=7,
    ...     token_matched=3, token_pred=5, token_gt=4, bleu1_sum=7.0))
    >>> s["slot_precision"], s["slot_exact"], s["token_precision"], s["token_recall"]
    (0.7, 1.0, 0.6, 0.75)
    """
    tp, fp, fn = (counts[f"slot_{o}"] for o in OUTCOMES)
    precision, recall, slot_f1 = prf(tp, fp, fn)
    token_p = token_r = token_f1 = bleu = None
    if tp:  # token metrics exist only on matched slots
        token_p = counts["token_matched"] / counts["token_pred"]
        token_r = counts["token_matched"] / counts["token_gt"]
        token_f1, bleu = f1(token_p, token_r), counts["bleu1_sum"] / tp
    return {
        "slot_precision": precision,
        "slot_recall": recall,
        "slot_f1": slot_f1,
        "slot_exact": counts["slot_exact_count"] / (tp + fn) if tp + fn else None,
        "token_precision": token_p,
        "token_recall": token_r,
        "token_f1": token_f1,
        "bleu1": bleu,
        "extra_slots": counts["extra_slots"],
        "extra_values": counts["extra_values"],
    }


def topic_summary(counts: Counter) -> dict[str, tuple[float, float, float]]:
    """``{topic: (precision, recall, f1)}`` from summed ``slot_<o>@<topic>``."""
    topics = sorted({m.partition("@")[2] for m in counts if m.startswith(TOPIC_COUNTS)})
    return {t: prf(*(counts[f"slot_{o}@{t}"] for o in OUTCOMES)) for t in topics}


def latency_summary(values: list[float]) -> dict:
    """Mean, median, seed-rule P95 and total of session latencies.

    >>> latency_summary([float(v) for v in range(1, 21)])["latency_p95"]
    19.0
    >>> latency_summary([])["latency_mean"] is None
    True
    """
    if not values:
        return dict.fromkeys(LATENCY_IDS)
    ordered = sorted(values)
    return {
        "latency_mean": fmean(ordered),
        "latency_median": median(ordered),
        "latency_p95": ordered[p95_index(len(ordered))],
        "latency_total": math.fsum(ordered),
    }


def summarize(rows: list[dict], methods: list[str]) -> dict:
    """Summary per method, session values for comparisons and dashboard panels."""
    totals, per_session = _collect(rows)
    summary, topic_f1 = {}, {}
    latencies = {m: list(per_session["latency"][m].values()) for m in methods}
    for method in methods:
        counts = totals.get(method, Counter())
        scored = "slot_tp" in counts
        summary[method] = slot_summary(counts) if scored else dict.fromkeys(SLOT_IDS)
        summary[method].update(latency_summary(latencies[method]))
        topics = topic_summary(counts)
        topic_f1[method] = {t: prf_[2] for t, prf_ in topics.items()}
        for topic, values in topics.items():
            for name, value in zip(("precision", "recall", "f1"), values, strict=True):
                summary[method][f"slot_{name}@{topic}"] = value
    panel = {
        "topics": sorted({t for by_topic in topic_f1.values() for t in by_topic}),
        "per_topic_f1": topic_f1,
        "latency": latencies,
        "latency_p95": {m: summary[m]["latency_p95"] for m in methods},
    }
    session_values = {
        metric: {m: dict(v) for m, v in per_session[metric].items() if m in methods}
        for metric in ("slot_f1", "latency")
    }
    judged = session_values["slot_judge"] = slot_judge.session_values(rows, methods)
    for method, values in slot_judge.summary(judged, methods).items():
        summary[method].update(values)
    return {
        "summary": summary,
        "session_values": session_values,
        "panels": {"slots": panel},
    }


def _m(metric_id: str, level: str, higher: bool, bounds=None, **extra) -> Metric:
    return Metric(metric_id, SUITE, level, higher, bounds, **extra)


UNIT = (0.0, 1.0)
SLOT_IDS = (
    "slot_precision",
    "slot_recall",
    "slot_f1",
    "slot_exact",
    "token_precision",
    "token_recall",
    "token_f1",
    "bleu1",
    "extra_slots",
    "extra_values",
)
LATENCY_IDS = ("latency_mean", "latency_median", "latency_p95", "latency_total")
# slot_f1, extra_slots and extra_values are also emitted as session rows under
# the same id; they are registered once, at summary level.
METRICS: tuple[Metric, ...] = (
    *(_m(i, "session", True) for i in ("slot_tp", "slot_exact_count", "token_matched")),
    *(_m(i, "session", False) for i in ("slot_fp", "slot_fn", "latency")),
    *(
        _m(i, "session", True, ranked=False)
        for i in ("token_pred", "token_gt", "bleu1_sum")
    ),
    _m("slot_f1", "summary", True, UNIT, compare="slot_f1"),
    *(_m(i, "summary", True, UNIT) for i in SLOT_IDS[:8] if i != "slot_f1"),
    *(_m(i, "summary", False) for i in SLOT_IDS[8:]),
    _m("latency_mean", "summary", False, compare="latency"),
    *(_m(i, "summary", False) for i in LATENCY_IDS[1:]),
    _m("slot_judge", "session", True, UNIT, needs_judge=True),
    _m("slot_judge_avg", "summary", True, UNIT, needs_judge=True, compare="slot_judge"),
)
