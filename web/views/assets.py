"""plotly.js from our own origin (the wheel ships it), cached for a year, and
the site icon.

The URL carries plotly's version, so an upgrade changes the URL and browsers
never run a stale copy. The file is 4.8 MB; gzipped it is about 1.5 MB, so a
client that accepts gzip gets a copy compressed once per process (compressing
per request would cost ~0.3 s of CPU each time)."""

from __future__ import annotations

import gzip
import hashlib
import threading
from pathlib import Path

import plotly
from flask import Blueprint, Response, abort, current_app, request, send_file

bp = Blueprint("assets", __name__)
PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
PLOTLY_VERSION = plotly.__version__
ONE_YEAR = 365 * 24 * 3600
ONE_DAY = 24 * 3600
IMMUTABLE = f"public, max-age={ONE_YEAR}, immutable"


class Precompressed:
    """A file's gzip bytes and their ETag, computed on first use only."""

    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.Lock()
        self._body: bytes | None = None
        self._etag = ""

    def get(self) -> tuple[bytes, str]:
        with self._lock:
            if self._body is None:
                # mtime=0: the same bytes (and ETag) in every process.
                self._body = gzip.compress(self.path.read_bytes(), 9, mtime=0)
                self._etag = "gz-" + hashlib.sha256(self._body).hexdigest()[:32]
            return self._body, self._etag


PLOTLY_GZ = Precompressed(PLOTLY_JS)


def accepts_gzip() -> bool:
    """``gzip`` (or ``*``) with a quality above zero in Accept-Encoding."""
    return request.accept_encodings.quality("gzip") > 0


@bp.get("/vendor/plotly-<version>.min.js")
def plotly_js(version: str):
    if version != PLOTLY_VERSION or not PLOTLY_JS.exists():
        abort(404)
    if accepts_gzip():
        body, etag = PLOTLY_GZ.get()
        gzipped = Response(body, mimetype="text/javascript")
        gzipped.headers["Content-Encoding"] = "gzip"
        gzipped.set_etag(etag)
        response = gzipped.make_conditional(request)
    else:
        response = send_file(PLOTLY_JS, mimetype="text/javascript", max_age=ONE_YEAR)
    # One URL, two bodies: caches must key on the request's Accept-Encoding.
    response.vary.add("Accept-Encoding")
    response.headers["Cache-Control"] = IMMUTABLE
    return response


@bp.get("/favicon.ico")
def favicon():
    """Browsers ask for /favicon.ico whatever the page links; answer with
    the SVG icon rather than a 404 in every log."""
    path = Path(current_app.static_folder or "static") / "favicon.svg"
    return send_file(path, mimetype="image/svg+xml", max_age=ONE_DAY)


@bp.app_context_processor
def plotly_url():
    return {"plotly_version": PLOTLY_VERSION}
