"""A finished run's pages as its view link shows them, served as stored bytes
(issue 61: a lab of 100 readers on one link). The page of a view link is
the same for each of its readers: it is rendered once per version of what
it shows, language and URL (the token and the query are in the URL), kept
as bytes with the CSP nonce it was rendered with and an ``ETag`` (a hash of
those bytes), and sent as they are; a reader whose browser already holds
them (``If-None-Match``) gets a 304 with no body.

Only a finished run (``core.status.FINAL_RUN``) through its view token: a
running run's page changes with every result, and the owner's page (manage
token) carries its own CSRF token in its forms; both are rendered for each
request and never stored by the browser (``Cache-Control: no-store``).

The version is asked of the database on every request (what the page shows
changes with a rename, a tag, a comment, a label: ``shown_version``), so a
stored page is never older than its data. The nonce is the one the page was
rendered with, for all its readers, derived from the page (URL, language)
and its version with the app's secret (``page_nonce``): every worker renders
the same bytes, and a new version, a new language or a new query is a new
rendering with a new nonce, so nobody can know a nonce before the page that
carries it exists. The response's CSP header names that same
nonce, for a 200 and a 304 alike (a browser merges a 304's headers into the
page it keeps: a fresh nonce there would block the kept page's scripts).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import hmac
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, NamedTuple

from flask import Response, current_app, g, request
from flask_babel import get_locale

from core.status import FINAL_RUN
from web.presentation.single_flight import SingleFlight
from web.security.headers import csp_nonce
from web.views import assets

if TYPE_CHECKING:
    from store.models import Run


class Stored(NamedTuple):
    """A rendered page: the nonce it carries, its bytes, a gzip copy, ETag."""

    nonce: str
    body: bytes
    gzipped: bytes
    etag: str


# every view link's stored pages in this process, the 64 most recently used
# (as many as the run pages' parts: a query varied on purpose costs renders,
# as before, but no more memory than 64 pages and their gzip copies)
PAGES = SingleFlight(size=64, previous=False)
# a browser keeps the page but asks before each use; no shared cache keeps it
CACHE_CONTROL = "private, no-cache"


def storable(run: Run) -> bool:
    """A page that may be stored: a finished run read through its view link."""
    return run.status in FINAL_RUN and not g.get("manage_token")


def page_nonce(family: Hashable, version: Hashable) -> str:
    """The nonce of one rendering: derived from the page and its version
    with the app's secret, so every worker renders the same bytes (the same
    ETag: a reader's 304 holds whichever worker answers) and nobody without
    the secret can tell it before the page exists."""
    secret = str(current_app.secret_key).encode()
    digest = hmac.new(secret, repr((family, version)).encode(), "sha256").digest()
    return base64.urlsafe_b64encode(digest[:16]).decode().rstrip("=")


def serve(kind: str, version: Hashable, build: Callable[[], str]) -> Response:
    """The page ``build`` renders, from the stored bytes of ``version`` when
    they exist (gzipped once, for a reader who accepts it); a 304 when the
    reader holds them already."""
    family = (kind, request.full_path, str(get_locale()))

    def render() -> Stored:
        g.csp_nonce = page_nonce(family, version)
        body = build().encode()
        etag = hashlib.sha256(body).hexdigest()[:32]
        # mtime=0: the same bytes, so the same ETag, in every worker
        return Stored(csp_nonce(), body, gzip.compress(body, 6, mtime=0), etag)

    stored = PAGES.get(family, version, render)
    g.csp_nonce = stored.nonce  # the CSP header names the stored page's nonce
    if assets.accepts_gzip():
        response = Response(stored.gzipped, mimetype="text/html")
        response.headers["Content-Encoding"] = "gzip"
        response.set_etag(f"{stored.etag}-gz")  # another representation
    else:
        response = Response(stored.body, mimetype="text/html")
        response.set_etag(stored.etag)
    response.headers["Cache-Control"] = CACHE_CONTROL
    response.vary.update(("Cookie", "Accept-Language", "Accept-Encoding"))
    response.make_conditional(request)  # a 304 when If-None-Match matches
    return response
