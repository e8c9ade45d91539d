"""The answers' shapes (web/views/answers.py) hold the bodies the views
build; Schemathesis checks every answer against the document too
(tests/web/views/test_api_contract.py)."""

from __future__ import annotations

import io

from tests.web.views.test_api import wait_final
from web.views import answers
from web.views.openapi import EXAMPLE_JSONL


def test_a_runs_answers_fit_their_shapes(client):
    data = {"file": (io.BytesIO(EXAMPLE_JSONL.encode()), "upload.jsonl")}
    created = client.post("/api/v1/runs", data=data).get_json()
    assert answers.RunCreated().validate(created) == {}
    wait_final(client, created["token"])
    status = client.get(f"/api/v1/runs/{created['token']}").get_json()
    assert answers.RunStatus().validate(status) == {}
    manage = created["manage_token"]
    listed = client.patch(f"/api/v1/runs/{manage}", json={"comment": None}).get_json()
    assert listed["comment"] is None and listed["judge_model"] is None  # no judge
    assert answers.RunListed().validate(listed) == {}
    rows = client.get(f"/api/v1/runs/{created['token']}/rows").get_json()
    assert answers.RowsPage().validate(rows) == {}
    refused = client.get(f"/api/v1/runs/{created['token']}/rows?limit=0").get_json()
    assert answers.Errors().validate(refused) == {}


def test_a_validation_report_fits_its_shape(client):
    data = {"file": (io.BytesIO(b"{oops\n"), "upload.jsonl")}
    report = client.post("/api/v1/validate", data=data).get_json()
    assert report["errors"] and answers.Validation().validate(report) == {}
