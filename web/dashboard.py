"""The dashboard's view model, built from stored aggregates and one page of
rows: the page cost does not grow with the number of rows in a run."""

from __future__ import annotations

import charts
from metrics.catalog import METRICS, spec, summary_metrics
from metrics.registry import SUITES
from translations import _, metric_label
from web import panels

PAGE_SIZE = 50
SESSION_PAGE_SIZE = 25
DIMENSIONS = ("style", "content", "naturalness", "personalization", "conversation")


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
    """Methods x the suite's summary metrics (radar dimensions left to the radar)."""
    aggregates = run.aggregates or {}
    summary = aggregates.get("summary", {})
    comparisons = aggregates.get("comparisons", [])
    radar = tuple(f"{d}_avg" for d in DIMENSIONS)
    hidden = (*radar, "_ci_low", "_ci_high")  # the charts show these
    columns = [m for m in summary_metrics(suite) if not m.id.endswith(hidden)]
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


def figures(run) -> dict:
    aggregates = run.aggregates or {}
    curves = aggregates.get("curves", {})
    summary = aggregates.get("summary", {})
    round_label = _("Round k")
    built = {
        "al_curve": charts.curve_figure(
            curves.get("al", {}),
            run.methods,
            {
                "title": _("AL(k): alignment by round (95% CI)"),
                "x": round_label,
                "y": metric_label("al"),
                "range": [0, 100],
            },
        ),
        "nal_curve": charts.curve_figure(
            curves.get("nal", {}),
            run.methods,
            {
                "title": _("N-AL(k): normalized alignment by round"),
                "x": round_label,
                "y": metric_label("nal"),
                "range": [-0.05, 1.05],
            },
        ),
        "radar": charts.radar_figure(
            summary,
            run.methods,
            [(f"al_{d}_avg", metric_label(f"al_{d}")) for d in DIMENSIONS],
            _("Scoring dimensions (0–20)"),
        ),
    }
    return {name: figure for name, figure in built.items() if figure}


def page_number(raw: str | None) -> int:
    return int(raw) if raw and raw.isdigit() and int(raw) > 0 else 1


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
    baseline = args.get("baseline")
    if baseline not in run.methods:
        baseline = run.methods[0]
    sections = panels.build(run)
    all_figures = figures(run)
    for section in sections:
        all_figures.update(section["figures"])
    return {
        "run": run,
        "panels": sections,
        "counts": storage.run_status_counts(run),
        "baseline": baseline,
        "tables": [comparison_table(run, baseline, suite) for suite in run.suites],
        "figures": all_figures,
        "rows": rows_section(storage, run, args),
        "sessions": sessions_section(storage, run, args),
        "suites": [SUITES[name] for name in run.suites],
        "metric_ids": sorted(
            {
                m
                for m in METRICS
                if METRICS[m].level == "row" and METRICS[m].suite in run.suites
            }
        ),
    }
