"""What the API answers about one run, kept cheap at any run size.

A status poll reads the run's record and its stored aggregates, never its
rows: polling clients (the progress page, scripts, CI jobs) must cost the
same for a 10-row run as for a 10-million-row one. Rows come from two
places that never hold them all in memory: ``/results`` streams the whole
document, ``/rows`` pages through them with a cursor.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from flask import Response, request, stream_with_context

from core.status import FINAL_RUN
from metrics import results
from web.extensions import runs as _service
from web.views import schemas

if TYPE_CHECKING:
    from store.models import Run

JSON = "application/json"
# builds a URL: ``link(endpoint, **values)`` (web.extensions.link)
Link = Callable[..., str]


def links(run: Run, link: Link) -> dict[str, str]:
    """Where the rest of the run is; ``link(endpoint, **values)`` builds URLs."""
    return {
        "status": link("api.run_status", token=run.token),
        "dashboard": link("pages.run_page", token=run.token),
        "results": link("api.run_results", token=run.token),
        "rows": link("api.run_rows", token=run.token),
        "export_csv": link("pages.export_csv", token=run.token),
        "export_json": link("pages.export_json", token=run.token),
    }


def status_body(run: Run, link: Link) -> dict[str, Any]:
    """Status, progress, counts, summary and links; ``results`` is the
    document without its rows once the run is final (null before)."""
    service = _service()
    head = service.results_head(run) if run.status in FINAL_RUN else None
    return {
        "status": run.status,
        "progress": service.progress(run),  # done, total, ETA and rates
        "counts": service.storage.rows.run_status_counts(run),
        "summary": head["summary"] if head else None,
        "provisional": provisional(run),
        # a batch-mode run's batch part: why it went online, the output
        # lines skipped and requests missing (null: an online run)
        "batch": service.storage.batches.outcome(run.id),
        "links": links(run, link),
        "results": head,
    }


def provisional(run: Run) -> dict[str, Any] | None:
    """While a run is evaluated: the summary of the sessions stored so far
    (``pipeline/worker/interim.py``), which changes until the run ends; else null."""
    interim = run.interim if run.status not in FINAL_RUN else None
    if not interim or "summary" not in interim:  # none yet, or summary steps only
        return None
    return {
        "sessions": interim.get("sessions_scored"),
        "of_sessions": run.sessions,
        "computed_at": run.interim_at.isoformat() if run.interim_at else None,
        "summary": interim.get("summary"),
    }


def status_with_rows(run: Run, link: Link) -> Response:
    """The status with every row inline (``?include=rows``), as the first
    release answered: streamed, for clients written against it."""
    body = status_body(run, link)
    document = body.pop("results")

    def chunks() -> Iterator[str]:
        if document is None:
            yield json.dumps({**body, "results": None}, ensure_ascii=False)
            return
        yield json.dumps(body, ensure_ascii=False)[:-1] + ', "results": '
        rows = service_rows(run)
        yield from results.json_chunks(document, rows)
        yield "}"

    return Response(stream_with_context(chunks()), mimetype=JSON)


def service_rows(run: Run) -> Iterator[dict[str, Any]]:
    return _service().storage.rows.iter_rows(run.id, detail=False)


def results_stream(run: Run, indent: int | None = None) -> Response:
    """The whole results document, rows streamed from the database;
    ``?min_effect=`` (a dz above 0) adds each comparison's sessions needed
    to detect that effect (``stats.add_min_effect``); ``?holm=table``
    adjusts ``delta_p_holm`` across every column of a table."""
    body = _service().results_chunks(run, indent, min_effect_arg(), holm_arg())
    return Response(stream_with_context(body), mimetype=JSON)


def holm_arg(args: Mapping[str, str] | None = None) -> str:
    """``?holm=``: the Holm family of the tables and of ``delta_p_holm``,
    ``metric`` (the default) or ``table``; anything else is a 400 naming
    the parameter."""
    query, given = schemas.HolmQuery, request.args if args is None else args
    holm: str = schemas.load(
        query, schemas.form_data(query, given, {}, blank_is_absent=True)
    )["holm"]
    return holm


def min_effect_arg() -> float | None:
    """``?min_effect=``: None when absent, else a dz above 0 or a 400."""
    query = schemas.ResultsQuery
    min_effect: float | None = schemas.load(
        query, schemas.form_data(query, request.args, {}, blank_is_absent=True)
    ).get("min_effect")
    return min_effect


def rows_page(run: Run, link: Link) -> dict[str, Any]:
    """One page of tidy rows in storage order, and the next page's link
    (null on the last page). The order is stable while the run evaluates:
    rows are only added, and an upsert keeps a row's place."""
    from store import row_pages  # SQL: loaded by the first page, not the CLI

    query = schemas.load(
        schemas.RowsQuery,
        schemas.form_data(schemas.RowsQuery, request.args, {}, blank_is_absent=True),
    )
    limit, after = query["limit"], int(query["cursor"])
    filters = {name: query.get(name) for name in row_pages.FILTERS}
    found, cursor = row_pages.rows_after(
        _service().storage, run.id, after, limit, filters
    )
    following = None
    if cursor is not None:
        wanted = {k: v for k, v in filters.items() if v}
        following = link(
            "api.run_rows", token=run.token, cursor=cursor, limit=limit, **wanted
        )
    return {
        "rows": [results.tidy_row(row) for row in found],
        "next_cursor": None if cursor is None else str(cursor),
        "next": following,
    }
