from pathlib import Path

import pytest

import config
from tests.services import SUBPROCESS_DEADLINE_S


def test_environment_values_are_parsed_strictly():
    parsed = config.from_environ({"JUDGE_CONCURRENCY": "16", "JUDGE_TIMEOUT_S": "2.5"})
    assert parsed == {"JUDGE_CONCURRENCY": 16, "JUDGE_TIMEOUT_S": 2.5}


@pytest.mark.parametrize(
    ("name", "raw"),
    [
        ("JUDGE_CONCURRENCY", "eight"),
        ("JUDGE_CONCURRENCY", "0"),
        ("MAX_UPLOAD_MB", "-1"),
        ("REDIS_URL", "localhost:6379"),
        ("JUDGE_API_URL", "ftp://judge"),
        ("FORCE_HTTPS", "maybe"),
    ],
)
def test_bad_values_name_the_variable(name, raw):
    with pytest.raises(config.ConfigError, match=name):
        config.from_environ({name: raw})


def test_empty_variables_fall_back_to_defaults(tmp_path: Path):
    settings = config.load(tmp_path, {"SECRET_KEY": "s"})
    assert settings["DATABASE_URL"].startswith("sqlite:///")
    assert settings["MAX_CONTENT_LENGTH"] == settings["MAX_UPLOAD_MB"] * 1024 * 1024
    assert not config.judge_configured(settings)


def test_secret_key_is_generated_once_and_kept(tmp_path: Path):
    first = config.load(tmp_path)["SECRET_KEY"]
    assert first == config.load(tmp_path)["SECRET_KEY"]
    assert len(first) == 64


def test_only_config_reads_the_environment():
    root = Path(config.__file__).parent
    offenders = [
        path.name
        for path in root.glob("*.py")
        if path.name != "config.py" and "os.environ" in path.read_text()
    ]
    offenders += [
        str(path.relative_to(root))
        for path in (root / "metrics").glob("*.py")
        if "os.environ" in path.read_text()
    ]
    assert offenders == []


def test_every_default_has_a_parser(tmp_path: Path):
    """Every setting can be set from the environment, and its default,
    written out, parses back to itself."""
    for name, default in config.defaults(tmp_path).items():
        assert name in config._PARSERS, f"{name} has a default but no parser"
        if isinstance(default, bool) or default is None:
            continue  # written "true"/"false"; None: unset
        if isinstance(default, int | float | str) and default != "":
            parsed = config.from_environ({name: str(default)})[name]
            assert parsed == default, name


@pytest.mark.parametrize("raw", ["-0.1", "2.5", "warm"])
def test_judge_temperature_is_checked(raw):
    with pytest.raises(config.ConfigError, match="JUDGE_TEMPERATURE"):
        config.from_environ({"JUDGE_TEMPERATURE": raw})


def test_judge_temperature_reaches_the_run_header_and_the_judge(
    app_factory, tmp_path, judge_server
):
    """JUDGE_TEMPERATURE=0.3 is recorded when the run is made: its header
    says 0.3 and every request asks 0.3, even if the worker's configuration
    changes before it judges (the run's settings are the run's)."""
    import json

    from tests import crafted
    from tests.pipeline_support import submit, wait_for

    app = app_factory(**config.from_environ({"JUDGE_TEMPERATURE": "0.3"}))
    path = crafted.write(tmp_path / "t.jsonl", crafted.alignment_sessions())
    with (tmp_path / "bodies.jsonl").open("wb") as bodies:
        judge_server.state.record_to = bodies
        run_id = submit(app, path, judge_server, suites=["alignment"])
        app.config["JUDGE_TEMPERATURE"] = 0.9  # too late for this run
        document = wait_for(app, run_id)
        judge_server.state.record_to = None
    assert document["run"]["status"] == "done"
    assert document["run"]["judge"]["temperature"] == 0.3
    lines = (tmp_path / "bodies.jsonl").read_bytes().splitlines()
    sent = [json.loads(line) for line in lines]
    assert sent and {body["temperature"] for body in sent} == {0.3}


def test_the_configuration_reference_is_generated_and_current():
    """docs/configuration.md comes from DEFAULTS and docs/settings.toml,
    which describes every setting and no other."""
    import subprocess
    import sys

    root = Path(config.__file__).parent
    done = subprocess.run(
        [sys.executable, "scripts/config_reference.py", "--check"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_DEADLINE_S,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("raw", ["fork", "Forked"])
def test_a_setting_asking_for_the_removed_forked_worker_stops_the_start(raw):
    """Issue 60 removed the forked worker: a deployment that asks for it is
    told what to set instead, not left with a generic choice error."""
    with pytest.raises(config.ConfigError, match="forked worker was removed"):
        config.from_environ({"EMBEDDED_WORKER": raw})
    assert config.from_environ({"EMBEDDED_WORKER": "process"}) == {
        "EMBEDDED_WORKER": "process"
    }
