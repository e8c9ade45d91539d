"""``flask --app app report`` and ``compare``: the command line writes the
same reports as the web's downloads (``reports/``), byte for byte."""

from __future__ import annotations

import json

import pytest

from tests import crafted
from tests.pipeline_support import evaluate
from tests.web.views.test_api import settled

DOWNLOADS = {
    "tex": "export.tex",
    "md": "export.md",
    "csv": "summary.csv",
    "methods": "methods.txt",
}


@pytest.fixture
def two_runs(app_factory, tmp_path, judge_server):
    app = app_factory(JUDGE_API_URL=judge_server.url, JUDGE_MODEL="scripted")
    path = crafted.write(tmp_path / "a.jsonl", crafted.alignment_sessions())
    runs = []
    for _ in range(2):
        document = evaluate(app, path, judge_server, suites=["alignment"])
        runs.append(app.extensions["storage"].runs.get_run(document["run"]["id"]))
    return app, runs


@pytest.mark.parametrize("fmt", sorted(DOWNLOADS))
def test_report_equals_the_download(two_runs, fmt):
    app, (run, _) = two_runs
    result = app.test_cli_runner().invoke(args=["report", run.token, "--format", fmt])
    assert result.exit_code == 0, result.output
    download = app.test_client().get(f"/r/{run.token}/{DOWNLOADS[fmt]}")
    assert result.stdout_bytes == download.get_data()


def test_report_json_is_the_results_document_by_id_or_token(two_runs, tmp_path):
    app, (run, _) = two_runs
    runner = app.test_cli_runner()
    out = tmp_path / "results.json"
    by_id = runner.invoke(
        args=["report", run.id, "--format", "json", "--out", str(out)]
    )
    assert by_id.exit_code == 0, by_id.output
    document = json.loads(out.read_text(encoding="utf-8"))
    assert document["run"]["id"] == run.id and document["rows"]
    by_token = runner.invoke(args=["report", run.manage_token, "--format", "json"])
    assert json.loads(by_token.stdout)["run"]["id"] == run.id


@pytest.mark.parametrize("fmt", ["md", "csv", "tex"])
def test_compare_equals_the_compare_download(two_runs, fmt):
    app, runs = two_runs
    tokens = [run.token for run in runs]
    result = app.test_cli_runner().invoke(args=["compare", *tokens, "--format", fmt])
    assert result.exit_code == 0, result.output
    url = f"/compare/export.{fmt}?runs={','.join(tokens)}"
    assert result.stdout_bytes == settled(app.test_client(), url).get_data()


def test_a_token_that_begins_with_a_dash_is_a_run_not_an_option(two_runs):
    """Tokens are URL-safe base64: one in 32 begins with "-" (ci21 met one)."""
    app, runs = two_runs
    storage = app.extensions["storage"]
    for index, run in enumerate(runs):
        storage.runs.update_run(run.id, token=f"-{'ab'[index]}" + run.token[2:])
    tokens = [storage.runs.get_run(run.id).token for run in runs]
    runner = app.test_cli_runner()
    report = runner.invoke(args=["report", tokens[0], "--format", "csv"])
    assert report.exit_code == 0, report.output
    compare = runner.invoke(args=["compare", *tokens, "--format", "md"])
    assert compare.exit_code == 0, compare.output


def test_unknown_runs_and_single_runs_exit_2_in_one_line(two_runs):
    app, (run, _) = two_runs
    runner = app.test_cli_runner()
    unknown = runner.invoke(args=["report", "no-such-run"])
    assert unknown.exit_code == 2
    assert unknown.stderr.strip() == "error: no run has the token or id 'no-such-run'"
    alone = runner.invoke(args=["compare", run.token])
    assert alone.exit_code == 2 and "Traceback" not in alone.output
    assert "2 and 8 runs" in alone.stderr


def test_compare_refuses_a_run_named_twice(two_runs):
    """Issue 57: a run's view and manage tokens (or its id) compared it
    with itself."""
    app, (run, other) = two_runs
    runner = app.test_cli_runner()
    for keys in ([run.token, run.manage_token], [run.id, other.token, run.token]):
        result = runner.invoke(args=["compare", *keys, "--format", "md"])
        assert result.exit_code == 2, result.output
        assert "named twice" in result.stderr and "Traceback" not in result.output
        assert result.stdout == ""


def test_compare_says_why_bradley_terry_has_no_strength(
    app_factory, tmp_path, judge_server
):
    """Two runs' methods never met each other: the merged comparison has
    no Bradley–Terry scale, and the report says so instead of a bare —."""
    app = app_factory(JUDGE_API_URL=judge_server.url, JUDGE_MODEL="scripted")
    path = crafted.write(tmp_path / "p.jsonl", crafted.alignment_sessions())
    storage = app.extensions["storage"]
    tokens = []
    for _ in range(2):
        document = evaluate(app, path, judge_server, suites=["pairwise"])
        tokens.append(storage.runs.get_run(document["run"]["id"]).token)
    result = app.test_cli_runner().invoke(args=["compare", *tokens, "--format", "md"])
    assert result.exit_code == 0, result.output
    assert "| — |" in result.stdout
    assert (
        "every method, Bradley–Terry strength: no Bradley–Terry strengths on one "
        "scale: these groups of methods were not compared with each other"
    ) in result.stdout
    csv_text = app.test_cli_runner().invoke(
        args=["compare", *tokens, "--format", "csv"]
    )
    [row] = [
        line
        for line in csv_text.stdout.splitlines()
        if ",bt_score," in line and "/Base" in line
    ][:1]
    assert "not compared with each other" in row


@pytest.mark.parametrize("target", ["/dev/full", "missing/folder/report.md"])
def test_an_out_file_that_cannot_be_written_is_one_line_and_exit_2(
    two_runs, tmp_path, target
):
    """Issue 57: ``--out /dev/full`` or into a missing folder ended in a
    traceback (exit 1)."""
    app, runs = two_runs
    out = target if target.startswith("/") else str(tmp_path / target)
    runner = app.test_cli_runner()
    for args in (["report", runs[0].token], ["compare", *(r.token for r in runs)]):
        result = runner.invoke(args=[*args, "--format", "md", "--out", out])
        assert result.exit_code == 2, (args[0], result.exit_code, result.output)
        assert result.exception is None or isinstance(result.exception, SystemExit)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"error: {out}: "), lines
    assert not (tmp_path / "missing").exists()
