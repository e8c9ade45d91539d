"""The dashboard's view model, built from stored aggregates and one page of
rows: the page cost does not grow with the number of rows in a run."""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from core import usage
from metrics import basis, registry
from metrics.results import judge_models, judge_usage, missing_replies, not_asked
from pipeline.service.run_spec import RunSpec
from reports import tables
from reports.paper_methods import methods_paragraph
from reports.paper_text import has_cjk
from web import extensions
from web.presentation import cancelled, panels
from web.presentation.audit import (
    audit_rows,
    card_view,
    in_order,
    self_preference_lines,
)
from web.presentation.judge_tables import judge_tables
from web.presentation.paging import page_number, paged
from web.presentation.plotly_locale import plotly_locale

if TYPE_CHECKING:
    from reports import Reported
    from store import StorageLike
    from store.models import Run

PAGE_SIZE = 50
SESSION_PAGE_SIZE = 25


ROW_COLUMNS = ("session_id", "round", "method", "metric", "judge", "value", "status")
ROW_FILTERS = ("method", "metric", "status", "judge")


def _row_count(storage: StorageLike, run: Run, filters: dict[str, Any]) -> int:
    """Rows the table pages through. Unfiltered, a finished run's stored
    status counts say it (a COUNT over millions of rows on every view);
    by status alone, too."""
    stored = (run.aggregates or {}).get("status_counts")
    ranged = filters["value_min"] is not None or filters["value_max"] is not None
    if stored is not None and not (
        filters["method"] or filters["metric"] or filters["judge"] or ranged
    ):
        status = filters["status"]
        counts: dict[str, int] = stored
        return counts.get(status, 0) if status else sum(counts.values())
    return storage.rows.count_filtered_rows(run.id, filters)


