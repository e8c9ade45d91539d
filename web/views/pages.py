"""Web pages: upload, run progress / dashboard, drill-down, exports."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from flask import (
    Blueprint,
    Response,
    abort,
    current_app,
    redirect,
    render_template,
    request,
    send_file,
    stream_with_context,
    url_for,
)
from flask.typing import ResponseReturnValue
from flask_babel import get_locale
from markupsafe import Markup

import config as settings
import dataset
from config import PROJECT_ROOT
from core.problems import Rejected
from core.status import FINAL_RUN
from dataset.importers import IMPORTERS
from metrics import protocols, registry
from metrics.results import tidy_row
from pipeline import stalls
from pipeline.service.judge_check import check_judge
from pipeline.service.runs import protocol_of
from reports import exports
from translations import translate_problems
from web.extensions import runs as _service
from web.extensions import storage as _storage
from web.presentation import dashboard
from web.presentation.single_flight import SingleFlight
from web.security import access
from web.views import final_pages, forms, run_reads

if TYPE_CHECKING:
    from store.models import Run

bp = Blueprint("pages", __name__)


run_or_404 = access.run_or_404
# the results parts of run pages, shared by their readers (single_flight.py)
RESULT_PARTS = SingleFlight()


def _upload_context(**extra: Any) -> dict[str, Any]:
    config = current_app.config
    return {
        "suites": registry.suites(),
        "judge_configured": settings.judge_configured(config),
        "judge_model": config.get("JUDGE_MODEL") or "",
        "judge_models": config["JUDGE_MODELS"],
        "max_upload_mb": config["MAX_UPLOAD_MB"],
        "max_samples": config["MAX_SAMPLES"],
        "max_judge_calls": config["MAX_JUDGE_CALLS_PER_RUN"],
        "protocols": {
            name: protocols.builtin(name).title for name in protocols.builtins()
        },
        "default_protocol": protocols.DEFAULT,
        "judge_prices": config["JUDGE_PRICES"],
        "judge_max_tokens": config["JUDGE_MAX_TOKENS"],
        # "This looks like …" names another tool's layout as validate does
        "layout_titles": {name: str(found.title) for name, found in IMPORTERS.items()},
        # and the options its Convert asks (the CLI's)
        "layout_options": {name: found.options for name, found in IMPORTERS.items()},
        **extra,
    }


@bp.get("/")
def index() -> ResponseReturnValue:
    return render_template("index.html", **_upload_context())


@bp.post("/judge-check")
def judge_check() -> ResponseReturnValue:
    """ "Test judge": one real request per mode of the chosen protocol (a form
    post: CSRF-checked, so no other site can spend the judge budget; and
    rate-limited, RATE_LIMIT_JUDGE_CHECKS)."""
    try:
        chosen = forms.run_request(request.form, request.files)
        options = _service().judge_options(chosen)
        found = check_judge(current_app.config, options, protocol_of(chosen))
    except Rejected as rejected:
        return {"errors": translate_problems(rejected.errors)}, rejected.status
    return {"results": found}


@bp.get("/template.jsonl")
def template_file() -> ResponseReturnValue:
    """The realistic sample, offered as a starting point for users' files."""
    response = send_file(
        PROJECT_ROOT / "sample_data.jsonl", mimetype="application/x-ndjson"
    )
    response.headers["Content-Disposition"] = (
        'attachment; filename="personasteer-template.jsonl"'
    )
    return response


@bp.post("/runs")
def create_run() -> ResponseReturnValue:
    try:
        # The first upload of a browser makes its workspace; the run page
        # hands it to the browser (templates/_workspace_memo.html), which
        # sends its manage token with the next uploads.
        run = forms.submit(request, new_workspace=True)
    except Rejected as rejected:
        if rejected.status >= 500:
            return error_page(rejected)
        errors = translate_problems(rejected.errors)
        return render_template(
            "index.html", **_upload_context(errors=errors)
        ), rejected.status
    # The uploader lands on the manage link; the share button gives out the
    # view link (templates/_copy_link.html).
    access.remember_workspace(run.id)
    return redirect(url_for("pages.run_page", token=run.manage_token), code=303)


@bp.get("/r/<token>")
def run_page(token: str) -> ResponseReturnValue:
    run = run_or_404(token)
    try:
        run_reads.holm_arg()  # ?holm=: metric or table, else a 400 page
    except Rejected as rejected:
        return error_page(rejected)
    memo = access.workspace_memo(run)
    if run.status not in FINAL_RUN:
        counts = _storage().rows.status_counts(run.id)
        return render_template(
            "progress.html",
            run=run,
            counts=counts,
            workspace_memo=memo,
            stalled=stalls.describe(run, current_app.config),
            provisional=dashboard.provisional_summary(run),
            provisional_part=_provisional_part(run),
            batch_part=_storage().batches.outcome(run.id),
        )
    if not final_pages.storable(run):  # the owner's: its forms carry their CSRF token
        return render_template(
            "dashboard.html",
            **dashboard.context(_storage(), run, request.args),
            workspace_memo=memo,
        )
    return _shared_dashboard(run)


