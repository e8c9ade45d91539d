"""The slots suite's summary: micro-averaged P/R/F1 and exact rate, token
P/R/F1 and BLEU-1, per-topic counts and latency statistics, each from the
summed counts of all scored sessions (``docs/metrics/slots.md``)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping
from statistics import fmean, median
from typing import Any

from metrics import row_source
from metrics.columns import RowColumns
from metrics.rows import session_means
from metrics.suite import (
    SuiteSummary,
    SummaryRows,
)
from metrics.suites.slots import judge as slot_judge
from metrics.suites.slots.matching import (
    f1,
    percentile,
    prf,
)

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
UNIT, COUNT = (0.0, 1.0), (0.0, None)
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


# -- summary ---------------------------------------------------------------
SESSION_VALUES = ("slot_f1", "latency")


def _ours(metric: str) -> bool:
    return (
        metric in COUNTS or metric in SESSION_VALUES or metric.startswith(TOPIC_COUNTS)
    )


class _Sums(dict[str, float]):
    """Summed session counts (floats, as stored), 0 when absent: a Counter
    whose values may be floats (``collections.Counter`` is typed for ints)."""

    def __missing__(self, key: str) -> float:
        return 0


def _collect(
    rows: RowColumns,
) -> tuple[dict[str, _Sums], dict[str, dict[str, dict[str, float]]]]:
    """Counts summed per method, one by one in the order the rows arrived
    (a running sum: the same float as adding them in a loop), and the
    session values of ``slot_f1`` and ``latency``: a session with several
    rows (a panel's judges) has their mean, so no judge's row stands for the
    panel and the arrival order of rows changes nothing."""
    import numpy as np

    totals: dict[str, _Sums] = defaultdict(_Sums)  # method -> metric -> summed count
    names = rows.names["metric"].names
    counted = rows.groups(
        rows.where([m for m in names if _ours(m) and m not in SESSION_VALUES]),
        ("method", "metric"),
    )
    values = rows.col("value")[counted.rows]
    firsts = counted.rows[[start for start, _ in counted.bounds]]
    keys = zip(
        rows.strings("method", firsts), rows.strings("metric", firsts), strict=True
    )
    for (start, end), (method, metric) in zip(counted.bounds, keys, strict=True):
        # from 0, as ``_Sums`` starts (0 + -0.0 is 0.0)
        totals[method][metric] = float(np.cumsum(np.r_[0.0, values[start:end]])[-1])
    # metric -> method -> sid -> value
    seen: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    index = rows.where(SESSION_VALUES)
    for method, metric, session, value in zip(
        rows.strings("method", index),
        rows.strings("metric", index),
        rows.strings("session", index),
        rows.values(index),
        strict=True,
    ):
        seen[metric, method, session].append(value)
    per_session: dict[str, dict[str, dict[str, float]]] = defaultdict(
        lambda: defaultdict(dict)
    )
    for (metric, method, session), values in seen.items():
        per_session[metric][method][session] = fmean(values)
    return totals, per_session


def slot_summary(counts: Mapping[str, float]) -> dict[str, float | None]:
    """Micro-averaged slot, token and BLEU-1 metrics from summed session counts.

    >>> from collections import Counter
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


def topic_summary(counts: Mapping[str, float]) -> dict[str, tuple[float, float, float]]:
    """``{topic: (precision, recall, f1)}`` from summed ``slot_<o>@<topic>``."""
    topics = sorted({m.partition("@")[2] for m in counts if m.startswith(TOPIC_COUNTS)})
    return {t: prf(*(counts[f"slot_{o}@{t}"] for o in OUTCOMES)) for t in topics}


def latency_summary(values: list[float]) -> dict[str, float | None]:
    """Mean, median, P95 (linear interpolation, as numpy) and total of
    session latencies.

    >>> latency_summary([float(v) for v in range(1, 21)])["latency_p95"]
    19.05
    >>> latency_summary([])["latency_mean"] is None
    True
    """
    if not values:
        return dict.fromkeys(LATENCY_IDS)
    ordered = sorted(values)
    return {
        "latency_mean": fmean(ordered),
        "latency_median": median(ordered),
        "latency_p95": percentile(ordered, 0.95),
        "latency_total": math.fsum(ordered),
    }


def summarize(rows: SummaryRows, methods: list[str]) -> SuiteSummary:
    """Summary per method, session values for comparisons and dashboard panels."""
    rows = row_source.all_rows(rows)
    totals, per_session = _collect(rows)
    summary: dict[str, dict[str, float | None]] = {}
    topic_f1: dict[str, dict[str, float]] = {}
    latencies = {  # by session id, whatever order the rows came in
        m: [by[s] for s in sorted(by)]
        for m in methods
        for by in [per_session["latency"][m]]
    }
    for method in methods:
        counts = totals.get(method, _Sums())
        has_counts = "slot_tp" in counts
        summary[method] = (
            slot_summary(counts) if has_counts else dict.fromkeys(SLOT_IDS)
        )
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
    judged = session_values["slot_judge"] = session_means(rows, "slot_judge", methods)
    for method, judge_summary in slot_judge.summary(judged, methods).items():
        summary[method].update(judge_summary)
    return {
        "summary": summary,
        "session_values": session_values,
        "value_parts": {"slot_f1": _f1_parts(rows, methods)},
        "panel": panel,
    }


def _f1_parts(rows: RowColumns, methods: list[str]) -> dict[str, Any]:
    """Micro F1 = 2·TP / (2·TP + FP + FN): per method and session its
    numerator and denominator (``metrics/basis.py``), from the session's
    slot counts, summed over its rows (a panel's judges pooled, as the
    method's totals pool them)."""
    index = rows.where(["slot_tp", "slot_fp", "slot_fn"])
    counts: dict[tuple[str, str], dict[str, float]] = {}
    for method, metric, session, value in zip(
        rows.strings("method", index),
        rows.strings("metric", index),
        rows.strings("session", index),
        rows.values(index),
        strict=True,
    ):
        own = counts.setdefault((method, session), {})
        own[metric] = own.get(metric, 0.0) + value
    found: dict[str, dict[str, Any]] = {}
    for (method, session), c in counts.items():
        if method in methods:
            tp, fp, fn = (c.get(f"slot_{o}", 0.0) for o in OUTCOMES)
            found.setdefault(method, {})[session] = {None: (2 * tp, 2 * tp + fp + fn)}
    return found