def finite_number(raw: str | None) -> float | None:
    """A bound typed in a filter box; None when empty or not a finite number.

    >>> finite_number("0.5"), finite_number(" 70 "), finite_number("nan"), finite_number("x")
    (0.5, 70.0, None, None)
    """
    try:
        value = float((raw or "").strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def rows_section(
    storage: StorageLike, run: Run, args: Mapping[str, str]
) -> dict[str, Any]:
    """One page of the rows table, filtered and sorted on the server (a run
    can hold millions of rows)."""
    filters: dict[str, Any] = {name: args.get(name) or None for name in ROW_FILTERS}
    for bound in ("value_min", "value_max"):
        filters[bound] = finite_number(args.get(bound))
    sort = args.get("sort") if args.get("sort") in ROW_COLUMNS else None
    descending = args.get("dir") == "desc"
    paging = paged(
        _row_count(storage, run, filters),
        page_number(args.get("page")),
        PAGE_SIZE,
    )
    order = (sort, descending) if sort else None
    rows = storage.rows.rows_page(run.id, filters, paging["offset"], PAGE_SIZE, order)
    return {
        "rows": rows,
        # why the table is empty (a cancelled run: before which rows)
        "empty": None if paging["total"] else cancelled.rows_empty(run, filters),
        "filters": filters,
        "sort": sort,
        "descending": descending,
        **paging,
    }


def sessions_section(
    storage: StorageLike, run: Run, args: Mapping[str, str]
) -> dict[str, Any]:
    paging = paged(
        storage.chunks.count_sessions(run.id),
        page_number(args.get("spage")),
        SESSION_PAGE_SIZE,
    )
    return {
        "ids": storage.chunks.sessions_page(
            run.id, paging["offset"], SESSION_PAGE_SIZE
        ),
        **paging,
    }


def holm_of(args: Mapping[str, str]) -> str:
    """The Holm family of the tables' marks, ``?holm=`` (the views refuse
    other values with a 400; here they read as the default)."""
    holm = args.get("holm")
    return holm if holm in basis.HOLM_FAMILIES else "metric"


def results_context(run: Reported, args: Mapping[str, str]) -> dict[str, Any]:
    """Panels, their figures and the comparison tables against the baseline
    the query names: the dashboard's, and the comparison across runs'."""
    known = set(registry.names())
    suites = [name for name in run.suites if name in known]
    baseline = args.get("baseline")
    if baseline not in run.methods:
        baseline = run.methods[0]
    percent = args.get("rates") == "percent"
    holm = holm_of(args)
    sections = panels.build(run)
    all_figures: dict[str, dict[str, Any]] = {}
    for section in sections:
        all_figures.update(section["figures"])
    return {
        "run": run,
        # a LaTeX export with CJK text through CJKutf8 is offered too
        "latex_cjk": has_cjk(run.methods),
        "panels": sections,
        "baseline": baseline,
        "percent": percent,
        "holm": holm,
        "holm_link": None if holm == "metric" else holm,  # exports keep it
        "tables": [
            tables.comparison_table(run, baseline, suite, percent, holm)
            for suite in suites
        ],
        "figures": all_figures,
        "plotly_locale": plotly_locale(),
    }


def provisional_context(run: Run, args: Mapping[str, str]) -> dict[str, Any]:
    """The charts and tables of a run still evaluated, from the aggregates
    of the sessions stored so far (``runs.interim``); {} before there are
    any. ``provisional`` says how many sessions they cover."""
    if not run.interim or "summary" not in run.interim:  # summary steps only
        return {"provisional": None}
    so_far = SimpleNamespace(
        id=run.id,
        token=run.token,
        status=run.status,
        methods=run.methods,
        suites=run.suites,
        judge=run.judge,
        finished_at=None,
        aggregates=run.interim,
    )
    shown = results_context(so_far, args)
    del shown["run"]  # the page's run is the real one
    return {**shown, "provisional": provisional_summary(run)}


def provisional_summary(run: Run) -> dict[str, Any] | None:
    """How many sessions a run's interim results cover, and when they were
    computed; None before there are any."""
    if not run.interim or "summary" not in run.interim:
        return None
    return {
        "sessions": run.interim.get("sessions_scored") or 0,
        "of_sessions": run.sessions,
        "computed_at": run.interim_at,
    }


def panel_judges(run: Run) -> list[str]:
    """The judges of a panel run (each scores every item: its rows, its
    scores and its reasoning are shown under its name); [] for one judge."""
    models = judge_models(run.judge)
    return models if len(models) > 1 else []


def annotations_context(storage: StorageLike, run: Run) -> dict[str, Any]:
    """The run's annotation queue, its label count and the judge against
    the labels (``pipeline/service/annotations.py``)."""
    queue = storage.annotations.queue_of_run(run.id)
    if queue is None:
        return {
            "queue": None,
            "queue_labels": 0,
            "human": None,
            "pending": False,
            "agreement_failed": None,
            "annotator_links": [],
        }
    return {
        "queue": queue,
        "queue_labels": len(storage.annotations.labels_of(queue.id)),
        # stored by a worker when labels change: the page never waits for it
        **_methods_in_order(
            extensions.annotation_service().shown_agreement(queue), run
        ),
        # shown on the manage link only (templates/_annotations.html)
        "annotator_links": storage.annotations.annotator_links(queue.id),
    }


def _methods_in_order(shown: dict[str, Any], run: Run) -> dict[str, Any]:
    """The human-agreement card lists the methods in the file's order (its
    stored dict's keys come back sorted, or by length on PostgreSQL)."""
    human = shown.get("human")
    if not human or not isinstance(human.get("methods"), dict):
        return shown
    methods = human["methods"]
    ordered = {m: methods[m] for m in in_order(methods, list(run.methods or []))}
    return {**shown, "human": {**human, "methods": ordered}}


def shown_version(storage: StorageLike, run: Run) -> tuple[object, ...]:
    """What a finished run's dashboard shows changes with: its results (a
    finalize sets ``finished_at``; a cancelled run's summary comes after its
    status), its name, tags and comment, and its human labels' agreement."""
    named = (
        str(run.finished_at),
        run.status,
        bool(run.aggregates),
        run.name,
        tuple(run.tags or ()),
        run.comment,
    )
    queue = storage.annotations.queue_of_run(run.id)
    if queue is None:
        return named
    labels = storage.annotations.labels_key(queue.id)
    return (*named, queue.id, queue.agreement_key, labels)


def _retried(storage: StorageLike, run: Run) -> Run | None:
    """The run this one retried, if it still exists (its view link)."""
    return storage.runs.get_run(run.retry_of) if run.retry_of else None


def context(storage: StorageLike, run: Run, args: Mapping[str, str]) -> dict[str, Any]:
    known = set(registry.names())
    suites = [name for name in run.suites if name in known]
    used = judge_usage(run, storage.progress.judge_usage(run.id))
    return {
        **results_context(run, args),
        "counts": (counts := storage.rows.run_status_counts(run)),
        "missing_replies": missing_replies(counts, run.suites),
        # what the protocol never asks: shown apart from "not applicable"
        "not_asked": not_asked(run.aggregates),
        "judge_usage": used,
        "spent": usage.totals(used),
        # what a cancelled run's stored rows cover (None: any other run)
        "cover": cancelled.stored_cover(run),
        "kept_in_cache": RunSpec.of(run).judge.use_cache,
        "methods_paragraph": methods_paragraph(run, used, holm_of(args)),
        "audit": audit_rows(run),
        "report_card": card_view(run),
        "self_preference": self_preference_lines(run),
        **annotations_context(storage, run),
        "rows": rows_section(storage, run, args),
        "sessions": sessions_section(storage, run, args),
        "panel_judges": panel_judges(run),
        "retried": _retried(storage, run),
        # a batch-mode run's batch part: why it went online, lines skipped
        "batch_part": storage.batches.outcome(run.id),
        "judge_tables": judge_tables(run),
        "suites": [registry.get(name) for name in suites],
        "metric_ids": sorted(
            m.id
            for name in suites
            for m in registry.get(name).metrics
            if m.level in ("row", "session")
        ),
    }
