"""HTTP API v1 (docs/api.md): JSON in, JSON out."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flask import Blueprint, Response, abort, current_app, jsonify, request
from flask.typing import ResponseReturnValue

from core.problems import Rejected
from core.status import RunStatus
from dataset import convert
from pipeline.service.run_request import RunRequest
from translations import translate_problems
from web.extensions import link
from web.extensions import runs as _service
from web.extensions import storage as _storage
from web.security import access, cross_site
from web.views import forms, openapi, run_reads, schemas

if TYPE_CHECKING:
    from store.models import Run

bp = Blueprint("api", __name__, url_prefix="/api/v1")
cross_site.protect(bp)  # no CSRF token here, so no other site's page may post


_errors = translate_problems


def run_or_404(token: str) -> Run:
    """The run a view or manage token opens."""
    found = _storage().runs.find_run(token)
    if found is None:
        abort(404)
    return found.item


def _forbidden() -> tuple[Response, int]:
    problem = Rejected.one("view_only", http=403)
    return jsonify(errors=_errors(problem.errors)), 403


def _managed(
    token: str, act: Callable[[Run], ResponseReturnValue]
) -> ResponseReturnValue:
    """``act(run)`` when ``token`` may change the run; 403 for a view token."""
    found = _storage().runs.find_run(token)
    if found is None:
        abort(404)
    if not found.can_manage:
        return _forbidden()
    return act(found.item)


@bp.post("/validate")
def validate() -> ResponseReturnValue:
    """What the upload page's suite picker asks before the real submission."""
    form = schemas.forms_for(current_app.config)["ValidateForm"]
    try:  # the form's own fields first: the file's report comes after
        schemas.load(form, schemas.form_data(form, request.form, request.files))
        upload = forms.uploaded_file(request.files)
    except Rejected as rejected:
        return jsonify(errors=_errors(rejected.errors)), 400
    asked = _asked_run()
    if isinstance(asked, Rejected) and asked.status == 400:  # the form's own fields
        return jsonify(errors=_errors(asked.errors)), 400
    run = None if isinstance(asked, Rejected) else asked
    report = _service().validate(upload.stream, upload.filename, run)
    body = report.to_dict()
    body["errors"] = _errors(body["errors"])
    body["warnings"] = _errors(body["warnings"])
    if not report.valid:  # another tool's layout: the page offers to convert
        upload.stream.seek(0)
        body["looks_like"] = convert.detect_head(
            upload.stream.read(convert.HEAD_BYTES), Path(upload.filename).suffix
        )
    if report.valid:  # for the suites, samples and judges sent (as for a run)
        try:
            if isinstance(asked, Rejected):  # said once the file itself is valid
                raise asked
            estimate = _service().judge_calls(report, asked)
        except Rejected as rejected:
            return jsonify(errors=_errors(rejected.errors)), rejected.status
        body["judge_calls"] = estimate
        if request.form.get("keep") == "1":  # the page: the run takes it as is
            try:
                body["upload_ref"] = _service().keep(
                    upload.stream, upload.filename, access.client_id()
                )
            except Rejected as refused:  # valid, not kept: sent with the run
                body.update(upload_ref=None, errors=_errors(refused.errors))
                return jsonify(body), refused.status
    return jsonify(body), 200


def _asked_run() -> RunRequest | Rejected:
    """The run the fields sent would be (its protocol says which judge
    modes the estimate counts), or why it would be refused."""
    try:
        return forms.run_request(request.form, request.files)
    except Rejected as rejected:
        return rejected


def _started(start: Callable[[], Run]) -> tuple[Response, int]:
    """202 with the new run's links, or the rejection (400/409/503) as errors."""
    try:
        run = start()
    except Rejected as rejected:
        return jsonify(errors=_errors(rejected.errors)), rejected.status
    return jsonify(_created(run)), 202


@bp.post("/runs")
def create_run() -> ResponseReturnValue:
    return _started(lambda: forms.submit(request))


@bp.get("/runs/<token>")
def run_status(token: str) -> ResponseReturnValue:
    """Cheap to poll: no rows (``?include=rows`` adds them, streamed)."""
    run = run_or_404(token)
    query = schemas.StatusQuery
    try:
        asked = schemas.load(
            query, schemas.form_data(query, request.args, {}, blank_is_absent=True)
        )
    except Rejected as rejected:
        return jsonify(errors=_errors(rejected.errors)), rejected.status
    if asked.get("include") == "rows":
        return run_reads.status_with_rows(run, link)
    return jsonify(run_reads.status_body(run, link))


@bp.get("/runs/<token>/results")
def run_results(token: str) -> ResponseReturnValue:
    """The whole results document, streamed (at any status: rows so far);
    ``?min_effect=`` adds each comparison's sessions for that effect."""
    run = run_or_404(token)
    try:
        return run_reads.results_stream(run)
    except Rejected as rejected:
        return jsonify(errors=_errors(rejected.errors)), rejected.status


@bp.get("/runs/<token>/rows")
def run_rows(token: str) -> ResponseReturnValue:
    """One page of rows; follow ``next`` until it is null."""
    run = run_or_404(token)
    try:
        return jsonify(run_reads.rows_page(run, link))
    except Rejected as rejected:
        return jsonify(errors=_errors(rejected.errors)), rejected.status


@bp.post("/runs/<token>/retry")
def retry(token: str) -> ResponseReturnValue:
    """Re-run the failed rows of a finished run as a new run (202); the
    retry joins the run's workspace and has its own manage token."""
    return _managed(token, lambda run: _started(lambda: _service().retry_failed(run)))


