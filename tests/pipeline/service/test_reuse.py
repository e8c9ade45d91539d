"""Reusing an identical finished run (pipeline/service/reuse.py): the same file,
suites, options, judge settings and code give a copy of the rows, made in
the database (``store/reuse.py``), with no judge call; anything different is
evaluated."""

from __future__ import annotations

import pytest

from pipeline.service import reuse
from tests.web.views.test_api import sample_bytes, upload, wait_final

WEIGHTS = (
    '{"coherence": 1, "completeness": 0, "length": 0, "structure": 0, "vocabulary": 0}'
)


@pytest.fixture
def judged(app_factory, judge_server):
    app = app_factory(JUDGE_API_URL=judge_server.url, JUDGE_MODEL="scripted")
    return app, app.test_client(), judge_server


def run_of(client, **fields) -> dict:
    answer = upload(client, sample_bytes(), **{"suites": "alignment,quality", **fields})
    assert answer.status_code == 202, answer.get_json()
    return {**answer.get_json(), **wait_final(client, answer.get_json()["token"])}


def without_run(document: dict) -> dict:
    """The results but what the run itself did (its header, its judge usage)."""
    return {k: v for k, v in document.items() if k not in ("run", "judge_usage")}


def test_an_identical_upload_reuses_the_rows_and_asks_no_judge(judged):
    app, client, judge = judged
    first = run_of(client)
    asked = judge.state.calls
    second = run_of(client)
    assert judge.state.calls == asked  # nothing reached the judge
    assert second["status"] == "done"
    assert without_run(second["results"]) == without_run(first["results"])
    header = second["results"]["run"]
    assert header["reused"] is True and first["results"]["run"]["reused"] is False
    assert header["counts"]["judge_calls"] == 0
    assert second["results"]["judge_usage"] == {}  # it spent nothing
    assert header["counts"]["unscored"] == first["results"]["run"]["counts"]["unscored"]
    storage = app.extensions["storage"]
    copy, source = storage.runs.get_run(second["id"]), storage.runs.get_run(first["id"])
    assert copy.reused_from == source.id
    assert copy.reused_rows == storage.rows.count_rows(source.id)
    # the judge's prompts and replies behind the copied scores come along
    row = storage.rows.rows(source.id, metric="al")[0]
    key = (row.session_id, row.round, row.method)
    kept = storage.replies.exchanges_of(source.id, key)
    assert kept and storage.replies.exchanges_of(copy.id, key) == kept
    page = client.get(f"/r/{second['token']}").get_data(as_text=True)
    assert 'data-testid="reused"' in page and source.token not in page
    # each run stands alone: deleting the source keeps the copy whole
    assert client.delete(f"/api/v1/runs/{first['manage_token']}").status_code == 204
    again = client.get(f"/api/v1/runs/{second['token']}/results").get_json()
    assert without_run(again) == without_run(second["results"])
    assert storage.replies.exchanges_of(copy.id, key) == kept  # their text too


@pytest.mark.parametrize(
    "changed",
    [{"samples": "2"}, {"suites": "alignment"}, {"quality_weights": WEIGHTS}],
)
def test_different_settings_are_evaluated(judged, changed):
    _, client, judge = judged
    run_of(client)
    asked = judge.state.calls
    second = run_of(client, **changed)
    assert second["results"]["run"]["reused"] is False
    if "samples" in changed:
        assert judge.state.calls > asked  # the second sample is new to the cache


def test_other_metric_code_is_evaluated_again(judged, monkeypatch):
    _, client, _ = judged
    run_of(client)
    monkeypatch.setattr(reuse, "code_fingerprint", lambda: "another release")
    assert run_of(client)["results"]["run"]["reused"] is False


def test_no_cache_runs_and_partial_runs_are_never_sources(judged, tmp_path):
    from tests.pipeline_support import submit, wait_for

    app, _, judge = judged
    path = tmp_path / "s.jsonl"
    path.write_bytes(sample_bytes())
    # one suite, the judge's: whether a run is a source does not depend on
    # which suites ran (every suite the sample can run cost 6 s of CPU)
    suites = ["alignment"]
    first = wait_for(app, submit(app, path, judge, suites=suites))
    fresh = wait_for(app, submit(app, path, judge, suites=suites, use_cache=False))
    assert fresh["run"]["reused"] is False  # asked for the judge again
    storage = app.extensions["storage"]
    for document in (first, fresh):  # a partial run is retried, not copied
        storage.runs.set_status(document["run"]["id"], "partial")
    again = wait_for(app, submit(app, path, judge, suites=suites))
    assert again["run"]["reused"] is False


def test_another_workspace_gets_no_reuse_and_no_cache_hits(judged):
    """One team's verdicts are never served to another: nothing tells the
    second team that the first judged the same file."""
    _, client, judge = judged
    spaces = [client.post("/api/v1/workspaces").get_json() for _ in range(2)]
    first = run_of(client, workspace=spaces[0]["manage_token"])
    asked = judge.state.calls
    other = run_of(client, workspace=spaces[1]["manage_token"])
    header = other["results"]["run"]
    assert header["reused"] is False and header["counts"]["cache_hits"] == 0
    assert judge.state.calls - asked == first["results"]["run"]["counts"]["judge_calls"]
    same = run_of(client, workspace=spaces[0]["manage_token"])
    assert same["results"]["run"]["reused"] is True  # within a team: reused
