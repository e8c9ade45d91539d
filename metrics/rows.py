"""The tidy result row every suite emits (one shape, one place), and the
per-session means that comparisons are made of.

>>> key = {"session_id": "s", "round": 1, "method": "M"}
>>> result_row(key, "nvcs", 0.5)["status"]
'ok'
>>> result_row({**key, "round": None}, "ora", None)["status"]
'unscored'
>>> result_row(key, "ertd", None, note=notes.note("no_latency"))["status"]
'not_applicable'
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from statistics import fmean
from typing import Any, NamedTuple, TypedDict

from core.status import RowStatus
from metrics import columns, notes, row_source, stats
from metrics.notes import Note


class RowKey(TypedDict, total=False):
    """Which reply (or session) a row is about: the start of a ResultRow."""

    session_id: str
    round: int | None  # None: a session-level row
    method: str
    sample: int
    judge: str


class ResultRow(TypedDict, total=False):
    session_id: str
    round: int | None  # None: a session-level row
    method: str
    metric: str
    value: float | None
    status: str  # a RowStatus
    note: str | None
    detail: dict[str, Any] | None  # JSON-ready; shown in the drill-down
    sample: int
    note_code: str | None  # metrics/notes.py: translated when shown
    note_params: dict[str, object] | None
    judge: str  # the judge model that made the row ("" when none did)


def result_row(
    key: RowKey,
    metric: str,
    value: float | None,
    status: str | None = None,
    note: Note | None = None,
    detail: dict[str, Any] | None = None,
) -> ResultRow:
    """``key`` holds session_id, round (None = session level) and method.
    Without a value the status comes from the note (``not_applicable``,
    ``unscored``, ...), else defaults to ``unscored``, so a missing number is
    never mistaken for a score. A :class:`~metrics.notes.Note` is stored as
    English text plus its code and parameters (translated when shown)."""
    if value is not None and not math.isfinite(value):
        # Strict JSON out, and no number a reader could mistake for a score.
        value, status, note = None, RowStatus.ERROR, notes.note("non_finite")
    if status is None:
        implied = note.status if note else None
        status = RowStatus.OK if value is not None else implied or RowStatus.UNSCORED
    row: ResultRow = {
        **key,
        "metric": metric,
        "value": value,
        "status": status,
        "note": note.english if note else None,
        "detail": detail,
        "note_code": note.code if note else None,
        "note_params": (note.params or None) if note else None,
    }
    return row


def finite_json(value: object) -> Any:
    """``value`` with every non-finite float made ``None`` (strict JSON: no
    ``NaN``/``Infinity``; an undefined statistic is null).

    >>> finite_json({"a": [1.5, float("nan")], "b": float("inf")})
    {'a': [1.5, None], 'b': None}
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: finite_json(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [finite_json(item) for item in value]
    return value


def scored(row: ResultRow) -> bool:
    """Only ``ok`` rows with a value enter an aggregate."""
    return row["status"] == RowStatus.OK and row["value"] is not None


def scored_value(row: ResultRow) -> float:
    """The value of a row :func:`scored` admitted (so never None).

    >>> scored_value({"status": "ok", "value": 0.5})
    0.5
    """
    value = row["value"]
    if value is None:
        raise ValueError("an unscored row has no value to aggregate")
    return value


def session_means(
    rows: columns.Rows | row_source.RowSource,
    metric: str,
    methods: Iterable[str] | None = None,
) -> dict[str, dict[str, float]]:
    """``{method: {session_id: mean of the scored rows}}`` of one metric: the
    unit of comparison (rounds of one session are correlated). Methods and
    sessions in the order their first scored row arrived; ``rows`` may be a
    :class:`~metrics.columns.RowColumns`.

    >>> rows = [{"metric": "nvcs", "status": "ok", "method": "M",
    ...          "session_id": "s", "value": v} for v in (0.2, 0.4)]
    >>> session_means(rows, "nvcs")
    {'M': {'s': 0.3...}}
    """
    if isinstance(rows, row_source.RowSource) and isinstance(metric, str) and methods:
        per: dict[str, dict[str, float]] = {}  # streamed: one session at a time
        for method, session, values, _ in row_source.groups(rows, metric, "session"):
            per.setdefault(method, {})[session] = fmean(values)
        return {m: per[m] for m in methods if m in per}
    ids = [metric] if isinstance(metric, str) else list(metric)
    return row_source.part(rows, ids).session_means(ids, methods)


class SessionSummary(NamedTuple):
    # metric -> method -> session -> mean (the paired tests' input)
    values: dict[str, dict[str, dict[str, float]]]
    # method -> metric -> {"mean", "n", "ci_low", "ci_high"}
    intervals: dict[str, dict[str, dict[str, Any]]]
    # method -> "<metric>_avg" -> mean over sessions
    summary: dict[str, dict[str, float | None]]


def session_summary(
    rows: columns.Rows | row_source.RowSource,
    metrics: Iterable[str],
    methods: list[str],
    streamed: bool = True,
) -> SessionSummary:
    """What most suites report: each metric's mean over sessions (the
    independent unit) of its per-session means, with a t-interval
    (:func:`metrics.stats.mean_ci`). ``streamed`` passes ``methods`` to
    :func:`session_means` (one session at a time from a RowSource).

    >>> rows = [{"metric": "m", "status": "ok", "method": "A", "session_id": s,
    ...          "value": v} for s, v in (("s1", 1.0), ("s1", 3.0), ("s2", 4.0))]
    >>> found = session_summary(rows, ["m"], ["A", "B"])
    >>> found.values["m"], found.summary
    ({'A': {'s1': 2.0, 's2': 4.0}}, {'A': {'m_avg': 3.0}, 'B': {'m_avg': None}})
    >>> found.intervals["A"]["m"]["n"]
    2
    """
    metrics = list(metrics)
    values = {
        metric: session_means(rows, metric, methods if streamed else None)
        for metric in metrics
    }
    intervals = {
        method: {
            m: stats.mean_ci(list(values[m].get(method, {}).values())) for m in metrics
        }
        for method in methods
    }
    summary = {
        method: {f"{m}_avg": found["mean"] for m, found in intervals[method].items()}
        for method in methods
    }
    return SessionSummary(values, intervals, summary)
