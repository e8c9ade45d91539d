"""A database that cannot answer (down, restarting, its connections lost)
is a 503 with a message and ``Retry-After`` on every page and API route,
never a 500 (issue 57: during a PostgreSQL outage the run's status API and
page answered 500). The outage itself, with a real PostgreSQL stopped and
started: tests/faults/test_postgres_outage.py."""

from __future__ import annotations

import html
import sqlite3

from sqlalchemy import event


def test_every_route_answers_503_while_the_database_cannot_be_reached(app_factory):
    app = app_factory(PROPAGATE_EXCEPTIONS=False)  # the 500 path, as served
    client, storage = app.test_client(), app.extensions["storage"]
    token = client.post("/api/v1/workspaces", json={"name": "w"}).get_json()["token"]

    def unreachable(_connection, _record):
        raise sqlite3.OperationalError("unable to open database file")

    event.listen(storage.engine, "connect", unreachable)
    storage.engine.dispose()  # every connection is a new one now: refused
    try:
        api = client.get(f"/api/v1/runs/{'x' * 32}")
        assert api.status_code == 503, api.get_data(as_text=True)[:300]
        [error] = api.get_json()["errors"]
        assert error["code"] == "database_unavailable"
        assert "database cannot be reached" in error["message"]
        assert int(api.headers["Retry-After"]) > 0
        for path in (f"/r/{'x' * 32}", f"/w/{token}"):
            page = client.get(path)
            assert page.status_code == 503, (path, page.get_data(as_text=True)[:300])
            assert error["message"] in html.unescape(page.get_data(as_text=True))
            assert int(page.headers["Retry-After"]) > 0
        assert client.get("/readyz").status_code == 503
        assert client.get("/healthz").status_code == 200  # the process serves
    finally:  # reachable again: the teardown cancels what runs
        event.remove(storage.engine, "connect", unreachable)
