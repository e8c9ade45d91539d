"""The web layer: pages, the JSON API, assets, error pages and hardening."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from flask import Flask, Response, jsonify, render_template, request, url_for
from flask.json.provider import DefaultJSONProvider
from flask.typing import ResponseReturnValue
from flask_wtf.csrf import CSRFError, CSRFProtect
from werkzeug.exceptions import HTTPException

from core.problems import Problem
from core.status import FINAL_RUN, RETRYABLE_RUN, RowStatus, RunStatus
from core.telemetry import HTTP_ERRORS
from dataset import user_json
from metrics import notes
from metrics.results import judge_models
from reports import formatting, tables
from store.faults import database_unavailable, disk_full
from translations import problem_message
from web.security import access, limits
from web.security import headers as security
from web.views import (
    annotation_pages,
    api,
    assets,
    compare,
    conversion,
    downloads,
    explore_pages,
    forms,
    health,
    pages,
    prometheus,
    replies,
    workspace_pages,
)

if TYPE_CHECKING:
    from store.models import Run

csrf = CSRFProtect()
# a database that cannot answer (down, restarting) is asked again after this
DATABASE_RETRY_AFTER_S = 10


def wants_json() -> bool:
    return request.path.startswith("/api/")


def error_response(
    status: int, code: str, path: str = "", **params: Any
) -> tuple[Response | str, int]:
    """JSON for the API, a friendly page otherwise; never a stack trace."""
    problem = Problem.make(None, path, code, **params).to_dict()
    message = problem_message(problem)
    if wants_json():
        return jsonify(errors=[{**problem, "message": message}]), status
    return render_template("error.html", status=status, message=message), status


def with_args(**changes: object) -> str:
    """This page's URL with some query arguments changed (None removes one).

    Built from the matched route, never from the raw path: a path such as
    ``/%5Cevil.example/x`` must not become a link to ``//evil.example/x``.
    A page without a route (a 404) links to the home page instead."""
    args: dict[str, object] = {**request.args.to_dict()}  # templates pass numbers
    args.update(changes)
    query = urlencode({k: v for k, v in args.items() if v is not None})
    if request.url_rule is None or request.endpoint is None:
        path = url_for("pages.index")
    else:
        path = url_for(request.endpoint, **(request.view_args or {}))
    return f"{path}?{query}" if query else path


def failure_message(run: Run) -> str | None:
    """Why a run failed, in the reader's language (older runs: their English text)."""
    if run.failure:
        return problem_message(run.failure)
    return run.error


def row_note(row: dict[str, Any]) -> str:
    """A row's note in the reader's language (older rows: their English text)."""
    return notes.translate(
        row.get("note_code"), row.get("note_params"), row.get("note")
    )


def agreement_reason(entry: dict[str, Any]) -> str:
    """Why a judge agreement statistic is missing, in the reader's language."""
    return notes.translate(
        entry.get("reason_code"), entry.get("reason_params"), entry.get("reason")
    )


def pretty_json(value: object) -> str:
    """Readable JSON for drill-down details; autoescaping makes it HTML-safe."""
    return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True)


class BoundedJSON(DefaultJSONProvider):
    """Request bodies read by ``dataset.user_json``: a body nested 100,000
    deep or with a 5,000-digit integer is a ``ValueError``, which Flask
    answers 400, not a ``RecursionError`` answered 500."""

    def loads(self, s: str | bytes, **kwargs: Any) -> Any:
        text = s.decode("utf-8") if isinstance(s, bytes | bytearray) else s
        return user_json.loads(text)


