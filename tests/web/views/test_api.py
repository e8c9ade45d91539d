"""HTTP API v1: every status code docs/api.md documents."""

from __future__ import annotations

import io
import time
from pathlib import Path

import pytest

from metrics import registry
from tests import crafted

ROOT = Path(__file__).resolve().parents[3]
FINAL = ("done", "partial", "failed", "cancelled")


def upload(client, data: bytes, name="logs.jsonl", **fields):
    body = {"file": (io.BytesIO(data), name), **fields}
    return client.post("/api/v1/runs", data=body, content_type="multipart/form-data")


def sample_bytes() -> bytes:
    return (ROOT / "sample_data.jsonl").read_bytes()


def wait_final(client, token, timeout=600):
    """The final status, with ``results`` the whole document (rows too)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        body = client.get(f"/api/v1/runs/{token}").get_json()
        if body["status"] in FINAL:
            body["results"] = results_of(client, token)
            return body
        time.sleep(0.1)
    raise AssertionError("run did not finish")


def settled(client, url: str, timeout=600):
    """GET ``url`` again while it answers 202 "computing" (a comparison a
    worker is still computing); the first other answer."""
    deadline = time.monotonic() + timeout
    while True:
        response = client.get(url)
        if response.status_code != 202 or time.monotonic() > deadline:
            return response
        time.sleep(0.1)


def results_of(client, token) -> dict:
    """The whole results document, streamed by ``/results``."""
    response = client.get(f"/api/v1/runs/{token}/results")
    assert response.status_code == 200
    return response.get_json()


def test_202_then_status_and_results(client):
    response = upload(client, sample_bytes(), name="对话日志.jsonl")
    assert response.status_code == 202
    created = response.get_json()
    assert set(created) == {
        "id",
        "token",
        "manage_token",
        "status_url",
        "dashboard_url",
        "manage_url",
    }
    assert created["dashboard_url"].endswith(f"/r/{created['token']}")
    assert len(created["token"]) >= 22
    body = wait_final(client, created["token"])
    # ERTD cannot apply to the Chinese and Korean sessions: not_applicable
    # with a reason, which is no failure, so the run is done.
    assert body["status"] == "done"
    assert body["progress"]["done"] == body["progress"]["total"] > 0
    results = body["results"]
    assert results["schema"] == "personasteer.results/v1"
    assert results["run"]["file"]["name"] == "对话日志.jsonl"
    judged = {
        row["status"] for row in results["rows"] if row["metric"] in ("al", "binary")
    }
    assert judged == {
        "not_configured"
    }  # no judge here; deterministic suites still score
    assert {"ok"} <= {row["status"] for row in results["rows"]}
    assert not [row for row in results["rows"] if row["status"] == "unscored"]
    skipped = [row for row in results["rows"] if row["status"] == "not_applicable"]
    assert skipped and all(row["metric"] == "ertd" and row["note"] for row in skipped)


def test_status_while_running_has_no_results_yet(app, client, tmp_path):
    from testing.judge_server import ScriptedJudge

    with ScriptedJudge(latency=0.2) as judge:
        app.config.update(
            JUDGE_API_URL=judge.url, JUDGE_MODEL="scripted", JUDGE_CONCURRENCY=1
        )
        created = upload(client, sample_bytes()).get_json()
        token, manage = created["token"], created["manage_token"]
        body = client.get(f"/api/v1/runs/{token}").get_json()
        assert body["status"] in ("queued", "running")
        assert body["results"] is None
        assert client.post(f"/api/v1/runs/{token}/cancel").status_code == 403  # view
        assert client.post(f"/api/v1/runs/{manage}/cancel").status_code == 202
        assert client.post(f"/api/v1/runs/{manage}/cancel").status_code == 409


@pytest.mark.parametrize(
    ("data", "name", "code", "line"),
    [
        (b'{"session_id": 1}\n', "x.jsonl", "wrong_type", 1),
        (b"\n\n{oops\n", "x.jsonl", "invalid_json", 3),
        (b"", "x.jsonl", "empty_file", None),
        (b"{}", "x.txt", "bad_extension", None),
    ],
)
def test_400_lists_errors_with_line_numbers(client, data, name, code, line):
    response = upload(client, data, name=name)
    assert response.status_code == 400
    first = response.get_json()["errors"][0]
    assert (first["code"], first["line"]) == (code, line)
    assert first["message"]


def test_400_without_a_file(client):
    response = client.post("/api/v1/runs", data={}, content_type="multipart/form-data")
    assert response.status_code == 400
    assert response.get_json()["errors"][0]["code"] == "missing_file"


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        ({"suites": "slots"}, "bad_suite"),  # the file has no ground_truth_slots
        ({"suites": "nope"}, "bad_suite"),
        ({"samples": "0"}, "samples_out_of_range"),
        ({"quality_weights": '{"coherence": 2}'}, "bad_weights"),
    ],
)
def test_400_for_bad_options(client, tmp_path, fields, code):
    path = crafted.write(tmp_path / "c.jsonl", crafted.alignment_sessions())
    response = upload(client, path.read_bytes(), **fields)
    assert response.status_code == 400
    assert response.get_json()["errors"][0]["code"] == code


def rejected_large_upload(client, path: str):
    """The test client spools a large multipart body to a temporary file and
    leaves it open when the server answers 413 before reading it: close it."""
    body = {"file": (io.BytesIO(b" " * (2 * 1024 * 1024)), "big.jsonl")}
    response = client.post(path, data=body, content_type="multipart/form-data")
    response.request.environ["wsgi.input"].close()
    return response


def test_413_when_too_large(app_factory):
    client = app_factory(MAX_UPLOAD_MB=1).test_client()
    response = rejected_large_upload(client, "/api/v1/runs")
    assert response.status_code == 413
    assert response.get_json()["errors"][0]["code"] == "too_large"


def test_503_when_the_queue_is_down(app_factory):
    app = app_factory(REDIS_URL="redis://127.0.0.1:1/0")
    client = app.test_client()
    response = upload(client, sample_bytes())
    assert response.status_code == 503
    assert response.get_json()["errors"][0]["code"] == "queue_unavailable"
    [run] = app.extensions["storage"].runs.unfinished_runs() or [None]
    assert run is None  # recorded as failed, not left queued


def test_404_for_unknown_tokens(client):
    assert client.get("/api/v1/runs/not-a-token").status_code == 404
    assert client.post("/api/v1/runs/not-a-token/cancel").status_code == 404
    assert (
        client.get("/api/v1/runs/not-a-token").get_json()["errors"][0]["code"]
        == "not_found"
    )


def test_validate_endpoint_reports_suites(client, tmp_path):
    path = crafted.write(tmp_path / "c.jsonl", crafted.alignment_sessions())
    body = {"file": (io.BytesIO(path.read_bytes()), "c.jsonl")}
    report = client.post(
        "/api/v1/validate", data=body, content_type="multipart/form-data"
    ).get_json()
    assert report["valid"] is True
    # no optional blocks: the suites that need none, in the registry's order
    needing_no_block = [
        suite.name
        for suite in registry.suites()
        if not suite.session_fields and not suite.response_fields
    ]
    assert report["suites"] == needing_no_block
    assert len(needing_no_block) >= 2


def test_a_405_names_the_methods_the_route_allows(client):
    """Issue 60: the JSON 405 answer dropped werkzeug's ``Allow`` header
    (RFC 9110 requires it), on 14 operations."""
    for method, url, allowed in [
        ("TRACE", "/api/v1/workspaces/x", {"GET", "PATCH", "DELETE"}),
        ("PUT", "/api/v1/runs/x", {"GET", "PATCH", "DELETE"}),
        ("GET", "/api/v1/runs", {"POST"}),
        ("DELETE", "/api/v1/compare", {"GET"}),
    ]:
        answer = client.open(url, method=method)
        assert answer.status_code == 405, (method, url)
        said = {m.strip() for m in answer.headers.get("Allow", "").split(",")}
        assert allowed <= said, (method, url, said)
        assert answer.get_json()["errors"][0]["code"] == "method_not_allowed"
