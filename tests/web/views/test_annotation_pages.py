"""The annotation queue's API answers (web/views/annotation_pages.py)."""

from __future__ import annotations

import io

import pytest

from web.views.openapi import EXAMPLE_JSONL


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("annotations", {"json": {"size": 1}}),
        ("annotators", {"json": {"name": "ann"}}),
        ("labels", {"data": {"file": (io.BytesIO(b"{}\n"), "labels.jsonl")}}),
    ],
)
def test_a_view_token_gets_the_apis_json_403(client, path, body):
    """Found by Schemathesis's stateful phase: these answered werkzeug's
    HTML 403 page where the document (and every other operation on a
    manage token) gives the JSON error view_only."""
    data = {"file": (io.BytesIO(EXAMPLE_JSONL.encode()), "upload.jsonl")}
    created = client.post("/api/v1/runs", data=data).get_json()
    response = client.post(f"/api/v1/runs/{created['token']}/{path}", **body)
    assert response.status_code == 403
    assert response.mimetype == "application/json"
    assert [e["code"] for e in response.get_json()["errors"]] == ["view_only"]


def test_an_annotator_link_before_any_queue_is_a_409(client):
    """Found by Schemathesis's stateful phase: the run exists, so a 404
    said it was lost; it has no annotation queue yet, a state (409)."""
    data = {"file": (io.BytesIO(EXAMPLE_JSONL.encode()), "upload.jsonl")}
    created = client.post("/api/v1/runs", data=data).get_json()
    manage = created["manage_token"]
    response = client.post(f"/api/v1/runs/{manage}/annotators", json={"name": "a"})
    assert response.status_code == 409
    assert [e["code"] for e in response.get_json()["errors"]] == ["no_queue"]