def init_app(app: Flask) -> None:
    app.json = BoundedJSON(app)
    app.jinja_env.globals.update(
        with_args=with_args,
        RunStatus=RunStatus,
        RowStatus=RowStatus,
        FINAL_RUN=FINAL_RUN,
        RETRYABLE_RUN=RETRYABLE_RUN,
        run_status_labels=lambda: {
            status.value: str(status.label) for status in RunStatus
        },
        failure_message=failure_message,
        problem_message=problem_message,
        row_note=row_note,
        agreement_reason=agreement_reason,
        value_title=tables.value_title,
        delta_title=tables.delta_title,
        table_caption=tables.table_caption,
        judge_models=judge_models,
        **formatting.GLOBALS,
    )
    app.jinja_env.filters["pretty_json"] = pretty_json
    security.init_app(app)
    access.init_app(app)
    csrf.init_app(app)
    csrf.exempt(api.bp)  # programmatic clients; no cookies or sessions involved
    csrf.exempt(annotation_pages.labelling)  # the token in the URL; JSON only
    csrf.exempt(annotation_pages.api)  # an API call: no session, no cookie
    csrf.exempt(conversion.bp)  # the same: nothing stored, cross-site posts refused
    app.register_blueprint(pages.bp)
    app.register_blueprint(api.bp)
    app.register_blueprint(conversion.bp)
    app.register_blueprint(annotation_pages.owner)
    app.register_blueprint(annotation_pages.api)
    app.register_blueprint(annotation_pages.labelling)
    app.register_blueprint(assets.bp)
    app.register_blueprint(explore_pages.bp)
    app.register_blueprint(downloads.bp)
    app.register_blueprint(workspace_pages.bp)
    app.register_blueprint(compare.bp)
    app.register_blueprint(replies.bp)
    app.register_blueprint(health.bp)
    app.register_blueprint(prometheus.bp)
    limits.init_app(app)  # wraps the views above, so it comes after them

    @app.before_request
    def refuse_unstorable_text() -> ResponseReturnValue | None:
        """A path or query value no database can look up (NUL: PostgreSQL
        refuses it; a lone surrogate) is a 400, never a 500."""
        given = [
            *(request.view_args or {}).values(),
            *request.args.keys(),
            *request.args.values(),
        ]
        if request.mimetype == "application/x-www-form-urlencoded":
            given += [*request.form.keys(), *request.form.values()]
        if not all(forms.storable(str(value)) for value in given):
            return error_response(400, "bad_characters", path="url")
        return None

    @app.errorhandler(400)
    def bad_request(
        _error: HTTPException,
    ) -> ResponseReturnValue:  # e.g. a JSON body that is no JSON we read
        return error_response(400, "bad_json_body")

    @app.errorhandler(403)
    def forbidden(_error: HTTPException) -> ResponseReturnValue:
        return error_response(403, "view_only")  # a view token, not the manage one

    @app.errorhandler(404)
    def not_found(_error: HTTPException) -> ResponseReturnValue:
        return error_response(404, "not_found")

    @app.errorhandler(405)
    def not_allowed(error: HTTPException) -> ResponseReturnValue:
        """With werkzeug's ``Allow`` header (RFC 9110), which a handler's
        own response would otherwise drop."""
        page, status = error_response(405, "method_not_allowed")
        allowed = dict(error.get_headers()).get("Allow")
        return page, status, ({"Allow": allowed} if allowed else {})

    @app.errorhandler(413)
    def too_large(_error: HTTPException) -> ResponseReturnValue:
        return error_response(413, "too_large", limit=app.config["MAX_UPLOAD_MB"])

    @app.errorhandler(CSRFError)
    def csrf_failed(_error: CSRFError) -> ResponseReturnValue:
        return error_response(400, "csrf")

    @app.errorhandler(500)
    def server_error(error: HTTPException) -> ResponseReturnValue:
        # a write the database's full disk refused (creating a workspace,
        # renaming a run): said as an upload on a full disk says it
        original = getattr(error, "original_exception", None)
        if disk_full(original):
            return error_response(507, "storage_full")
        if database_unavailable(original):  # down, restarting: not for long
            page, status = error_response(503, "database_unavailable")
            return page, status, {"Retry-After": str(DATABASE_RETRY_AFTER_S)}
        HTTP_ERRORS.inc()
        return error_response(500, "internal")
