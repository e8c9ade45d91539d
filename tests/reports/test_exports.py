"""Exports are inert: CSV cells are neutralised, no file carries the share
token, JSON is strict, and API links never follow the Host header."""

from __future__ import annotations

import csv
import io
import json

from tests import crafted
from tests.pipeline_support import evaluate

FORMULA = '=HYPERLINK("http://evil.example","x")'


def hostile_run(app, tmp_path) -> tuple[dict, str]:
    session = crafted.session(
        "@cmd|' /C calc'!A0", {FORMULA: ["hi", "ok"], "+Base": ["a", "b"]}
    )
    path = crafted.write(tmp_path / "hostile.jsonl", [session])
    document = evaluate(app, path, None, suites=["quality"])
    token = app.extensions["storage"].runs.get_run(document["run"]["id"]).token
    return document, token


def test_csv_cells_that_would_be_formulas_are_neutralised(embedded_app, tmp_path):
    _, token = hostile_run(embedded_app, tmp_path)
    response = embedded_app.test_client().get(f"/r/{token}/export.csv")
    rows = list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))
    assert rows and all(row["session_id"] == "'@cmd|' /C calc'!A0" for row in rows)
    assert {row["method"] for row in rows} == {"'" + FORMULA, "'+Base"}
    assert all(
        not cell.startswith(("=", "+", "@")) for row in rows for cell in row.values()
    )
    values = [row["value"] for row in rows if row["value"]]
    assert values and all(float(value) >= 0 for value in values)  # numbers untouched
    assert token not in response.get_data(as_text=True)
    assert token[:8] not in response.headers["Content-Disposition"]


def test_exported_json_has_no_share_token_and_is_strict(embedded_app, tmp_path):
    document, token = hostile_run(embedded_app, tmp_path)
    response = embedded_app.test_client().get(f"/r/{token}/export.json")
    body = response.get_data(as_text=True)
    assert (
        token not in body and token[:8] not in response.headers["Content-Disposition"]
    )
    exported = json.loads(
        body, parse_constant=lambda name: (_ for _ in ()).throw(ValueError(name))
    )
    assert (
        exported["run"]["id"] == document["run"]["id"]
        and "token" not in exported["run"]
    )


def test_api_links_are_relative_or_on_the_configured_public_url(app_factory, tmp_path):
    path = crafted.write(tmp_path / "c.jsonl", crafted.alignment_sessions())

    def created(app):
        body = {"file": (path.open("rb"), "c.jsonl"), "suites": "quality"}
        response = app.test_client().post(
            "/api/v1/runs",
            data=body,
            content_type="multipart/form-data",
            headers={"Host": "evil.example"},
        )
        return response.get_json()

    relative = created(app_factory())
    assert relative["status_url"] == f"/api/v1/runs/{relative['token']}"
    assert relative["dashboard_url"] == f"/r/{relative['token']}"
    public = created(app_factory(PUBLIC_URL="https://bench.example.org"))
    assert public["dashboard_url"] == f"https://bench.example.org/r/{public['token']}"
    assert "evil.example" not in json.dumps([relative, public])
