"""Operator probes: /healthz answers; /readyz checks the database and, in
team mode, the broker, and names what is unreachable with a 503."""

from __future__ import annotations

from tests import services


def test_healthz_and_readyz_in_embedded_mode(client):
    assert client.get("/healthz").get_json() == {"status": "ok"}
    ready = client.get("/readyz")
    assert ready.status_code == 200
    checks = ready.get_json()["checks"]
    assert checks.pop("disk")["ok"] is True  # above MIN_FREE_MB
    assert checks == {
        "database": {"ok": True, "detail": "reachable"},
        "broker": {"ok": True, "detail": "embedded"},
        "workers": {"ok": True, "detail": "embedded"},
    }


def test_readyz_names_an_unreachable_broker(app_factory):
    app = app_factory(REDIS_URL="redis://127.0.0.1:1/0")  # nothing listens there
    reply = app.test_client().get("/readyz")
    assert reply.status_code == 503
    body = reply.get_json()
    assert body["status"] == "unavailable"
    assert body["checks"]["broker"] == {
        "ok": False,
        "detail": "unreachable: ConnectionError",
    }
    assert body["checks"]["workers"] == {
        "ok": False,
        "detail": "unknown: the broker is unreachable",
    }
    assert body["checks"]["database"]["ok"] is True


def test_readyz_names_an_unreachable_database(tmp_path):
    from app import create_app
    from tests.pipeline_support import base_config

    services.require("Redis", "127.0.0.1", 6379)
    app = create_app(
        {
            **base_config(tmp_path),
            "DATABASE_URL": "postgresql+psycopg://postgres@127.0.0.1:1/test",
            "REDIS_URL": services.REDIS_URL,
            "DB_AUTO_UPGRADE": False,
        }
    )  # team mode: no embedded worker to stop, nothing written anywhere
    reply = app.test_client().get("/readyz")
    app.extensions["storage"].engine.dispose()
    assert reply.status_code == 503
    checks = reply.get_json()["checks"]
    assert checks["database"] == {
        "ok": False,
        "detail": "unreachable: OperationalError",
    }
    assert checks["broker"]["ok"] is True
