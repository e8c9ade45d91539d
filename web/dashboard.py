"""The dashboard's view model, built from stored aggregates and one page of
rows: the page cost does not grow with the number of rows in a run."""

from __future__ import annotations

from metrics import registry
from metrics.registry import spec
from web import panels

PAGE_SIZE = 50
SESSION_PAGE_SIZE = 25


def significance(p_value: float | None) -> str:
    """Holm-adjusted p to the usual marks.

    >>> [significance(p) for p in (0.0004, 0.004, 0.04, 0.4, None)]
    ['***', '**', '*', '', '']
    """
    if p_value is None:
        return ""
    for bound, mark in ((0.001, "***"), (0.01, "**"), (0.05, "*")):
        if p_value < bound:
            return mark
    return ""


def best_methods(summary: dict, methods: list[str], metric_id: str) -> set[str]:
    """Methods holding the best value of a ranked summary metric (ties kept)."""
    metric = spec(metric_id)
    values = {m: summary.get(m, {}).get(metric_id) for m in methods}
    present = {m: v for m, v in values.items() if v is not None}
    if metric is None or not metric.ranked or len(present) < 2:
        return set()
    best = max(present.values()) if metric.higher_is_better else min(present.values())
    return {m for m, v in present.items() if v == best}


def versus_baseline(comparisons: list[dict], metric: str, baseline: str, method: str):
    """The comparison of ``method`` against ``baseline``, oriented method − baseline."""
    for comparison in comparisons:
        if comparison["metric"] != metric:
            continue
        if (comparison["a"], comparison["b"]) == (method, baseline):
            return comparison
        if (comparison["a"], comparison["b"]) == (baseline, method):
            flipped = {**comparison, "a": method, "b": baseline}
            for key in ("diff", "ci_low", "ci_high", "effect_size"):
                flipped[key] = None if comparison[key] is None else -comparison[key]
            flipped["ci_low"], flipped["ci_high"] = (
                flipped["ci_high"],
                flipped["ci_low"],
            )
            return flipped
    return None


def comparison_table(run, baseline: str, suite: str) -> dict:
    """Methods x the suite's summary metrics that are table columns (the
    charts show the others, e.g. radar dimensions and CI ends)."""
    aggregates = run.aggregates or {}
    summary = aggregates.get("summary", {})
    comparisons = aggregates.get("comparisons", [])
    columns = [m for m in registry.get(suite).summary_metrics() if m.in_table]
    rows = []
    for method in run.methods:
        cells = [
            _cell(summary, comparisons, run.methods, baseline, method, m)
            for m in columns
        ]
        rows.append(
            {"method": method, "cells": cells, "is_baseline": method == baseline}
        )
    return {"suite": suite, "columns": columns, "rows": rows}


def _cell(summary, comparisons, methods, baseline, method, metric) -> dict:
    versus = None
    if metric.compare and method != baseline:
        versus = versus_baseline(comparisons, metric.compare, baseline, method)
    return {
        "value": summary.get(method, {}).get(metric.id),
        "best": method in best_methods(summary, methods, metric.id),
        "versus": versus,
        "mark": significance(versus["p_holm"]) if versus else "",
    }


def page_number(raw: str | None) -> int:
    """A page from the query string; anything else is page 1.

    >>> page_number("3"), page_number("²"), page_number("-1"), page_number(None)
    (3, 1, 1, 1)
    """
    if not raw or not (raw.isascii() and raw.isdecimal()):
        return 1
    return max(1, min(int(raw), 10**9))


def paged(total: int, page: int, size: int) -> dict:
    pages = max(1, -(-total // size))
    page = min(page, pages)
    return {
        "page": page,
        "pages": pages,
        "total": total,
        "offset": (page - 1) * size,
        "size": size,
    }


def rows_section(storage, run, args) -> dict:
    filters = {name: args.get(name) or None for name in ("method", "metric", "status")}
    paging = paged(
        storage.count_filtered_rows(run.id, filters),
        page_number(args.get("page")),
        PAGE_SIZE,
    )
    rows = storage.rows_page(run.id, filters, paging["offset"], PAGE_SIZE)
    return {"rows": rows, "filters": filters, **paging}


def sessions_section(storage, run, args) -> dict:
    paging = paged(
        storage.count_sessions(run.id),
        page_number(args.get("spage")),
        SESSION_PAGE_SIZE,
    )
    return {
        "ids": storage.sessions_page(run.id, paging["offset"], SESSION_PAGE_SIZE),
        **paging,
    }


def context(storage, run, args) -> dict:
    known = set(registry.names())
    suites = [name for name in run.suites if name in known]
    baseline = args.get("baseline")
    if baseline not in run.methods:
        baseline = run.methods[0]
    sections = panels.build(run)
    all_figures = {}
    for section in sections:
        all_figures.update(section["figures"])
    return {
        "run": run,
        "panels": sections,
        "counts": storage.run_status_counts(run),
        "baseline": baseline,
        "tables": [comparison_table(run, baseline, suite) for suite in suites],
        "figures": all_figures,
        "rows": rows_section(storage, run, args),
        "sessions": sessions_section(storage, run, args),
        "suites": [registry.get(name) for name in suites],
        "metric_ids": sorted(
            m.id
            for name in suites
            for m in registry.get(name).metrics
            if m.level in ("row", "session")
        ),
    }
