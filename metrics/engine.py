"""Run planning and suite dispatch (pure; the judge is injected).

A run is split into chunks of whole sessions (byte ranges of the upload), so
a worker reads only its own lines. Progress is counted in response units,
(session, round, method) triples, the same unit for every suite.
"""

from __future__ import annotations

from collections.abc import Callable

from metrics import alignment, stats
from metrics.catalog import SUITE_MODULES

DEFAULT_CHUNK_UNITS = 160


def units(session: dict, methods: list[str]) -> int:
    return len(session["rounds"]) * len(methods)


def plan_chunks(
    spans: list[tuple[int, int, int]], chunk_units: int = DEFAULT_CHUNK_UNITS
):
    """Group consecutive session spans ``(start, end, units)`` into chunks.

    >>> plan_chunks([(0, 10, 50), (10, 20, 50), (20, 30, 50), (30, 35, 50)], 100)
    [(0, 20, 100), (20, 35, 100)]
    """
    chunks, start, end, total = [], None, 0, 0
    for span_start, span_end, span_units in spans:
        if start is None:
            start = span_start
        end, total = span_end, total + span_units
        if total >= chunk_units:
            chunks.append((start, end, total))
            start, total = None, 0
    if start is not None:
        chunks.append((start, end, total))
    return chunks


def run_alignment(
    sessions: list[dict], methods: list[str], judge, options: dict
) -> list[dict]:
    """All judge calls of the chunk go out as one batch, so the judge's
    concurrency is filled by the whole chunk rather than one round at a time."""
    rows, plan, batch = [], [], []
    samples = int(options.get("samples", 1))
    for session in sessions:
        for index, round_ in enumerate(session["rounds"]):
            for method in methods:
                key = {
                    "session_id": session["session_id"],
                    "round": round_["round"],
                    "method": method,
                }
                if judge is None:
                    rows += alignment.not_configured_rows(key)
                    continue
                for mode, items in alignment.judge_items(
                    session, method, index, samples
                ).items():
                    plan.append((key, mode, len(items)))
                    batch += items
    outcomes = judge.evaluate(batch) if batch else []
    position = 0
    for key, mode, count in plan:
        rows += alignment.rows_from_outcomes(
            key, mode, outcomes[position : position + count]
        )
        position += count
    return rows


RUNNERS: dict[str, Callable] = {"alignment": run_alignment}
SUMMARIZERS: dict[str, Callable] = {"alignment": alignment.summarize}
for _name, _module in SUITE_MODULES.items():
    RUNNERS[_name] = _module.run
    SUMMARIZERS[_name] = _module.summarize


def evaluate(
    sessions: list[dict], suites: list[str], methods: list[str], judge, options: dict
):
    rows = []
    for suite in suites:
        rows += RUNNERS[suite](sessions, methods, judge, options)
    return rows


def aggregate(rows: list[dict], suites: list[str], methods: list[str]) -> dict:
    """Summary, curves and comparisons of a finished run (scored rows only)."""
    summary = {method: {} for method in methods}
    curves, session_values, panels = {}, {}, {}
    for suite in suites:
        result = SUMMARIZERS[suite](rows, methods)
        for method, values in result["summary"].items():
            summary.setdefault(method, {}).update(values)
        curves.update(result.get("curves", {}))
        session_values.update(result.get("session_values", {}))
        panels.update(result.get("panels", {}))
    return {
        "summary": summary,
        "curves": curves,
        "comparisons": stats.compare_all(session_values, methods),
        "panels": panels,
    }
