"""Abuse limits at the door: how often one client address may start work.

Every upload is validated, stored and evaluated, and a retry re-queues the
failed items of a run; none of that needs an account, so without a brake one
address could fill the disk, the queue and the judge budget faster than fair
scheduling (pipeline/dispatch.py) can share them out. Flask-Limiter counts the
requests of the endpoints below per client, keyed like fair scheduling
(:func:`web.security.access.client_id`, a keyed hash: no address is stored), and answers
429 with ``Retry-After`` once a rate from ``config.py`` is spent. Reading pages
and polling the API are never counted, except comparisons across runs, which
read every row of their runs.

The counters live where the workers' state lives: Redis (``REDIS_URL``) in
team mode, so every web process shares them, and process memory in the
embedded mode. When Redis cannot be reached the request goes through (logged):
the upload then fails with the queue's own 503, and nothing else depends on it.

The limits are attached by endpoint name after the blueprints are registered,
so the views stay free of rate-limiting code; a renamed endpoint fails at
start-up rather than silently losing its limit.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from flask import Flask, Response, jsonify, render_template, request
from flask_limiter import Limiter
from flask_limiter.errors import RateLimitExceeded

from core.problems import Problem
from translations import problem_message
from web.security import access

if TYPE_CHECKING:
    from flask.typing import RouteCallable

# setting -> (scope, endpoints): the endpoints of one scope share one budget,
# so the web form and the API cannot be played against each other.
LIMITED_ENDPOINTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "RATE_LIMIT_UPLOADS": ("uploads", ("pages.create_run", "api.create_run")),
    "RATE_LIMIT_VALIDATIONS": (
        "validations",
        ("api.validate", "conversion.convert_upload"),
    ),
    "RATE_LIMIT_RETRIES": ("retries", ("pages.retry", "api.retry")),
    "RATE_LIMIT_WORKSPACES": ("workspaces", ("api.create_workspace",)),
    "RATE_LIMIT_JUDGE_CHECKS": ("judge_checks", ("pages.judge_check",)),
    "RATE_LIMIT_COMPARISONS": (
        "comparisons",
        ("compare.compare_api", "compare.compare_page", "compare.export"),
    ),
    "RATE_LIMIT_EXPLORE": ("explore", ("explore.diff", "explore.search")),
    "RATE_LIMIT_LABELS": ("labels", ("labelling.item", "labelling.save_label")),
}


def per_link() -> str:
    """Labels are counted per annotator link (the token in the URL), not per
    address: one link holder cannot spend another's budget, and labels
    through many links from one address are each bounded."""
    return "link:" + str((request.view_args or {}).get("token", ""))


KEYS = {"RATE_LIMIT_LABELS": per_link}  # scopes not counted per client address

# Counters in a shared Redis are recognisable (and removable) by this prefix.
KEY_PREFIX = "personasteer"


def storage_uri(config: Mapping[str, Any]) -> str:
    """Team mode counts in Redis, shared by every web process; embedded in memory.

    >>> storage_uri({"REDIS_URL": "redis://queue:6379/0"})
    'redis://queue:6379/0'
    >>> storage_uri({"REDIS_URL": None})
    'memory://'
    """
    url: str | None = config.get("REDIS_URL")
    return url or "memory://"


def init_app(app: Flask) -> Limiter:
    """Create the limiter and attach the configured rates to their endpoints."""
    config = app.config
    limiter = Limiter(
        access.client_id,
        app=app,
        storage_uri=storage_uri(config),
        # A moving window: "30 per hour" holds for any hour, not per clock hour
        # (a fixed window lets a client spend twice its rate across a boundary).
        strategy="moving-window",
        key_prefix=KEY_PREFIX,
        # An unreachable Redis must not turn uploads into 500s (see above).
        swallow_errors=True,
        # Retry-After is set by the 429 handler, for the 429 alone.
        headers_enabled=False,
        enabled=bool(config["RATE_LIMITS_ENABLED"]),
    )
    app.extensions["rate_limiter"] = limiter
    for setting, (scope, endpoints) in LIMITED_ENDPOINTS.items():
        rate = limiter.shared_limit(config[setting], scope, key_func=KEYS.get(setting))
        for endpoint in endpoints:
            if endpoint not in app.view_functions:
                raise RuntimeError(
                    f"{setting} names the endpoint {endpoint!r}, which does not exist"
                )
            view = app.view_functions[endpoint]
            # Flask types its table as "sync or async view"; the decorator
            # returns the same kind of callable it was given.
            app.view_functions[endpoint] = cast("RouteCallable", rate(view))

    @app.errorhandler(RateLimitExceeded)
    def too_many_requests(_error: RateLimitExceeded) -> Response:
        return rate_limited_response(retry_after_seconds(limiter))

    return limiter


def retry_after_seconds(limiter: Limiter) -> int:
    """Whole seconds until the spent rate admits a request again (at least 1)."""
    spent = limiter.current_limit
    if spent is None:  # not expected after a breach; one window is a safe answer
        return 60
    # window.reset_time is exact; RequestLimit.reset_at adds a second to it.
    return max(1, math.ceil(spent.window.reset_time - time.time()))


def rate_limited_response(seconds: int) -> Response:
    """The 429 in the shape of every other error (``web.error_response``): the
    ``errors`` list for the API, plus ``retry_after``; the error page otherwise."""
    problem = Problem.make(None, "", "rate_limited", seconds=seconds).to_dict()
    message = problem_message(problem)
    if request.path.startswith("/api/"):
        response = jsonify(
            errors=[{**problem, "message": message}], retry_after=seconds
        )
    else:
        page = render_template("error.html", status=429, message=message)
        response = Response(page, mimetype="text/html")
    response.status_code = 429
    response.headers["Retry-After"] = str(seconds)
    return response
