"""``flask --app app validate`` (docs/cli.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import dataset
from metrics import registry
from tests.services import SUBPROCESS_DEADLINE_S

ROOT = Path(__file__).resolve().parents[2]
SEED_LINE = (
    '{"session_id":"user_001","user_profile":"22-year-old student in NYC, likes hiking",'
    '"user_personality":"curious, introverted, witty","rounds":[{"round":1,'
    '"user_message":"Hey!","responses":{"Base":"Hello!","Ours":"Hey! What\'s up?"}}]}\n'
)


def test_sample_data_is_valid_and_runs_every_suite(runner):
    result = runner.invoke(args=["validate", str(ROOT / "sample_data.jsonl"), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert set(report) == {
        "valid",
        "errors",
        "errors_total",  # all of them; "errors" keeps the first 200 and "N more"
        "warnings",
        "sessions",
        "methods",
        "suites",
        "estimate",  # judge calls and prompt characters per suite, one sample
    }
    assert report["valid"] is True
    assert report["sessions"] >= 6
    assert len(report["methods"]) >= 3
    assert report["suites"] == registry.names()


def test_sample_data_carries_the_fields_of_every_suite():
    report = dataset.validate_file(ROOT / "sample_data.jsonl", suites=registry.suites())
    assert report.suite_sessions == dict.fromkeys(registry.names(), report.sessions)
    lines = (ROOT / "sample_data.jsonl").read_text(encoding="utf-8").splitlines()
    languages = {json.loads(line)["meta"]["language"] for line in lines}
    assert {"en", "zh", "ko"} <= languages


def test_seed_readme_example_validates(runner, tmp_path):
    path = tmp_path / "seed.jsonl"
    path.write_text(SEED_LINE)
    result = runner.invoke(args=["validate", str(path), "--json"])
    assert result.exit_code == 0
    report = json.loads(result.output)
    assert report["methods"] == ["Base", "Ours"]
    # Every session can run the suites that need no optional block.
    assert report["suites"] == [
        suite.name for suite in registry.suites() if not suite.session_fields
    ]


def test_invalid_file_exits_1_with_line_numbers(runner, tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(SEED_LINE + "\n{not json}\n")
    result = runner.invoke(args=["validate", str(path)])
    assert result.exit_code == 1
    assert "line 3:" in result.output
    assert "invalid: 1 error(s)" in result.output


def test_command_line_entry_point(tmp_path):
    """The real ``flask --app app validate`` as a user types it."""
    path = tmp_path / "seed.jsonl"
    path.write_text(SEED_LINE)
    flask = Path(sys.executable).with_name("flask")
    done = subprocess.run(
        [str(flask), "--app", "app", "validate", str(path), "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_DEADLINE_S,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["valid"] is True


def flask_command(*args: str, env: dict | None = None, cwd=ROOT):
    flask = Path(sys.executable).with_name("flask")
    return subprocess.run(
        [str(flask), "--app", "app", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_DEADLINE_S,
        env=env,
    )


def clean_env(tmp_path, **extra) -> dict:
    import os

    env = {
        k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL")
    }
    database = f"sqlite:///{tmp_path / 'cli.sqlite3'}"
    return {**env, "DATABASE_URL": database, "UPLOAD_FOLDER": str(tmp_path), **extra}


def one_line_error(done) -> str:
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_evaluate_with_an_unreachable_queue_fails_in_one_line(tmp_path):
    env = clean_env(tmp_path, REDIS_URL="redis://127.0.0.1:1")
    done = flask_command(
        "evaluate", str(ROOT / "sample_data.jsonl"), "--suite", "quality", env=env
    )
    assert done.returncode == 1
    assert "queue is unavailable" in one_line_error(done)
    from sqlalchemy import create_engine, inspect, text

    engine = create_engine(env["DATABASE_URL"])
    if inspect(engine).has_table("runs"):  # nothing recorded, nothing left queued
        with engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM runs")).scalar() == 0
    assert list(tmp_path.glob("*.jsonl")) == []  # the refused upload is not kept


@pytest.mark.parametrize(
    ("weights", "expected"),
    [
        ('{"coherence": ', "not valid JSON"),
        ('{"coherence": 2}', "Quality weights rejected"),
    ],
)
def test_evaluate_with_malformed_weights_fails_in_one_line(tmp_path, weights, expected):
    done = flask_command(
        "evaluate",
        str(ROOT / "sample_data.jsonl"),
        "--quality-weights",
        weights,
        env=clean_env(tmp_path),
    )
    assert done.returncode == 2
    assert expected in one_line_error(done)


@pytest.mark.parametrize("target", ["missing.jsonl", "."])
def test_evaluate_and_validate_an_unreadable_file_fail_in_one_line(tmp_path, target):
    for command in ("evaluate", "validate"):
        done = flask_command(command, str(tmp_path / target), env=clean_env(tmp_path))
        assert done.returncode == 2
        assert one_line_error(done).startswith("error: ")


def test_validate_says_a_repeated_warning_once_with_its_count(runner, tmp_path):
    session = {
        "user_profile": "p",
        "user_personality": "",
        "rounds": [
            {"round": 1, "user_message": "hi", "responses": {"A": "x", "B": "y"}}
        ],
    }
    path = tmp_path / "empty.jsonl"
    path.write_text(
        "".join(
            json.dumps({**session, "session_id": f"s{i}"}) + "\n" for i in range(10)
        )
    )
    result = runner.invoke(args=["validate", str(path)])
    warnings = [
        line for line in result.output.splitlines() if line.startswith("warning")
    ]
    assert len(warnings) == 1, result.output
    assert warnings[0].endswith("(10 times; lines 1, 2, 3, 4, 5, …)")


@pytest.mark.parametrize(
    ("name", "layout", "title"),
    [("aloe.jsonl", "aloe", "ALOE"), ("sharegpt.json", "sharegpt", "ShareGPT")],
)
def test_validate_names_another_tools_layout_and_the_convert_command(
    runner, name, layout, title
):
    """Issue 56: a file in ALOE's or ShareGPT's layout got only 'required
    field is missing'; the upload page's detection names its layout, and
    validate says it too, with the command that converts it."""
    path = ROOT / "tests" / "data" / "importers" / name
    stem = str(path.with_suffix(""))
    command = (
        f"flask --app app convert --from {layout} {path} --out {stem}.converted.jsonl"
    )
    plain = runner.invoke(args=["validate", str(path)])
    assert plain.exit_code == 1
    assert f"This file looks like {title}; convert it with: {command}" in plain.output
    report = json.loads(runner.invoke(args=["validate", str(path), "--json"]).output)
    assert (report["looks_like"], report["convert_command"]) == (layout, command)
    ours = runner.invoke(args=["validate", str(ROOT / "sample_data.jsonl"), "--json"])
    assert "looks_like" not in json.loads(ours.output)


HEAVY = (
    "sqlalchemy",
    "alembic",
    "celery",
    "kombu",
    "redis",
    "aiohttp",
    "numpy",
    "scipy",
)


@pytest.mark.parametrize(
    "args",
    [("validate", str(ROOT / "sample_data.jsonl")), ("--help",), ("judge-check",)],
    ids=["validate", "help", "judge-check"],
)
def test_light_commands_load_no_database_queue_or_numeric_library(tmp_path, args):
    """What ``-X importtime`` shows the command loading (stderr): none of
    the libraries a run needs, so it starts in a fraction of a second."""
    env = clean_env(
        tmp_path, PYTHONPROFILEIMPORTTIME="1", JUDGE_API_URL="", JUDGE_MODEL=""
    )
    done = flask_command(*args, env=env)
    assert "Traceback" not in done.stderr
    loaded = {
        line.rsplit("|", 1)[-1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "flask" in loaded  # the profile was taken
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


def test_evaluate_into_a_missing_folder_fails_before_the_run(tmp_path):
    """Issue 57: the run was evaluated, then writing its results raised a
    traceback; a folder that does not exist is said before any work."""
    out = tmp_path / "missing" / "results.json"
    args = [str(ROOT / "sample_data.jsonl"), "--suite", "quality", "--out", str(out)]
    done = flask_command("evaluate", *args, env=clean_env(tmp_path))
    assert done.returncode == 2
    assert one_line_error(done).startswith(f"error: {out}: ")
    assert list(tmp_path.glob("*.jsonl")) == []  # no upload stored: no run began


def test_evaluate_into_a_full_disk_says_so_and_keeps_the_run(tmp_path):
    args = [str(ROOT / "sample_data.jsonl"), "--suite", "quality", "--out", "/dev/full"]
    done = flask_command("evaluate", *args, env=clean_env(tmp_path))
    said = done.stderr[-2000:]
    assert done.returncode == 1 and "Traceback" not in done.stderr, said
    assert "error: /dev/full: No space left on device" in done.stderr, said
    assert "report" in done.stderr  # how to write the stored run's results


def test_every_command_of_the_cli_package_is_registered(app):
    from cli import COMMANDS

    names = {command.name for command in COMMANDS}
    assert names == {
        "validate",
        "evaluate",
        "judge-check",
        "convert",
        "report",
        "compare",
    }
    assert names <= set(app.cli.commands)


def test_a_command_freezes_the_heap_for_its_exit(runner, monkeypatch):
    """Every command registers ``gc.freeze`` to run at exit, once however
    many commands ran: the interpreter then skips collecting the app's
    objects on the way out (0.30-0.38 s of CPU after a ``flask evaluate``
    wrote its results; cli/__init__.py)."""
    import atexit
    import gc

    registered: list = []
    monkeypatch.setattr(atexit, "register", registered.append)
    monkeypatch.setattr(
        atexit,
        "unregister",
        lambda f: registered.remove(f) if f in registered else None,
    )
    for _ in range(2):
        result = runner.invoke(args=["validate", str(ROOT / "sample_data.jsonl")])
        assert result.exit_code == 0, result.output
    assert registered == [gc.freeze]
