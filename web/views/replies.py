"""The replies grid (issue 48): every reply of a run, or of one session,
with its scores per judge, filtered and sorted; and, a click away, the
exact prompt the judge was sent and its raw reply (both stored with the
rows, bounded; shown escaped). A view link is enough: the grid shows what
the dashboard and the session pages show."""

from __future__ import annotations

from flask import Blueprint, abort, render_template, request
from flask.typing import ResponseReturnValue

from web.extensions import runs as _service
from web.extensions import storage as _storage
from web.presentation import dashboard, replies
from web.security import access
from web.views import final_pages

bp = Blueprint("replies", __name__)


@bp.get("/r/<token>/replies")
def grid(token: str) -> ResponseReturnValue:
    run = access.run_or_404(token)
    upload = _service().upload_path(run)

    def build() -> str:
        context = replies.grid_context(_storage(), run, request.args, upload)
        return render_template("replies.html", **context)

    if not final_pages.storable(run):
        return build()
    # the texts are read from the stored upload: its presence is part of it
    version = (dashboard.shown_version(_storage(), run), upload.exists())
    return final_pages.serve("replies", version, build)


@bp.get("/r/<token>/replies/exchange")
def exchange(token: str) -> ResponseReturnValue:
    """The whole page, or (``part=1``) the fragment the grid's dialog shows."""
    run = access.run_or_404(token)
    context = replies.exchange_context(_storage(), run, request.args)
    if context is None:
        abort(404)
    template = "_exchange.html" if request.args.get("part") == "1" else "exchange.html"
    return render_template(template, **context)
