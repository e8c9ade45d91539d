"""No other site's page can change anything through a visitor's browser
(web/security/cross_site.py): in Chromium, a page served on another loopback port
posts a multipart upload and a workspace to the API, as an attacker's page
would; nothing is created. The app's own pages and programs still can."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from werkzeug.serving import make_server

from tests import crafted
from tests.web.views.test_api import upload

ATTACK = """<!doctype html><html><body>
<form id="f" method="post" enctype="multipart/form-data" action="{site}/api/v1/runs">
<input type="hidden" name="samples" value="15"></form>
<script>
const data = new FormData();
data.append("file", new Blob([{line}], {{type: "application/json"}}), "x.jsonl");
window.attempts = Promise.all([
  fetch("{site}/api/v1/runs", {{method: "POST", mode: "no-cors", body: data}}),
  fetch("{site}/api/v1/workspaces", {{method: "POST", mode: "no-cors"}}),
]).then(() => "sent", (e) => "failed: " + e);
</script></body></html>"""


def serve(body: str) -> ThreadingHTTPServer:
    class Page(BaseHTTPRequestHandler):
        def do_GET(self):
            data = body.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def counts(app) -> tuple[int, int]:
    from sqlalchemy import func, select

    from store.models import Run, Workspace

    with app.extensions["storage"].engine.connect() as conn:
        runs = conn.execute(select(func.count()).select_from(Run)).scalar()
        spaces = conn.execute(select(func.count()).select_from(Workspace)).scalar()
    return runs, spaces


@pytest.mark.browser
def test_a_page_of_another_origin_cannot_create_a_run_or_a_workspace(
    app_factory, browser, tmp_path
):
    import json

    app = app_factory()
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    site = f"http://127.0.0.1:{server.server_port}"
    line = json.dumps(json.dumps(crafted.alignment_sessions()[0]) + "\n")
    attacker = serve(ATTACK.format(site=site, line=line))
    page = browser.new_page()
    try:
        page.set_default_timeout(60_000)
        page.goto(f"http://127.0.0.1:{attacker.server_port}/")
        assert page.evaluate("window.attempts") == "sent"  # the requests went out
        with page.expect_navigation():
            page.evaluate("document.getElementById('f').submit()")
        assert "another site" in page.content()
        assert counts(app) == (0, 0)
        # the app's own page still uploads (same origin), and programs still can
        page.goto(site + "/api/v1/openapi.json")
        same = page.evaluate(
            "fetch('/api/v1/workspaces', {method: 'POST'}).then(r => r.status)"
        )
        assert same == 201
        data = crafted.write(tmp_path / "a.jsonl", crafted.alignment_sessions())
        assert upload(app.test_client(), data.read_bytes()).status_code == 202
        assert counts(app)[0] == 1
    finally:
        page.close()
        for running in (server, attacker):
            running.shutdown()
            running.server_close()


def test_with_api_keys_programs_need_one(app_factory):
    app = app_factory(API_KEYS=["team-key"])
    client = app.test_client()
    refused = client.post("/api/v1/workspaces")
    assert refused.status_code == 401
    assert refused.get_json()["errors"][0]["code"] == "api_key_required"
    keyed = client.post(
        "/api/v1/workspaces", headers={"Authorization": "Bearer team-key"}
    )
    assert keyed.status_code == 201
    wrong = client.post("/api/v1/workspaces", headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401
    own_page = client.post(
        "/api/v1/workspaces", headers={"Sec-Fetch-Site": "same-origin"}
    )
    assert own_page.status_code == 201  # the app's own pages
    assert client.get("/api/v1/openapi.json").status_code == 200  # reading needs none
