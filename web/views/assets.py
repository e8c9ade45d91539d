"""plotly.js from our own origin, cached for a year, and the site icon.

Two builds of plotly.js. ``charts`` holds only the trace types the dashboard
draws: ``frontend/`` bundles it at set-up (``scripts/bootstrap.sh install``;
1.2 MB, 0.43 MB gzipped). The Python wheel ships the full one (4.8 MB, 1.5 MB
gzipped). Pages load ``charts`` unless ``PLOTLY_BUNDLE`` is ``full``; when it
is not built, or was built from another plotly.js version than the wheel's
(whose figures the server makes), they load the full one and the log says
why, once per process.

Each URL names its bytes (the wheel's version, the bundle's digest), so an
upgrade or a rebuild changes the URL and browsers never run a stale copy. A
client that accepts gzip gets a copy compressed once per process
(compressing per request would cost ~0.3 s of CPU for the full file)."""

from __future__ import annotations

import gzip
import hashlib
import logging
import re
import threading
from collections.abc import Callable
from pathlib import Path

import plotly
from flask import Blueprint, Response, abort, current_app, request, send_file, url_for
from flask.typing import ResponseReturnValue
from werkzeug.wrappers import Response as BaseResponse

from config import PROJECT_ROOT

bp = Blueprint("assets", __name__)
log = logging.getLogger(__name__)
PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
PLOTLY_VERSION = plotly.__version__
CHARTS_JS = PROJECT_ROOT / "frontend" / "dist" / "plotly-charts.min.js"
ONE_YEAR = 365 * 24 * 3600
ONE_DAY = 24 * 3600
IMMUTABLE = f"public, max-age={ONE_YEAR}, immutable"
BANNER = re.compile(rb"plotly\.js v(\d[\w.+-]*)")  # "/*! plotly.js v4.1.1 (...)"


def plotly_js_version(path: Path) -> str | None:
    """The plotly.js version a build names in its opening comment."""
    with path.open("rb") as script:
        match = BANNER.search(script.read(1024))
    return match.group(1).decode() if match else None


class Precompressed:
    """A file's gzip bytes and their ETag, computed on first use only."""

    def __init__(self, path: Path, body: bytes | None = None):
        self.path = path
        self._source = body
        self._lock = threading.Lock()
        self._body: bytes | None = None
        self._etag = ""

    def get(self) -> tuple[bytes, str]:
        with self._lock:
            if self._body is None:
                source = self._source or self.path.read_bytes()
                # mtime=0: the same bytes (and ETag) in every process.
                self._body = gzip.compress(source, 9, mtime=0)
                self._etag = "gz-" + hashlib.sha256(self._body).hexdigest()[:32]
            return self._body, self._etag


class Built:
    """The bundle's bytes as read once, their digest and a gzip copy."""

    def __init__(self, path: Path, body: bytes):
        self.body = body
        self.digest = hashlib.sha256(body).hexdigest()[:16]
        self.gzipped = Precompressed(path, body)


class ChartsBundle:
    """The set-up's build, read on first use; None for the whole process
    when it is missing or of another plotly.js than ``wanted`` (restart the
    app after building it)."""

    def __init__(self, path: Path, wanted: Path = PLOTLY_JS):
        self.path, self.wanted = path, wanted
        self._lock = threading.Lock()
        self._loaded = False
        self._built: Built | None = None

    def get(self) -> Built | None:
        with self._lock:
            if not self._loaded:
                self._built, self._loaded = self._load(), True
            return self._built

    def _load(self) -> Built | None:
        fallback = f"pages load the full plotly.js of the wheel ({self.wanted})"
        if not self.path.exists():
            log.warning(
                "%s is not built (bash scripts/bootstrap.sh install builds it): %s",
                self.path,
                fallback,
            )
            return None
        built_from, wheel = plotly_js_version(self.path), plotly_js_version(self.wanted)
        if built_from != wheel:
            log.warning(
                "%s holds plotly.js %s, the wheel %s (rebuild it with bash "
                "scripts/bootstrap.sh install): %s",
                self.path,
                built_from,
                wheel,
                fallback,
            )
            return None
        return Built(self.path, self.path.read_bytes())


PLOTLY_GZ = Precompressed(PLOTLY_JS)
CHARTS = ChartsBundle(CHARTS_JS)


def accepts_gzip() -> bool:
    """``gzip`` (or ``*``) with a quality above zero in Accept-Encoding."""
    return request.accept_encodings.quality("gzip") > 0


def _gzipped(compressed: Precompressed) -> BaseResponse:
    body, etag = compressed.get()
    response = Response(body, mimetype="text/javascript")
    response.headers["Content-Encoding"] = "gzip"
    response.set_etag(etag)
    return response.make_conditional(request)


def _immutable(response: BaseResponse) -> BaseResponse:
    # One URL, two bodies: caches must key on the request's Accept-Encoding.
    response.vary.add("Accept-Encoding")
    response.headers["Cache-Control"] = IMMUTABLE
    return response


@bp.get("/vendor/plotly-<version>.min.js")
def plotly_js(version: str) -> ResponseReturnValue:
    if version != PLOTLY_VERSION or not PLOTLY_JS.exists():
        abort(404)
    if accepts_gzip():
        return _immutable(_gzipped(PLOTLY_GZ))
    return _immutable(
        send_file(PLOTLY_JS, mimetype="text/javascript", max_age=ONE_YEAR)
    )


@bp.get("/vendor/charts/plotly-<digest>.min.js")
def charts_js(digest: str) -> ResponseReturnValue:
    built = CHARTS.get()
    if built is None or digest != built.digest:
        abort(404)
    if accepts_gzip():
        return _immutable(_gzipped(built.gzipped))
    plain = Response(built.body, mimetype="text/javascript")
    plain.set_etag("id-" + built.digest)
    return _immutable(plain.make_conditional(request))


def plotly_src() -> str:
    """The URL of the plotly.js a page with charts loads."""
    if current_app.config["PLOTLY_BUNDLE"] == "charts":
        built = CHARTS.get()
        if built is not None:
            return url_for("assets.charts_js", digest=built.digest)
    return url_for("assets.plotly_js", version=PLOTLY_VERSION)


@bp.get("/favicon.ico")
def favicon() -> ResponseReturnValue:
    """Browsers ask for /favicon.ico whatever the page links; answer with
    the SVG icon rather than a 404 in every log."""
    path = Path(current_app.static_folder or "static") / "favicon.svg"
    return send_file(path, mimetype="image/svg+xml", max_age=ONE_DAY)


@bp.app_context_processor
def plotly_url() -> dict[str, Callable[[], str]]:
    return {"plotly_src": plotly_src}
