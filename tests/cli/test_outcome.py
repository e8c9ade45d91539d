"""What ``evaluate`` says once a run has ended (``cli/outcome.py``) and the
run's name and workspace from the command line."""

from __future__ import annotations

import json

from tests import crafted
from tests.pipeline_support import FAST_JUDGE


def test_a_partial_run_says_what_failed_counted_by_reason(
    app_factory, judge_server, tmp_path
):
    path = crafted.write(
        tmp_path / "faults.jsonl",
        [
            crafted.session(
                "s",
                {
                    "Base": ["fine [[al=50]] [[binary=1]]"] * 2,
                    "Ours": ["[[fault=garbage]]"] * 2,
                },
            )
        ],
    )
    app = app_factory(
        JUDGE_API_URL=judge_server.url, JUDGE_MODEL="scripted", **FAST_JUDGE
    )
    result = app.test_cli_runner().invoke(
        args=[
            "evaluate",
            str(path),
            "--suite",
            "alignment",
            "--out",
            str(tmp_path / "r.json"),
        ]
    )
    assert result.exit_code == 3, result.stderr
    failures = [line for line in result.stderr.splitlines() if "not scored" in line]
    # Ours' two unreadable replies: al, binary and the five dimensions each
    assert failures == [
        "not scored: 14 rows unscored: the judge reply holds no verdict in a form"
        " we read"
    ]
    assert "estimate scripted:" in result.stderr  # the model, never "None"
    assert "estimate None" not in result.stderr


def test_name_and_workspace_put_the_run_where_the_team_sees_it(app_factory, tmp_path):
    app = app_factory(PUBLIC_URL="https://bench.example.org")
    space = app.extensions["storage"].workspaces.create_workspace("team")
    runner = app.test_cli_runner()
    out = tmp_path / "r.json"
    result = runner.invoke(
        args=[
            "evaluate",
            "sample_data.jsonl",
            "--suite",
            "quality",
            "--out",
            str(out),
            "--name",
            "ablation 3",
            "--workspace",
            space.manage_token,
        ]
    )
    assert result.exit_code == 0, result.stderr
    run_id = json.loads(out.read_text(encoding="utf-8"))["run"]["id"]
    run = app.extensions["storage"].runs.get_run(run_id)
    assert (run.name, run.workspace_id) == ("ablation 3", space.id)
    assert "PUBLIC_URL is not set" not in result.stderr

    viewed = runner.invoke(
        args=["evaluate", "sample_data.jsonl", "--workspace", space.token]
    )
    assert viewed.exit_code == 2
    assert "view token" in viewed.stderr and "Traceback" not in viewed.stderr
    unknown = runner.invoke(args=["evaluate", "sample_data.jsonl", "--workspace", "x"])
    assert unknown.exit_code == 2 and "no workspace" in unknown.stderr


def test_without_public_url_the_links_say_they_are_a_guess(app_factory, tmp_path):
    app = app_factory()
    result = app.test_cli_runner().invoke(
        args=[
            "evaluate",
            "sample_data.jsonl",
            "--suite",
            "quality",
            "--out",
            str(tmp_path / "r.json"),
        ]
    )
    assert result.exit_code == 0, result.stderr
    assert "note: PUBLIC_URL is not set" in result.stderr
    assert "dashboard (share): http://127.0.0.1:5000/r/" in result.stderr


def test_batch_runs_from_the_command_line(app_factory, tmp_path):
    """``--batch``: the requests go in the provider's batch (0 online) and
    the bar says what the run waits on."""
    from testing.judge_server import ScriptedJudge

    path = crafted.write(tmp_path / "b.jsonl", crafted.alignment_sessions())
    with ScriptedJudge(batch_seconds=2.0) as judge:
        app = app_factory(
            JUDGE_API_URL=judge.url,
            JUDGE_MODEL="scripted",
            JUDGE_BATCH_FIRST_POLL_S=0.2,
            **FAST_JUDGE,
        )
        result = app.test_cli_runner().invoke(
            args=[
                "evaluate",
                str(path),
                "--suite",
                "alignment",
                "--batch",
                "--out",
                str(tmp_path / "r.json"),
            ]
        )
    assert result.exit_code == 0, result.stderr
    assert judge.state.online_requests == 0 and judge.state.batch_lines > 0
    used = json.loads((tmp_path / "r.json").read_text())["judge_usage"]["scripted"]
    assert used["batch_calls"] == judge.state.batch_lines