@bp.post("/runs/<token>/cancel")
def cancel(token: str) -> ResponseReturnValue:
    return _managed(token, _cancel)


def _cancel(run: Run) -> tuple[Response, int]:
    if not _service().cancel(run):
        problem = Rejected.one("already_final", http=409, status=run.status)
        return jsonify(status=run.status, errors=_errors(problem.errors)), 409
    return jsonify(status=RunStatus.CANCELLED), 202


@bp.patch("/runs/<token>")
def edit_run(token: str) -> ResponseReturnValue:
    """Rename, tag or comment a run: ``{"name", "tags", "comment"}``."""
    return _managed(token, _edit)


def _edit(run: Run) -> tuple[Response, int]:
    try:
        fields = forms.run_fields(request.get_json(silent=True))
    except Rejected as rejected:
        return jsonify(errors=_errors(rejected.errors)), rejected.status
    _storage().runs.update_run_fields(run.id, **fields)
    edited = _storage().runs.get_run(run.id)
    if edited is None:  # deleted meanwhile by another request
        abort(404)
    return jsonify(_listed(edited)), 200


@bp.delete("/runs/<token>")
def delete_run(token: str) -> ResponseReturnValue:
    """Delete a run and everything of it (204); both its tokens then 404."""

    def delete(run: Run) -> tuple[str, int]:
        _storage().runs.delete_run(run, current_app.config["UPLOAD_FOLDER"])
        return "", 204

    return _managed(token, delete)


@bp.get("/openapi.json")
def openapi_document() -> ResponseReturnValue:
    return jsonify(openapi.served())


# -- workspaces ----------------------------------------------------------------
@bp.post("/workspaces")
def create_workspace() -> ResponseReturnValue:
    try:
        name = _new_workspace_name()
    except Rejected as rejected:
        return jsonify(errors=_errors(rejected.errors)), 400
    workspace = _storage().workspaces.create_workspace(name)
    return jsonify(
        token=workspace.token,
        manage_token=workspace.manage_token,
        url=link("workspaces.workspace_page", token=workspace.token),
        manage_url=link("workspaces.workspace_page", token=workspace.manage_token),
    ), 201


FORMS = ("application/x-www-form-urlencoded", "multipart/form-data")


def _new_workspace_name() -> str:
    """The name from a JSON object's or a form's ``name`` (no body: none);
    a body that is neither is a 400, not an unnamed workspace."""
    refused = Rejected.one("json_only", path="body")
    if request.mimetype in FORMS:
        blank = not request.get_data(cache=True).strip()
        if (request.form or not blank) and "name" not in request.form:
            raise refused  # a part without the name, or a body of no part
        return forms.workspace_name(request.form.to_dict())
    if not request.get_data(cache=True).strip():
        return forms.workspace_name({})
    body = request.get_json(silent=True) if request.is_json else None
    if not isinstance(body, dict):
        raise refused
    return forms.workspace_name(body)


@bp.get("/workspaces/<token>")
def workspace(token: str) -> ResponseReturnValue:
    found = _storage().workspaces.find_workspace(token)
    if found is None:
        abort(404)
    runs = _storage().workspaces.workspace_runs(found.item.id)
    return jsonify(name=found.item.name, runs=[_listed(run) for run in runs])


@bp.patch("/workspaces/<token>")
def rename_workspace(token: str) -> ResponseReturnValue:
    """Rename a workspace: ``{"name": "..."}`` with its manage token."""
    found = _storage().workspaces.find_workspace(token)
    if found is None:
        abort(404)
    if not found.can_manage:
        return _forbidden()
    body = request.get_json(silent=True) if request.is_json else None
    if (
        not isinstance(body, dict) or "name" not in body
    ):  # a text/plain PATCH blanked it
        problem = Rejected.one("json_only", path="name", http=415)
        return jsonify(errors=_errors(problem.errors)), problem.status
    try:
        name = forms.workspace_name(body, schemas.WorkspaceName)
    except Rejected as rejected:
        return jsonify(errors=_errors(rejected.errors)), 400
    _storage().workspaces.rename_workspace(found.item.id, name)
    return jsonify(name=name)


@bp.delete("/workspaces/<token>")
def delete_workspace(token: str) -> ResponseReturnValue:
    """Delete a workspace and every run in it (204)."""
    found = _storage().workspaces.find_workspace(token)
    if found is None:
        abort(404)
    if not found.can_manage:
        return _forbidden()
    _storage().workspaces.delete_workspace(
        found.item, current_app.config["UPLOAD_FOLDER"]
    )
    return "", 204


def _created(run: Run) -> dict[str, str | None]:
    """The uploader's reply: the only place the manage token is given out."""
    return {
        "id": run.id,
        "token": run.token,
        "manage_token": run.manage_token,
        "status_url": link("api.run_status", token=run.token),
        "dashboard_url": link("pages.run_page", token=run.token),
        "manage_url": link("pages.run_page", token=run.manage_token),
    }


def _listed(run: Run) -> dict[str, Any]:
    """A run as a workspace lists it: view links only."""
    judge = run.judge or {}
    return {
        "token": run.token,
        "name": run.name,
        "file_name": run.file_name,
        "sessions": run.sessions,
        "methods": run.methods,
        "suites": run.suites,
        "judge_model": judge.get("model"),
        "prompt_versions": judge.get("prompts"),
        "status": run.status,
        "tags": run.tags or [],
        "comment": run.comment,
        "created_at": _iso(run.created_at),
        "finished_at": _iso(run.finished_at),
        "counts": {
            "judge_calls": run.judge_calls,
            "done": run.done,
            "total": run.total,
        },
        "dashboard_url": link("pages.run_page", token=run.token),
    }


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None
