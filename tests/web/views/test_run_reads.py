"""Cheap status polls, the streamed results document and cursor pages of rows
(web/views/run_reads.py, store/row_pages.py)."""

from __future__ import annotations

import json

import pytest

from tests.web.views.test_api import sample_bytes, upload, wait_final


def upload_sample(make) -> str:
    """The sample uploaded with the default suites, evaluated; its run id."""
    app = make()
    client = app.test_client()
    token = upload(client, sample_bytes()).get_json()["token"]
    wait_final(client, token)
    return app.extensions["storage"].runs.find_run(token).item.id


@pytest.fixture
def sample_run_id(evaluated_copy) -> str:
    """Evaluated once a session, copied for each test (tests/conftest.py,
    EvaluatedRuns)."""
    return evaluated_copy("sample-default-suites", upload_sample)


@pytest.fixture
def app(request, app_factory):
    """``app_factory``'s app, on a copy of the evaluated sample when the
    test reads it (``finished``): the copy is made before the app opens it."""
    if "finished" in request.fixturenames:
        request.getfixturevalue("sample_run_id")
    return app_factory()


@pytest.fixture
def finished(app, client, sample_run_id):
    token = app.extensions["storage"].runs.get_run(sample_run_id).token
    return token, wait_final(client, token)["results"]


def test_status_carries_no_rows_but_summary_counts_and_links(client, finished):
    token, document = finished
    body = client.get(f"/api/v1/runs/{token}").get_json()
    assert set(body) == {
        "status",
        "progress",
        "counts",
        "summary",
        "provisional",
        "links",
        "results",
        "batch",
    }
    assert body["provisional"] is None  # final: the results are the run's
    assert body["batch"] is None  # an online run: no batch part to say
    assert "rows" not in body["results"]
    assert body["summary"] == document["summary"]
    assert body["results"]["run"] == document["run"]
    assert sum(body["counts"].values()) == len(document["rows"])
    assert body["links"]["results"] == f"/api/v1/runs/{token}/results"
    assert body["links"]["rows"] == f"/api/v1/runs/{token}/rows"
    assert client.get(body["links"]["dashboard"]).status_code == 200


def test_old_clients_get_rows_inline_on_request(client, finished):
    token, document = finished
    body = client.get(f"/api/v1/runs/{token}?include=rows").get_json()
    assert body["results"]["rows"] == document["rows"]
    assert body["status"] == document["run"]["status"]


def test_results_stream_is_one_strict_json_document(client, finished):
    token, document = finished
    response = client.get(f"/api/v1/runs/{token}/results")
    assert response.is_streamed and response.mimetype == "application/json"
    text = response.get_data(as_text=True)
    parsed = json.loads(text, parse_constant=pytest.fail)  # no NaN/Infinity
    assert parsed == document and len(parsed["rows"]) > 100
    assert parsed["schema"] == "personasteer.results/v1"


def test_rows_pages_walk_every_row_once(client, finished):
    token, document = finished
    url, seen, pages = f"/api/v1/runs/{token}/rows?limit=37", [], 0
    while url:
        page = client.get(url).get_json()
        assert len(page["rows"]) <= 37
        seen += page["rows"]
        url, pages = page["next"], pages + 1
    assert pages == -(-len(document["rows"]) // 37)
    key = lambda r: json.dumps(r, sort_keys=True)  # noqa: E731
    assert sorted(map(key, seen)) == sorted(map(key, document["rows"]))


def test_rows_filter_and_the_last_page_has_no_next(client, finished):
    token, document = finished
    wanted = [r for r in document["rows"] if r["metric"] == "quality"]
    page = client.get(f"/api/v1/runs/{token}/rows?metric=quality&limit=10000")
    body = page.get_json()
    assert len(body["rows"]) == len(wanted) and body["next"] is None
    assert body["next_cursor"] is None
    first = client.get(f"/api/v1/runs/{token}/rows?metric=quality&limit=2").get_json()
    assert "metric=quality" in first["next"]


@pytest.mark.parametrize(
    ("query", "code"),
    [
        ("limit=0", "bad_limit"),
        ("limit=10001", "bad_limit"),
        ("limit=x", "bad_limit"),
        ("cursor=-1", "bad_cursor"),
        ("cursor=abc", "bad_cursor"),
        ("cursor=%20", "bad_cursor"),  # blank is not empty: not "not given"
        ("limit=5&limit=6", "bad_limit"),  # one value, not two
    ],
)
def test_bad_page_arguments_are_400s_naming_them(client, finished, query, code):
    token, _ = finished
    response = client.get(f"/api/v1/runs/{token}/rows?{query}")
    assert response.status_code == 400
    (error,) = response.get_json()["errors"]
    assert error["code"] == code and error["path"] == query.split("=")[0]


def test_an_empty_query_value_is_one_not_given(client, finished):
    """The document's allowEmptyValue (Schemathesis holds the server to it)."""
    token, _ = finished
    assert client.get(f"/api/v1/runs/{token}?include=").status_code == 200
    assert client.get(f"/api/v1/runs/{token}/rows?cursor=&limit=").status_code == 200
    twice = client.get(f"/api/v1/runs/{token}?include=rows&include=rows")
    assert twice.status_code == 400
    (error,) = twice.get_json()["errors"]
    assert (error["path"], error["params"]["found"]) == ("include", "array")


def test_unknown_run_is_404_on_every_read(client):
    for path in ("", "/results", "/rows"):
        assert client.get(f"/api/v1/runs/nope{path}").status_code == 404


def test_cli_out_writes_the_streamed_document(app, runner, tmp_path):
    out = tmp_path / "results.json"
    result = runner.invoke(
        args=["evaluate", "sample_data.jsonl", "--suite", "quality", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    document = json.loads(out.read_text(encoding="utf-8"))
    storage = app.extensions["storage"]
    run = storage.runs.get_run(document["run"]["id"])
    assert len(document["rows"]) == storage.rows.count_rows(run.id) > 0
    assert document == app.extensions["runs"].results_document(run)


def test_cli_prints_both_links_absolute_and_keeps_the_manage_token_out_of_results(
    app_factory, tmp_path
):
    app = app_factory(PUBLIC_URL="https://bench.example.org")
    out = tmp_path / "results.json"
    result = app.test_cli_runner().invoke(
        args=["evaluate", "sample_data.jsonl", "--suite", "quality", "--out", str(out)]
    )
    assert result.exit_code == 0, result.stderr
    document = out.read_text(encoding="utf-8")
    run = app.extensions["storage"].runs.get_run(json.loads(document)["run"]["id"])
    assert (
        f"dashboard (share): https://bench.example.org/r/{run.token}" in result.stderr
    )
    manage = f"manage (keep private): https://bench.example.org/r/{run.manage_token}"
    assert manage in result.stderr
    assert run.manage_token not in document
