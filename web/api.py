"""HTTP API v1 (the README's "HTTP API" section): JSON in, JSON out."""

from __future__ import annotations

from flask import Blueprint, abort, current_app, jsonify, request, url_for

from core.problems import Rejected
from core.status import FINAL_RUN, RunStatus
from translations import translate_problems
from web import forms

bp = Blueprint("api", __name__, url_prefix="/api/v1")


_errors = translate_problems


def _service():
    return current_app.extensions["runs"]


def _run_or_404(token: str):
    run = current_app.extensions["storage"].get_run_by_token(token)
    if run is None:
        abort(404)
    return run


@bp.post("/validate")
def validate():
    """What the upload page's suite picker asks before the real submission."""
    try:
        upload = forms.uploaded_file(request.files)
    except Rejected as rejected:
        return jsonify(errors=_errors(rejected.errors)), 400
    report = _service().validate(upload.stream, upload.filename)
    body = report.to_dict()
    body["errors"] = _errors(body["errors"])
    body["warnings"] = _errors(body["warnings"])
    return jsonify(body), 200


def _started(start):
    """202 with the new run's links, or the rejection (400/409/503) as errors."""
    try:
        run = start()
    except Rejected as rejected:
        return jsonify(errors=_errors(rejected.errors)), rejected.status
    return jsonify(_created(run)), 202


@bp.post("/runs")
def create_run():
    return _started(lambda: forms.submit(request))


@bp.get("/runs/<token>")
def run_status(token: str):
    run = _run_or_404(token)
    results = _service().results_document(run) if run.status in FINAL_RUN else None
    progress = _service().progress(run)  # done, total, ETA and rates
    counts = current_app.extensions["storage"].run_status_counts(run)
    return jsonify(status=run.status, progress=progress, counts=counts, results=results)


@bp.post("/runs/<token>/retry")
def retry(token: str):
    """Re-run the failed rows of a finished run as a new run (202)."""
    run = _run_or_404(token)
    return _started(lambda: _service().retry_failed(run))


@bp.post("/runs/<token>/cancel")
def cancel(token: str):
    run = _run_or_404(token)
    if not _service().cancel(run):
        problem = Rejected.one("already_final", http=409, status=run.status)
        return jsonify(status=run.status, errors=_errors(problem.errors)), 409
    return jsonify(status=RunStatus.CANCELLED), 202


def link(endpoint: str, **values) -> str:
    """A link in an API reply: absolute on ``PUBLIC_URL`` when it is set,
    else relative. Never built from the request's ``Host`` header, which
    the client controls."""
    path = url_for(endpoint, **values)
    base = current_app.config.get("PUBLIC_URL")
    return f"{base}{path}" if base else path


def _created(run) -> dict:
    return {
        "id": run.id,
        "token": run.token,
        "status_url": link("api.run_status", token=run.token),
        "dashboard_url": link("pages.run_page", token=run.token),
    }
