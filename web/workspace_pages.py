"""The workspace page, ``/w/<token>``: its runs, newest first, in a table
that sorts and filters (``static/tables.js``). Opened with the manage token,
each run can be renamed, tagged and commented on."""

from __future__ import annotations

from flask import (
    Blueprint,
    abort,
    current_app,
    redirect,
    render_template,
    request,
    url_for,
)

from core.problems import Rejected
from translations import translate_problems
from web import forms

bp = Blueprint("workspaces", __name__)


def _storage():
    return current_app.extensions["storage"]


def _workspace_or_404(token: str):
    found = _storage().find_workspace(token)
    if found is None:
        abort(404)
    return found


@bp.get("/w/<token>")
def workspace_page(token: str):
    found = _workspace_or_404(token)
    runs = _storage().workspace_runs(found.item.id)
    return render_template(
        "workspace.html",
        workspace=found.item,
        runs=runs,
        can_manage=found.can_manage,
        token=token,
    )


@bp.post("/w/<token>/runs/<run_token>")
def edit_run(token: str, run_token: str):
    """Rename, tag (comma-separated) or comment a run of this workspace."""
    found = _workspace_or_404(token)
    run = _storage().find_run(run_token)
    if run is None or run.item.workspace_id != found.item.id:
        abort(404)
    try:
        if not found.can_manage:
            raise Rejected.one("view_only", http=403)
        tags = [tag for tag in request.form.get("tags", "").split(",")]
        fields = forms.run_fields(
            {"name": request.form.get("name"), "tags": tags,
             "comment": request.form.get("comment")}
        )  # fmt: skip
    except Rejected as rejected:
        message = translate_problems(rejected.errors)[0]["message"]
        return render_template(
            "error.html", status=rejected.status, message=message
        ), rejected.status
    _storage().update_run_fields(run.item.id, **fields)
    return redirect(url_for("workspaces.workspace_page", token=token), code=303)
