"""Comparison across runs: ``GET /api/v1/compare``, the ``/compare`` page and
its exports (CSV, JSON, LaTeX, Markdown). ``runs`` names two or more runs by
their view (or manage) tokens; the replies only ever name view tokens.

The comparison (``pipeline/service/comparison.py``) is computed once on a worker
and stored. While it is being computed every endpoint answers 202 with
``Retry-After``: the API a JSON ``{"state": "computing"}``, the page and the
exports a page that reloads itself. The stored comparison quacks like a
finished run, so the page reuses the dashboard's panels and comparison
tables, and the exports reuse the run's paper exports.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from flask import (
    Blueprint,
    Response,
    abort,
    current_app,
    jsonify,
    render_template,
    request,
)
from flask.typing import ResponseReturnValue
from flask_babel import get_locale
from markupsafe import Markup
from werkzeug.datastructures import MultiDict

from core.problems import Rejected
from metrics import basis
from metrics.comparison import Comparison
from pipeline.service.comparison import compare_runs, comparison_keys
from reports import paper, paper_summary
from translations import translate_problems
from web import extensions
from web.presentation import dashboard
from web.presentation.settings_diff import settings_diff
from web.views import run_reads
from web.views.pages import RESULT_PARTS, error_page

bp = Blueprint("compare", __name__)

MAX_TOKEN_CHARS = 64


def run_tokens(raw: str | None, picked: list[str] | None = None) -> list[str]:
    """The comma-separated tokens of ``runs`` then those ``run`` repeats (the
    workspace page's checkboxes), in order, each once.

    >>> run_tokens(" a, b,,a ,c", ["d", "a"])
    ['a', 'b', 'c', 'd']
    """
    found: list[str] = []
    for token in [*(raw or "").split(","), *(picked or [])]:
        token = token.strip()[:MAX_TOKEN_CHARS]
        if token and token not in found:
            found.append(token)
    return found


RETRY_AFTER_S = 2


def load(args: MultiDict[str, str]) -> Comparison | None:
    """The comparison of the runs the query names, None while it is being
    computed; Rejected (400/404/409)."""
    return _load(args)[0]


def _load(args: MultiDict[str, str]) -> tuple[Comparison | None, str]:
    """The comparison (or None) and the key it is stored under, which
    changes with anything it shows (``comparison_keys``)."""
    storage = extensions.storage()
    runs = []
    for token in run_tokens(args.get("runs"), args.getlist("run")):
        found = storage.runs.find_run(token)
        if found is None:
            raise Rejected.one("compare_unknown_run", http=404, token=token)
        runs.append(found.item)
    wake = extensions.runs().wake
    comparison = compare_runs(storage, runs, current_app.config, wake)
    return comparison, comparison_keys(runs)[0]


def _computing_page() -> tuple[str, int, dict[str, str]]:
    """A page that reloads itself until the comparison is stored."""
    page = render_template("compare_computing.html", retry_after=RETRY_AFTER_S)
    return page, 202, {"Retry-After": str(RETRY_AFTER_S)}


def _rejected_json(rejected: Rejected) -> tuple[Response, int]:
    return jsonify(errors=translate_problems(rejected.errors)), rejected.status


@bp.get("/api/v1/compare")
def compare_api() -> ResponseReturnValue:
    try:
        holm = run_reads.holm_arg()
        comparison = load(request.args)
    except Rejected as rejected:
        return _rejected_json(rejected)
    if comparison is None:
        headers = {"Retry-After": str(RETRY_AFTER_S)}
        return jsonify(state="computing", retry_after_s=RETRY_AFTER_S), 202, headers
    return current_app.response_class(
        _json(basis.with_holm_family(comparison.document(), holm)),
        mimetype="application/json",
    )


def _json(document: dict[str, Any]) -> str:
    return json.dumps(document, ensure_ascii=False, allow_nan=False)


@bp.get("/compare")
def compare_page() -> ResponseReturnValue:
    try:
        run_reads.holm_arg()  # ?holm=: metric or table, else a 400 page
        comparison, key = _load(request.args)
    except Rejected as rejected:
        return error_page(rejected)
    if comparison is None:
        return _computing_page()

    def build() -> Markup:
        shown = context(comparison, request.args)
        return Markup(render_template("_compare_body.html", **shown))

    # its figures and tables take a dashboard's time several times over:
    # built once per stored comparison, language and query (single_flight.py)
    family = ("compare", request.full_path, str(get_locale()))
    return render_template("compare.html", body=RESULT_PARTS.get(family, key, build))


def context(comparison: Comparison, args: MultiDict[str, str]) -> dict[str, Any]:
    return {
        **dashboard.results_context(comparison, args),
        "comparison": comparison,
        "runs_arg": ",".join(side.key for side in comparison.sides),
        "settings_diff": settings_diff(comparison.sides),
    }


# (comparison, baseline, Holm family) -> the file
EXPORTS: dict[str, tuple[str, Callable[[Comparison, str, str], str]]] = {
    "csv": ("text/csv", paper_summary.summary_csv),
    "json": (
        "application/json",
        lambda c, b, h: _json(basis.with_holm_family(c.document(), h)) + "\n",
    ),
    "tex": (
        "text/x-tex",
        lambda c, b, h: paper.to_latex(
            c, b, cjk=request.args.get("cjk") == "cjkutf8", holm=h
        ),
    ),
    "md": ("text/markdown", paper.to_markdown),
}


@bp.get("/compare/export.<extension>")
def export(extension: str) -> ResponseReturnValue:
    """The comparison's summary (CSV: one row per column and summary value,
    with n and CI), its document (JSON) or its tables (LaTeX, Markdown)."""
    if extension not in EXPORTS:
        abort(404)
    try:
        holm = run_reads.holm_arg()
        comparison = load(request.args)
    except Rejected as rejected:
        return error_page(rejected)
    if comparison is None:
        return _computing_page()
    mimetype, render = EXPORTS[extension]
    baseline = paper.baseline_of(comparison, request.args.get("baseline"))
    response = Response(render(comparison, baseline, holm), mimetype=mimetype)
    name = f"personasteer-{comparison.id}.{extension}"
    response.headers["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
