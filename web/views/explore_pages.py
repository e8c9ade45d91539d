"""Exploration pages of a run: the sessions behind a number, the sessions
where two methods differ most, search over responses and judge replies, and
a word-level diff of two methods' responses in one session."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Generator
from contextlib import closing
from statistics import fmean
from typing import TYPE_CHECKING, Any

from flask import Blueprint, abort, render_template, request
from flask.typing import ResponseReturnValue

import dataset
from core.status import RowStatus
from metrics import registry
from reports import tables
from translations import _
from web import extensions
from web.extensions import storage as _storage
from web.presentation import explore
from web.presentation.paging import PAGE_SIZE, page_number, paged
from web.security import access

if TYPE_CHECKING:
    from store.models import Run

bp = Blueprint("explore", __name__)


run_or_404 = access.run_or_404


def _method_or_404(run: Run, name: str | None) -> str:
    if not name or name not in run.methods:
        abort(404)
    return name


def _metric_or_404(metric_id: str | None) -> str:
    """A metric id the registry knows; the page then reads the per-session
    values of the metric it comes from (``quality_avg`` → ``quality``)."""
    if not metric_id or registry.spec(metric_id) is None:
        abort(404)
    return metric_id


def _metric_choices(run: Run, current: str | None = None) -> list[str]:
    ids = [metric.id for metric in explore.run_metrics(run.suites)]
    if current and current not in ids:
        ids.append(current)
    return ids


@bp.get("/r/<token>/values")
def values(token: str) -> ResponseReturnValue:
    from store import explore as queries  # SQL, loaded by the page

    run = run_or_404(token)
    metric = _metric_or_404(request.args.get("metric"))
    method = _method_or_404(run, request.args.get("method"))
    source = explore.source_metric(metric)
    order = request.args.get("order")
    if order not in ("asc", "desc"):  # worst first unless asked otherwise
        order = "asc" if explore.higher_is_better(source or metric) else "desc"
    sessions, mean, scored = 0, None, 0
    found: list[queries.SessionValue] = []
    if source is not None:
        sessions, mean, scored = queries.session_value_totals(
            _storage(), run.id, source, method
        )
    paging = paged(sessions, page_number(request.args.get("page")), PAGE_SIZE)
    if source is not None and sessions:
        found = queries.session_values(
            _storage(),
            run.id,
            source,
            method,
            paging["offset"],
            paging["size"],
            descending=order == "desc",
        )
    shown = registry.spec(metric)
    table_value = None
    if shown is not None and shown.level == "summary":  # the number a value link showed
        summary = (run.aggregates or {}).get("summary") or {}
        table_value = (summary.get(method) or {}).get(metric)
    return render_template(
        "values.html",
        run=run,
        metric=metric,
        table_value=table_value,
        table_basis=(
            tables.basis_of(shown)
            if shown is not None and table_value is not None
            else None
        ),
        source=source,
        method=method,
        order=order,
        values=found,
        mean=mean,
        scored=scored,
        paging=paging,
        metric_ids=_metric_choices(run, source or metric),
    )


@bp.get("/r/<token>/differences")
def differences(token: str) -> ResponseReturnValue:
    from store import explore as queries  # SQL, loaded by the page

    run = run_or_404(token)
    choices = _metric_choices(run)
    methods = run.methods or []
    metric = _metric_or_404(
        request.args.get("metric") or (choices[0] if choices else None)
    )
    a = _method_or_404(run, request.args.get("a") or (methods[0] if methods else None))
    b = _method_or_404(run, request.args.get("b") or (methods[1:2] or [a])[0])
    source = explore.source_metric(metric)
    found: list[queries.Difference] = []
    paired, mean = 0, None
    if source is not None:
        found = queries.largest_differences(
            _storage(), run.id, source, a, b, limit=explore.TOP_DIFFERENCES
        )
        paired, mean = queries.difference_totals(_storage(), run.id, source, a, b)
    return render_template(
        "differences.html",
        run=run,
        metric=metric,
        source=source,
        a=a,
        b=b,
        differences=found,
        paired=paired,
        mean=mean,
        higher_is_better=explore.higher_is_better(source or metric),
        metric_ids=_metric_choices(run, source or metric),
    )


def _problem_text(code: str) -> str:
    if code == "too_short":
        return _("Type at least %(count)s characters.", count=explore.MIN_QUERY)
    return _("Type at most %(count)s characters.", count=explore.MAX_QUERY)


@bp.get("/r/<token>/search")
def search(token: str) -> ResponseReturnValue:
    from store import explore as queries  # SQL, loaded by the page

    run = run_or_404(token)
    text = (request.args.get("q") or "").strip()
    problem = explore.query_problem(text) if text else None
    responses: list[explore.ResponseHit] = []
    details: list[dict[str, Any]] = []
    more_responses = more_details = False
    start, part = page_number(request.args.get("from")) - 1, None
    if text and problem is None:
        path = extensions.runs().upload_path(run)
        reached = [start]

        # one part of the upload: a request does bounded work
        def sessions() -> Generator[dict[str, Any]]:
            for session, end in dataset.sessions_from(
                path, start, explore.SEARCH_BYTES
            ):
                reached[0] = end
                yield session

        with closing(sessions()) as read:
            responses, more_responses = explore.find_in_responses(
                read, text, explore.MAX_HITS
            )
        size = path.stat().st_size
        if start or reached[0] < size:  # said on the page, with the next part
            part = {
                "start": start,
                "end": reached[0],
                "size": size,
                "next": reached[0] + 1 if reached[0] < size else None,
            }
        hits = list(
            queries.iter_detail_hits(
                _storage(), run.id, text, explore.MAX_HITS, run.methods
            )
        )
        more_details = len(hits) == explore.MAX_HITS
        details = explore.group_detail_hits(hits, text)
    status = 400 if problem else 200
    return render_template(
        "search.html",
        run=run,
        q=text,
        problem=_problem_text(problem) if problem else None,
        searched=bool(text) and problem is None,
        responses=responses,
        more_responses=more_responses,
        details=details,
        more_details=more_details,
        limit=explore.MAX_HITS,
        part=part,
    ), status


@bp.get("/r/<token>/diff")
def diff(token: str) -> ResponseReturnValue:
    run = run_or_404(token)
    session_id = request.args.get("id", "")
    span = _storage().chunks.session_span(run.id, session_id)
    if span is None:
        abort(404)
    methods = run.methods or []
    a = _method_or_404(run, request.args.get("a") or (methods[0] if methods else None))
    b = _method_or_404(run, request.args.get("b") or (methods[1:2] or [a])[0])
    metric = request.args.get("metric") or None
    source = explore.source_metric(_metric_or_404(metric)) if metric else None
    path = extensions.runs().upload_path(run)
    [session] = dataset.read_sessions(path, *span)
    scores = _scores(run.id, session_id, source, (a, b)) if source else {}
    rounds = explore.diff_rounds(session["rounds"], a, b, scores)
    return render_template(
        "diff.html",
        run=run,
        session=session,
        a=a,
        b=b,
        metric=metric,
        source=source,
        rounds=rounds,
        session_scores={method: scores.get((0, method)) for method in (a, b)},
    )


def _scores(
    run_id: str, session_id: str, metric: str, methods: Collection[str]
) -> dict[tuple[int, str], float]:
    """``{(round, method): mean of the scored samples}`` of one session
    (round 0: the session-level value)."""
    values: dict[tuple[int, str], list[float]] = defaultdict(list)
    filters = {"session_id": session_id, "metric": metric}
    for row in _storage().rows.rows_page(run_id, filters, 0, 100_000):
        scored = row["status"] == RowStatus.OK and row["value"] is not None
        if scored and row["method"] in methods:
            values[(row["round"], row["method"])].append(row["value"])
    return {key: fmean(found) for key, found in values.items()}
