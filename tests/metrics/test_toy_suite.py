"""Adding a suite is one module: a toy suite defined here, in one place, shows
up in validation's suite list, a run's rows and summary, the dashboard panel
and the exports, with no other module edited (CONTRIBUTING.md)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from statistics import fmean

import pytest

import dataset
from core.i18n import _l
from metrics import registry
from metrics.rows import result_row, scored
from metrics.suite import Chart, Column, Metric, Option, Panel, Suite, Table, series
from tests.pipeline_support import wait_for

ROOT = Path(__file__).resolve().parents[2]


# -- the toy suite: everything it is, in one object -----------------------------
def validate_unit(value):
    if value is None:
        return "chars"
    if value not in ("chars", "words"):
        raise ValueError(f"unit must be 'chars' or 'words', not {value!r}")
    return value


def run(sessions, methods, judge, options):
    unit = options.get("toy_unit", "chars")
    rows = []
    for session in sessions:
        for round_ in session["rounds"]:
            for method in methods:
                key = {
                    "session_id": session["session_id"],
                    "round": round_["round"],
                    "method": method,
                }
                text = round_["responses"][method]["text"]
                size = len(text.split()) if unit == "words" else len(text)
                rows.append(result_row(key, "toy_length", float(size)))
    return rows


def summarize(rows, methods):
    by_method = {
        m: [r["value"] for r in rows if r["method"] == m and scored(r)] for m in methods
    }
    summary = {
        m: {"toy_length_avg": fmean(v) if v else None} for m, v in by_method.items()
    }
    longest = [
        {"method": m, "longest": max(v, default=None)} for m, v in by_method.items()
    ]
    return {"summary": summary, "panel": {"longest": longest}}


TOY = Suite(
    name="toy",
    label=_l("Toy length"),
    description=_l("Response length, a toy suite for the registry test."),
    metrics=(
        Metric("toy_length", _l("Length"), "row", False, (0.0, None)),
        Metric("toy_length_avg", _l("Mean length"), "summary", False, (0.0, None)),
    ),
    run=run,
    summarize=summarize,
    options=(Option("toy_unit", _l("Unit"), validate_unit),),
    order=999,
    panel=Panel(
        charts=(
            Chart(
                "toy_lengths",
                "bars",
                _l("Toy lengths"),
                "summary",
                series=series("toy_length_avg"),
            ),
        ),
        tables=(
            Table(
                "toy_longest",
                _l("Longest"),
                (Column("method", "Method"), Column("longest", "Longest", "score")),
                lambda panel, methods: panel["longest"],
            ),
        ),
    ),
)


# -- what the rest of the product makes of it ---------------------------------
@pytest.fixture
def toy():
    with registry.registered(TOY) as suite:
        yield suite


def sample_upload(**fields):
    data = {"file": (io.BytesIO((ROOT / "sample_data.jsonl").read_bytes()), "s.jsonl")}
    return {**data, **fields}


def test_validation_lists_the_toy_suite(toy, client, runner):
    report = client.post(
        "/api/v1/validate", data=sample_upload(), content_type="multipart/form-data"
    ).get_json()
    assert report["suites"][-1] == "toy"
    result = runner.invoke(args=["validate", str(ROOT / "sample_data.jsonl"), "--json"])
    assert "toy" in json.loads(result.output)["suites"]
    assert 'value="toy"' in client.get("/").get_data(as_text=True)  # upload page


def test_a_toy_run_has_rows_summary_panel_and_exports(toy, embedded_app):
    client = embedded_app.test_client()
    started = client.post(
        "/api/v1/runs",
        data=sample_upload(suites="toy", toy_unit='"words"'),
        content_type="multipart/form-data",
    )
    assert started.status_code == 202, started.get_json()
    token = started.get_json()["token"]
    run_id = started.get_json()["id"]
    document = wait_for(embedded_app, run_id)
    assert document["run"]["suites"] == ["toy"]
    assert document["run"]["options"]["toy_unit"] == "words"
    assert {row["metric"] for row in document["rows"]} == {"toy_length"}
    words = {
        (session["session_id"], round_["round"], method): float(
            len(response["text"].split())
        )
        for session in dataset.iter_sessions(ROOT / "sample_data.jsonl")
        for round_ in session["rounds"]
        for method, response in round_["responses"].items()
    }
    assert {
        (r["session_id"], r["round"], r["method"]): r["value"] for r in document["rows"]
    } == words
    average = document["summary"]["Ours"]["toy_length_avg"]
    ours = [r["value"] for r in document["rows"] if r["method"] == "Ours"]
    assert average == pytest.approx(fmean(ours))

    page = client.get(f"/r/{token}").get_data(as_text=True)
    assert 'data-testid="panel-toy"' in page and "Toy length" in page
    assert 'id="chart-toy_lengths"' in page and "Longest" in page

    rows = list(
        csv.DictReader(
            io.StringIO(client.get(f"/r/{token}/export.csv").get_data(as_text=True))
        )
    )
    assert {row["metric"] for row in rows} == {"toy_length"}
    exported = json.loads(client.get(f"/r/{token}/export.json").get_data(as_text=True))
    assert exported["summary"]["Ours"]["toy_length_avg"] == average


def test_a_bad_toy_option_is_a_400_naming_it(toy, client):
    response = client.post(
        "/api/v1/runs",
        data=sample_upload(suites="toy", toy_unit='"bytes"'),
        content_type="multipart/form-data",
    )
    assert response.status_code == 400
    [problem] = response.get_json()["errors"]
    assert (problem["code"], problem["path"]) == ("bad_option", "toy_unit")
    assert "bytes" in problem["message"]


def test_the_frozen_reference_covers_the_toy_suite(toy):
    """A new suite needs no edit to tests/aggregate_rows.py: it gets rows of
    its own metrics, and its summary enters the reference (``make reference``)."""
    from tests import aggregate_rows

    assert "toy" in aggregate_rows.suites()
    rows = aggregate_rows.synthetic_rows("panel", "key")
    assert {row["metric"] for row in rows if row["metric"].startswith("toy")} == {
        "toy_length"
    }
    found = aggregate_rows.aggregate("panel", "key")
    assert "toy" in found["panels"]
    assert all(
        (found["summary"][method].get("toy_length_avg") is not None)
        for method in aggregate_rows.METHODS
    )


def test_the_registry_forgets_the_toy_afterwards():
    assert "toy" not in registry.names() and registry.spec("toy_length") is None
