"""No other site can change anything here through a visitor's browser.

The HTTP API takes plain multipart POSTs without a CSRF token (the CLI, curl
and scripts have no session), so a page on any site could post an upload,
with ``samples=15``, through the browser of a user behind the cookie or
Basic-auth proxy a team puts in front: spending the lab's judge budget. A
browser says where a request comes from: ``Sec-Fetch-Site`` (every current
browser) and ``Origin`` (on every cross-origin POST). A state-changing API
request is refused (403) when either says another site; programs send
neither and are let through. The same rule as Go's ``CrossOriginProtection``
and Django's origin check; the forms keep their CSRF token as well.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from urllib.parse import urlsplit

from flask import Blueprint, current_app, jsonify, request
from flask.typing import ResponseReturnValue
from werkzeug.datastructures import Headers

from core.problems import Rejected
from translations import translate_problems

CHANGES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
SAME_SITE = frozenset({"same-origin", "none"})  # "none": typed by the user


def from_elsewhere(
    method: str, headers: Headers | Mapping[str, str], host: str
) -> bool:
    """Whether a browser sent this state-changing request from another site.

    >>> from_elsewhere("POST", {"Sec-Fetch-Site": "cross-site"}, "a.example")
    True
    >>> from_elsewhere("POST", {"Origin": "http://evil.example"}, "a.example")
    True
    >>> from_elsewhere("POST", {"Origin": "http://a.example"}, "a.example")
    False
    >>> from_elsewhere("POST", {}, "a.example"), from_elsewhere("GET", {"Origin": "x"}, "a")
    (False, False)
    """
    if method not in CHANGES:
        return False
    fetched_from = headers.get("Sec-Fetch-Site")
    if fetched_from is not None and fetched_from not in SAME_SITE:
        return True
    origin = headers.get("Origin")
    if origin is None:
        return False
    return origin == "null" or urlsplit(origin).netloc.lower() != host.lower()


def key_missing(
    method: str, headers: Headers | Mapping[str, str], keys: list[str]
) -> bool:
    """With ``API_KEYS`` set, whether a state-changing request lacks one. The
    app's own pages (same-origin fetches) need none: whoever reached them
    passed the deployment's own sign-in.

    >>> key_missing("POST", {"Authorization": "Bearer k1"}, ["k1"])
    False
    >>> key_missing("POST", {}, ["k1"]), key_missing("POST", {}, [])
    (True, False)
    >>> key_missing("POST", {"Sec-Fetch-Site": "same-origin"}, ["k1"])
    False
    """
    if not keys or method not in CHANGES:
        return False
    if headers.get("Sec-Fetch-Site") == "same-origin":
        return False
    given = headers.get("Authorization", "").removeprefix("Bearer ").strip()
    return not any(hmac.compare_digest(given.encode(), key.encode()) for key in keys)


def protect(bp: Blueprint) -> None:
    """Refuse cross-site state changes on ``bp`` (the API), and with
    ``API_KEYS`` set, programs without a key."""

    @bp.before_request
    def refuse_cross_site() -> ResponseReturnValue | None:
        if from_elsewhere(request.method, request.headers, request.host):
            problem = Rejected.one("cross_site", http=403)
            return jsonify(errors=translate_problems(problem.errors)), 403
        if key_missing(request.method, request.headers, current_app.config["API_KEYS"]):
            problem = Rejected.one("api_key_required", http=401)
            return jsonify(errors=translate_problems(problem.errors)), 401
        return None
