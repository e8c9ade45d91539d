"""The dashboard's view model, built from stored aggregates and one page of
rows: the page cost does not grow with the number of rows in a run."""

from __future__ import annotations

from metrics import registry
from metrics.counts import count_key
from metrics.notes import translate
from metrics.registry import spec
from metrics.results import judge_usage
from translations import _, metric_label
from web import panels
from web.audit import audit_rows
from web.formatting import display_key, p_value
from web.paper_methods import methods_paragraph
from web.plotly_locale import plotly_locale

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


def best_methods(
    summary: dict, methods: list[str], metric_id: str, percent: bool = False
) -> set[str]:
    """Methods holding the best value of a ranked summary metric, compared as
    shown on the page; none when every method shows the same value (a tie
    for everyone is no "best").

    >>> best_methods({"A": {"nvcs_avg": 0.5}, "B": {"nvcs_avg": 0.5}}, ["A", "B"], "nvcs_avg")
    set()
    """
    metric = spec(metric_id)
    if metric is None or not metric.ranked:
        return set()
    present = {
        m: summary.get(m, {}).get(metric_id)
        for m in methods
        if summary.get(m, {}).get(metric_id) is not None
    }
    shown = {m: display_key(metric_id, v, percent) for m, v in present.items()}
    if len(set(shown.values())) < 2:
        return set()
    best = max(present.values()) if metric.higher_is_better else min(present.values())
    best_shown = display_key(metric_id, best, percent)
    return {m for m in present if shown[m] == best_shown}


SIGNED = ("diff", "ci_low", "ci_high", "effect_size", "welch_t", "cohens_d")


def versus_baseline(comparisons: list[dict], metric: str, baseline: str, method: str):
    """The comparison of ``method`` against ``baseline``, oriented method −
    baseline (every difference and effect size flips sign together)."""
    for comparison in comparisons:
        if comparison["metric"] != metric:
            continue
        if (comparison["a"], comparison["b"]) == (method, baseline):
            return comparison
        if (comparison["a"], comparison["b"]) == (baseline, method):
            flipped = {**comparison, "a": method, "b": baseline}
            for key in SIGNED:
                value = comparison.get(key)
                flipped[key] = None if value is None else -value
            flipped["ci_low"], flipped["ci_high"] = (
                flipped["ci_high"],
                flipped["ci_low"],
            )
            return flipped
    return None


def comparison_table(run, baseline: str, suite: str, percent: bool = False) -> dict:
    """Methods x the suite's summary metrics that are table columns (the
    charts show the others, e.g. radar dimensions and CI ends)."""
    aggregates = run.aggregates or {}
    summary = aggregates.get("summary", {})
    said = aggregates.get("summary_notes") or {}  # why a value is null
    comparisons = aggregates.get("comparisons", [])
    columns = [m for m in registry.get(suite).summary_metrics() if m.in_table]
    best = {m.id: best_methods(summary, run.methods, m.id, percent) for m in columns}
    rows = []
    for method in run.methods:
        values = summary.get(method, {})
        cells = []
        for metric in columns:
            versus = None
            if metric.compare and method != baseline:
                versus = versus_baseline(comparisons, metric.compare, baseline, method)
            cells.append(
                {
                    "metric": metric,
                    "value": values.get(metric.id),
                    "n": values.get(count_key(metric.id)),
                    "best": method in best[metric.id],
                    "versus": versus,
                    "mark": significance(versus["p_holm"]) if versus else "",
                    "note": _note(said.get(method, {}).get(metric.id)),
                }
            )
        rows.append(
            {"method": method, "cells": cells, "is_baseline": method == baseline}
        )
    return {"suite": suite, "columns": columns, "rows": rows}


def _note(found: dict | None) -> str | None:
    return translate(found["code"], found.get("params"), None) if found else None


def value_title(cell: dict) -> str:
    """What a summary value is and how many sessions stand behind it."""
    metric, n = cell["metric"], cell["n"]
    basis = str(metric.basis) if metric.basis else _("mean over sessions")
    if n is None:
        return basis
    return _("%(basis)s; %(n)s sessions", basis=basis, n=n)


def delta_title(cell: dict, method: str, baseline: str) -> str:
    """The basis of the Δ beside a value, and its test."""
    versus, metric = cell["versus"], cell["metric"]
    source = metric_label(metric.compare)
    text = _(
        "Δ = mean over the %(n)s sessions both methods scored of the "
        "per-session difference %(method)s − %(baseline)s in %(source)s, "
        "with a 95%% paired bootstrap interval.",
        n=versus["n"],
        method=method,
        baseline=baseline,
        source=source,
    )
    if metric.basis:
        text += " " + _(
            "The value shown is a %(basis)s, so Δ can differ from the "
            "difference of the values.",
            basis=str(metric.basis),
        )
    if versus.get("p_holm") is not None:
        text += " " + _(
            "Wilcoxon p = %(p)s, Holm-adjusted within %(metric)s: %(p_holm)s.",
            p=p_value(versus["p_value"]),
            metric=source,
            p_holm=p_value(versus["p_holm"]),
        )
    return text


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


ROW_COLUMNS = ("session_id", "round", "method", "metric", "value", "status")


def _row_count(storage, run, filters: dict) -> int:
    """Rows the table pages through. Unfiltered, a finished run's stored
    status counts say it (a COUNT over millions of rows on every view);
    by status alone, too."""
    stored = (run.aggregates or {}).get("status_counts")
    if stored is not None and not (filters["method"] or filters["metric"]):
        status = filters["status"]
        return stored.get(status, 0) if status else sum(stored.values())
    return storage.count_filtered_rows(run.id, filters)


def rows_section(storage, run, args) -> dict:
    """One page of the rows table, filtered and sorted on the server (a run
    can hold millions of rows)."""
    filters = {name: args.get(name) or None for name in ("method", "metric", "status")}
    sort = args.get("sort") if args.get("sort") in ROW_COLUMNS else None
    descending = args.get("dir") == "desc"
    paging = paged(
        _row_count(storage, run, filters),
        page_number(args.get("page")),
        PAGE_SIZE,
    )
    order = (sort, descending) if sort else None
    rows = storage.rows_page(run.id, filters, paging["offset"], PAGE_SIZE, order)
    return {
        "rows": rows,
        "filters": filters,
        "sort": sort,
        "descending": descending,
        **paging,
    }


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


def results_context(run, args) -> dict:
    """Panels, their figures and the comparison tables against the baseline
    the query names: the dashboard's, and the comparison across runs'."""
    known = set(registry.names())
    suites = [name for name in run.suites if name in known]
    baseline = args.get("baseline")
    if baseline not in run.methods:
        baseline = run.methods[0]
    percent = args.get("rates") == "percent"
    sections = panels.build(run)
    all_figures = {}
    for section in sections:
        all_figures.update(section["figures"])
    return {
        "run": run,
        "panels": sections,
        "baseline": baseline,
        "percent": percent,
        "tables": [comparison_table(run, baseline, suite, percent) for suite in suites],
        "figures": all_figures,
        "plotly_locale": plotly_locale(),
    }


def context(storage, run, args) -> dict:
    known = set(registry.names())
    suites = [name for name in run.suites if name in known]
    used = judge_usage(run, storage.judge_usage(run.id))
    return {
        **results_context(run, args),
        "counts": storage.run_status_counts(run),
        "judge_usage": used,
        "methods_paragraph": methods_paragraph(run, used),
        "audit": audit_rows(run),
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
