"""The workspace page, ``/w/<token>``: its runs, newest first, in a table
that sorts and filters (``static/tables.js``), with boxes to pick runs to
compare. Opened with the manage token, each run can be renamed, tagged,
commented on and deleted, its name opens the run's manage link, and the
workspace itself can be deleted. The browser remembers the workspace
(``static/workspaces.js``) so the home page can list it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from flask import (
    Blueprint,
    abort,
    current_app,
    redirect,
    render_template,
    request,
    url_for,
)
from flask.typing import ResponseReturnValue

from core import usage
from core.problems import Rejected
from metrics.results import judge_usage
from pipeline.service.comparison import compare_ahead
from web import extensions
from web.extensions import storage as _storage
from web.presentation import cancelled, run_list
from web.security.access import memo_of
from web.views import forms
from web.views.pages import error_page

if TYPE_CHECKING:
    from store.models import Run, Workspace
    from store.workspaces import Access

bp = Blueprint("workspaces", __name__)


def _workspace_or_404(token: str) -> Access[Workspace]:
    found = _storage().workspaces.find_workspace(token)
    if found is None:
        abort(404)
    return found


@bp.get("/w/<token>")
def workspace_page(token: str) -> ResponseReturnValue:
    found = _workspace_or_404(token)
    runs = _storage().workspaces.workspace_runs(found.item.id)
    # the comparisons a reader ticks next, computed before they are opened
    compare_ahead(_storage(), runs, current_app.config, extensions.runs().wake)
    used = _storage().progress.judge_usage_of([run.id for run in runs])
    saved = request.args.get("saved")
    return render_template(
        "workspace.html",
        workspace=found.item,
        runs=runs,
        # what the last form did, said at the top of the page
        saved_run=next((run for run in runs if run.token == saved), None),
        run_deleted=bool(request.args.get("run_deleted")),
        renamed=bool(request.args.get("renamed")),
        spent={
            run.id: usage.totals(judge_usage(run, used.get(run.id, {}))) for run in runs
        },
        leads=run_list.lead_columns(runs),
        lead_cell=run_list.lead_cell,
        run_progress=cancelled.progress_cell,
        can_manage=found.can_manage,
        token=token,
        workspace_memo=memo_of(found.item, manage=found.can_manage),
    )


def _run_of(found: Access[Workspace], run_token: str) -> Run:
    """A run of this workspace, when the workspace's manage token opened it."""
    run = _storage().runs.find_run(run_token)
    if run is None or run.item.workspace_id != found.item.id:
        abort(404)
    if not found.can_manage:
        raise Rejected.one("view_only", http=403)
    return run.item


@bp.post("/w/<token>/runs/<run_token>")
def edit_run(token: str, run_token: str) -> ResponseReturnValue:
    """Rename, tag (comma-separated) or comment a run of this workspace."""
    found = _workspace_or_404(token)
    try:
        run = _run_of(found, run_token)
        tags = [tag for tag in request.form.get("tags", "").split(",")]
        fields = forms.run_fields(
            {
                "name": request.form.get("name"),
                "tags": tags,
                "comment": request.form.get("comment"),
            }
        )
    except Rejected as rejected:
        return error_page(rejected)
    _storage().runs.update_run_fields(run.id, **fields)
    page = url_for("workspaces.workspace_page", token=token, saved=run.token)
    return redirect(page, code=303)


@bp.post("/w/<token>/runs/<run_token>/delete")
def delete_run(token: str, run_token: str) -> ResponseReturnValue:
    """Delete a run of this workspace (the form asks for confirmation)."""
    found = _workspace_or_404(token)
    try:
        run = _run_of(found, run_token)
    except Rejected as rejected:
        return error_page(rejected)
    _storage().runs.delete_run(run, current_app.config["UPLOAD_FOLDER"])
    page = url_for("workspaces.workspace_page", token=token, run_deleted=1)
    return redirect(page, code=303)


@bp.post("/w/<token>/rename")
def rename_workspace(token: str) -> ResponseReturnValue:
    """Rename the workspace (its manage link only)."""
    found = _workspace_or_404(token)
    try:
        if not found.can_manage:
            raise Rejected.one("view_only", http=403)
        name = forms.workspace_name(request.form.to_dict())
    except Rejected as rejected:
        return error_page(rejected)
    _storage().workspaces.rename_workspace(found.item.id, name)
    page = url_for("workspaces.workspace_page", token=token, renamed=1)
    return redirect(page, code=303)


@bp.post("/w/<token>/delete")
def delete_workspace(token: str) -> ResponseReturnValue:
    """Delete the workspace and its runs; the browser forgets it on submit."""
    found = _workspace_or_404(token)
    if not found.can_manage:
        return error_page(Rejected.one("view_only", http=403))
    _storage().workspaces.delete_workspace(
        found.item, current_app.config["UPLOAD_FOLDER"]
    )
    return redirect(url_for("pages.index", deleted=1), code=303)
