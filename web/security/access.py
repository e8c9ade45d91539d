"""Which token opened the page, and what it may do (``store/workspaces.py``
holds the rule). Views call these instead of looking runs up themselves.

A page opened with a run's manage token shows the owner's controls, and
templates get ``manage_token`` (None for a view token) to post them to; the
copy-link button hands out the view link whatever token opened the page.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import TYPE_CHECKING

from flask import Flask, abort, current_app, g, request, session

from core.problems import Rejected
from web import extensions

if TYPE_CHECKING:
    from store.models import Run, Workspace
    from store.workspaces import Access


def run_access(token: str) -> Access[Run]:
    """``Access(run, can_manage)`` for a view or manage token, else 404."""
    found = extensions.storage().runs.find_run(token)
    if found is None:
        abort(404)
    g.manage_token = token if found.can_manage else None
    return found


def run_or_404(token: str) -> Run:
    return run_access(token).item


def managed_run(token: str) -> Run:
    """The run, when ``token`` may change it; ``Rejected`` (403) for a view
    token, so the caller answers with its translated message."""
    found = run_access(token)
    if not found.can_manage:
        raise Rejected.one("view_only", http=403)
    return found.item


def remember_workspace(run_id: str) -> None:
    """The next page of this browser (the run's, after its upload) hands it
    the run's workspace to remember: once, in the signed session cookie."""
    session["workspace_memo_for"] = run_id


def workspace_memo(run: Run) -> dict[str, str | None] | None:
    """The run's workspace for the browser to remember (local storage), on
    the page the uploader lands on after the upload only: the run's manage
    link, sent on to someone, shows the run's own tokens and never the
    workspace's manage token."""
    if session.pop("workspace_memo_for", None) != run.id:
        return None
    if not g.get("manage_token") or not run.workspace_id:
        return None
    workspace = extensions.storage().workspaces.get_workspace(run.workspace_id)
    return None if workspace is None else memo_of(workspace, manage=True)


def memo_of(workspace: Workspace, manage: bool) -> dict[str, str | None]:
    """What the browser keeps of a workspace: the link it was opened with."""
    return {
        "name": workspace.name,
        "token": workspace.token,
        "manage_token": workspace.manage_token if manage else None,
        "created_at": workspace.created_at.date().isoformat(),
    }


def init_app(app: Flask) -> None:
    @app.context_processor
    def manage_token() -> dict[str, str | None]:
        return {"manage_token": g.get("manage_token")}


def client_id() -> str:
    """Who is asking, for fair scheduling and the rate limits (web/security/limits.py):
    a keyed hash of the client address (the address itself is never stored)."""
    key = str(current_app.config["SECRET_KEY"]).encode()
    address = (request.remote_addr or "unknown").encode()
    return hmac.new(key, address, hashlib.sha256).hexdigest()[:16]
