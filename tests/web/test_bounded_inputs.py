"""Every parser of user input is bounded (issue 46): input nested 100,000
deep, an integer of 5,000 digits or a CSV field over the csv module's
limit gets a 4xx with the problem, never a 500, in layout detection,
convert, validate, run submission, protocol files and JSON bodies."""

from __future__ import annotations

import io

import pytest

DEEP = b"[" * 100_000 + b"]" * 100_000
LINE = b'{"session_id":"s","user_profile":"p","user_personality":"x","rounds":[{"round":1,"user_message":"m","responses":{"A":"r"}}]}\n'
BIGINT = LINE.replace(b'"round":1', b'"round":' + b"9" * 5000)
DEEP_LINE = b'{"session_id": ' + DEEP + b"}\n"
HUGE_CSV = (
    b"user 1 personas,user 2 personas,Best Generated Conversation\n"
    + b'"'
    + b"x" * 200_000
    + b'",b,"User 1: hi\nUser 2: yo"\n'
)


@pytest.fixture
def client(app_factory):
    app = app_factory()
    app.config["PROPAGATE_EXCEPTIONS"] = False  # a 500 is answered, not raised
    return app.test_client()


def post(client, url: str, body: bytes, name: str, **form):
    data = {"file": (io.BytesIO(body), name), **form}
    return client.post(url, data=data, content_type="multipart/form-data")


@pytest.mark.parametrize(
    ("url", "body", "name", "form"),
    [
        ("/api/v1/validate", DEEP_LINE, "f.jsonl", {}),
        ("/api/v1/validate", BIGINT, "f.jsonl", {}),
        ("/api/v1/runs", DEEP_LINE, "f.jsonl", {}),
        ("/api/v1/runs", BIGINT, "f.jsonl", {}),
        ("/api/v1/convert", DEEP_LINE, "f.jsonl", {"from": "sharegpt"}),
        ("/api/v1/convert", DEEP, "f.json", {"from": "sharegpt"}),
        (
            "/api/v1/convert",
            b'[{"conversations": ' + b"9" * 5000 + b"}]",
            "f.json",
            {"from": "sharegpt"},
        ),
        ("/api/v1/convert", HUGE_CSV, "f.csv", {"from": "personachat"}),
        ("/api/v1/runs", LINE, "f.jsonl", {"protocol": "x = " + "[" * 100_000}),
    ],
)
def test_unbounded_input_is_refused_with_the_problem(client, url, body, name, form):
    answer = post(client, url, body, name, **form)
    assert answer.status_code in (200, 400), answer.status_code  # validate: 200
    errors = answer.get_json()["errors"]
    assert errors and all(error["message"] for error in errors)


def test_a_json_body_nested_deeply_is_a_400(client):
    created = client.post("/api/v1/workspaces", json={"name": "w"}).get_json()
    token = created["manage_token"]
    deep = client.patch(
        f"/api/v1/workspaces/{token}", data=DEEP, content_type="application/json"
    )
    assert deep.status_code in (400, 415) and deep.get_json()["errors"]


def test_a_workspace_is_renamed_only_by_json(client):
    created = client.post("/api/v1/workspaces", json={"name": "mine"}).get_json()
    token = created["manage_token"]
    plain = client.patch(
        f"/api/v1/workspaces/{token}", data="x", content_type="text/plain"
    )
    assert plain.status_code == 415
    shown = client.get(f"/api/v1/workspaces/{token}").get_json()
    assert shown["name"] == "mine"  # a text/plain PATCH blanked it
    renamed = client.patch(f"/api/v1/workspaces/{token}", json={"name": "ours"})
    assert renamed.status_code == 200 and renamed.get_json() == {"name": "ours"}
