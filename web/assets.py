"""plotly.js from our own origin (the wheel ships it), cached for a year.

The URL carries plotly's version, so an upgrade changes the URL and browsers
never run a stale copy."""

from __future__ import annotations

from pathlib import Path

import plotly
from flask import Blueprint, abort, send_file

bp = Blueprint("assets", __name__)
PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
PLOTLY_VERSION = plotly.__version__
ONE_YEAR = 365 * 24 * 3600


@bp.get("/vendor/plotly-<version>.min.js")
def plotly_js(version: str):
    if version != PLOTLY_VERSION or not PLOTLY_JS.exists():
        abort(404)
    response = send_file(PLOTLY_JS, mimetype="text/javascript", max_age=ONE_YEAR)
    response.headers["Cache-Control"] = f"public, max-age={ONE_YEAR}, immutable"
    return response


@bp.app_context_processor
def plotly_url():
    return {"plotly_version": PLOTLY_VERSION}