def _shared_dashboard(run: Run) -> Response:
    """A view link's dashboard, the same page for each of its readers:
    rendered once per results version, language and query, then served as
    stored bytes, with an ``ETag`` (``final_pages.py``)."""

    def build() -> str:
        return render_template(
            "dashboard.html", **dashboard.context(_storage(), run, request.args)
        )

    version = dashboard.shown_version(_storage(), run)
    return final_pages.serve("dashboard", version, build)


def _provisional_part(run: Run) -> Markup | None:
    """The interim charts and tables, rendered once per interim version,
    language and query, whoever reads them (single_flight.py)."""
    if dashboard.provisional_summary(run) is None:
        return None
    family = ("provisional", request.full_path, str(get_locale()))

    def build() -> Markup:
        shown = dashboard.provisional_context(run, request.args)
        return Markup(render_template("_provisional.html", run=run, **shown))

    part: Markup = RESULT_PARTS.get(family, run.interim_at, build)
    return part


@bp.post("/r/<token>/cancel")
def cancel(token: str) -> ResponseReturnValue:
    try:
        run = access.managed_run(token)
    except Rejected as rejected:
        return error_page(rejected)
    _service().cancel(run)
    return redirect(url_for("pages.run_page", token=token), code=303)


@bp.post("/r/<token>/retry")
def retry(token: str) -> ResponseReturnValue:
    """The retry opens with its manage token: the one who asked owns it."""
    try:
        retry_run = _service().retry_failed(access.managed_run(token))
    except Rejected as rejected:
        return error_page(rejected)
    return redirect(url_for("pages.run_page", token=retry_run.manage_token), code=303)


@bp.post("/r/<token>/delete")
def delete(token: str) -> ResponseReturnValue:
    """Delete the run (the form asks for confirmation first) and go home."""
    try:
        run = access.managed_run(token)
    except Rejected as rejected:
        return error_page(rejected)
    _storage().runs.delete_run(run, current_app.config["UPLOAD_FOLDER"])
    return redirect(url_for("pages.index", deleted=1), code=303)


def error_page(rejected: Rejected) -> tuple[str, int]:
    """A rejected request as a page in the reader's language (pages, the
    workspace page, comparisons)."""
    message = translate_problems(rejected.errors)[0]["message"]
    return render_template(
        "error.html", status=rejected.status, message=message
    ), rejected.status


@bp.get("/r/<token>/session")
def session_page(token: str) -> ResponseReturnValue:
    run = run_or_404(token)
    session_id = request.args.get("id", "")
    span = _storage().chunks.session_span(run.id, session_id)
    if span is None:
        abort(404)
    [session] = dataset.read_sessions(_service().upload_path(run), *span)
    judges = dashboard.panel_judges(run)
    # (round, method, judge) -> metric -> row; a panel's judges apart, the
    # rows of metrics no judge makes under ""; round 0: session-level rows
    by_cell: dict[tuple[int, str, str], dict[str, dict[str, Any]]] = defaultdict(dict)
    for row in _storage().rows.rows_page(
        run.id, {"session_id": session_id}, 0, 100_000
    ):
        judge = row["judge"] if judges else ""
        by_cell[(row["round"] or 0, row["method"], judge)][row["metric"]] = row
    return render_template(
        "session.html",
        run=run,
        session=session,
        cells=by_cell,
        judges=["", *judges],
        has_session_rows=any(key[0] == 0 for key in by_cell),
    )


@bp.get("/r/<token>/export.csv")
def export_csv(token: str) -> ResponseReturnValue:
    """Every row; ``judge`` keeps one judge's of a panel (and the rows of
    metrics no judge makes)."""
    run = run_or_404(token)
    judge = request.args.get("judge") or None
    rows = (
        tidy_row(row)
        for row in _storage().rows.iter_rows(run.id)
        if judge is None or row["judge"] in (judge, "")
    )
    body = stream_with_context(exports.csv_chunks(rows))
    return _download(body, "text/csv", exports.file_name(run, "csv"))


@bp.get("/r/<token>/export.json")
def export_json(token: str) -> ResponseReturnValue:
    run = run_or_404(token)
    try:
        holm = run_reads.holm_arg()
    except Rejected as rejected:
        return error_page(rejected)
    chunks = _service().results_chunks(run, indent=1, holm=holm)
    body = stream_with_context(chunks)
    return _download(body, "application/json", exports.file_name(run, "json"))


def _download(body: Iterable[str], mimetype: str, filename: str) -> Response:
    response = Response(body, mimetype=mimetype)
    response.headers["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
