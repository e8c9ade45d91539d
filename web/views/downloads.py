"""Paper-ready downloads of a finished run: the comparison tables as LaTeX
(booktabs) and Markdown, ``summary.csv`` and the "Methods" paragraph.

The files are English whatever the reader's language (papers are written in
English), are named by the run's id (:func:`reports.exports.file_name`, never the
share token) and come as attachments. A run without stored results (still
running, or failed) has nothing to export: 404.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flask import Blueprint, Response, abort, request
from flask.typing import ResponseReturnValue

from core.problems import Rejected
from metrics.results import judge_usage
from reports import exports, paper, paper_methods, paper_summary
from web import extensions
from web.security import access
from web.views.pages import error_page
from web.views.run_reads import holm_arg

if TYPE_CHECKING:
    from store.models import Run

bp = Blueprint("downloads", __name__)


def _finished_run(token: str) -> Run:
    run = access.run_or_404(token)
    if not run.aggregates or not run.methods:
        abort(404)
    return run


def _attachment(body: str, mimetype: str, run: Run, extension: str) -> Response:
    response = Response(body, mimetype=mimetype)
    name = exports.file_name(run, extension)
    response.headers["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@bp.get("/r/<token>/export.tex")
def export_tex(token: str) -> ResponseReturnValue:
    run = _finished_run(token)
    baseline = paper.baseline_of(run, request.args.get("baseline"))
    cjk = request.args.get("cjk") == "cjkutf8"  # CJK text through CJKutf8
    try:
        holm = holm_arg()
    except Rejected as rejected:
        return error_page(rejected)
    body = paper.to_latex(run, baseline, cjk, holm)
    return _attachment(body, "text/x-tex", run, "tex")


@bp.get("/r/<token>/export.md")
def export_markdown(token: str) -> ResponseReturnValue:
    run = _finished_run(token)
    baseline = paper.baseline_of(run, request.args.get("baseline"))
    try:
        holm = holm_arg()
    except Rejected as rejected:
        return error_page(rejected)
    body = paper.to_markdown(run, baseline, holm)
    return _attachment(body, "text/markdown", run, "md")


@bp.get("/r/<token>/summary.csv")
def summary_csv(token: str) -> ResponseReturnValue:
    run = _finished_run(token)
    baseline = paper.baseline_of(run, request.args.get("baseline"))
    try:
        holm = holm_arg()
    except Rejected as rejected:
        return error_page(rejected)
    body = paper_summary.summary_csv(run, baseline, holm)
    return _attachment(body, "text/csv", run, "summary.csv")


@bp.get("/r/<token>/methods.txt")
def methods_txt(token: str) -> ResponseReturnValue:
    run = _finished_run(token)
    used = judge_usage(run, extensions.storage().progress.judge_usage(run.id))
    try:
        holm = holm_arg()
    except Rejected as rejected:
        return error_page(rejected)
    body = paper_methods.methods_paragraph(run, used, holm) + "\n"
    return _attachment(body, "text/plain", run, "methods.txt")
