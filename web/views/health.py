"""Operator probes. ``GET /healthz``: the process answers (liveness).
``GET /readyz``: what serving needs is reachable — the database, in team
mode the Redis broker and at least one live Celery worker (its beat in
Redis: ``pipeline/worker_beats.py``), and free disk above ``MIN_FREE_MB`` —
else 503 naming the failing part (readiness).
Neither is rate-limited, and neither says more than "reachable" or the kind
of failure (no URL, no credentials)."""

from __future__ import annotations

import shutil

from flask import Blueprint, current_app, jsonify
from flask.typing import ResponseReturnValue

from web import extensions

bp = Blueprint("health", __name__)
PROBE_TIMEOUT_S = 2


@bp.get("/healthz")
def healthz() -> ResponseReturnValue:
    return jsonify(status="ok")


@bp.get("/readyz")
def readyz() -> ResponseReturnValue:
    broker, workers = _broker_and_workers()
    checks = {"database": _database(), "broker": broker, "workers": workers}
    checks["disk"] = _disk()
    ready = all(check["ok"] for check in checks.values())
    status = "ready" if ready else "unavailable"
    return jsonify(status=status, checks=checks), 200 if ready else 503


def _disk() -> dict[str, object]:
    """Free space where uploads are stored, against ``MIN_FREE_MB``: below
    it an upload would fail half written, so the process is not ready."""
    config = current_app.config
    try:
        free_mb = shutil.disk_usage(config["UPLOAD_FOLDER"]).free // (1 << 20)
    except OSError as exc:
        return {"ok": False, "detail": f"unreadable: {type(exc).__name__}"}
    floor = config["MIN_FREE_MB"]
    if free_mb < floor:
        return {"ok": False, "detail": f"{free_mb} MB free, below {floor} MB"}
    return {"ok": True, "detail": f"{free_mb} MB free"}


def _database() -> dict[str, object]:
    from sqlalchemy import text  # loaded by the probe, not by the CLI
    from sqlalchemy.exc import SQLAlchemyError

    try:
        with extensions.storage().engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    except SQLAlchemyError as exc:
        return {"ok": False, "detail": f"unreachable: {type(exc).__name__}"}
    return {"ok": True, "detail": "reachable"}


def _broker_and_workers() -> tuple[dict[str, object], dict[str, object]]:
    """Redis answers, and some worker beat within ``ALIVE_S`` (one
    connection, three commands: cheap enough for every probe)."""
    url = current_app.config.get("REDIS_URL")
    if not url:  # embedded mode: the queue and its worker live in this app
        return {"ok": True, "detail": "embedded"}, {"ok": True, "detail": "embedded"}
    import redis

    from pipeline import worker_beats

    try:
        with redis.Redis.from_url(
            url, socket_connect_timeout=PROBE_TIMEOUT_S, socket_timeout=PROBE_TIMEOUT_S
        ) as client:
            client.ping()
            alive = worker_beats.alive(client)
    except redis.RedisError as exc:
        unknown = {"ok": False, "detail": "unknown: the broker is unreachable"}
        return {"ok": False, "detail": f"unreachable: {type(exc).__name__}"}, unknown
    if not alive:
        silent = f"no worker alive (none heard from in {worker_beats.ALIVE_S} s)"
        return {"ok": True, "detail": "reachable"}, {"ok": False, "detail": silent}
    return {"ok": True, "detail": "reachable"}, {"ok": True, "detail": f"{alive} alive"}
