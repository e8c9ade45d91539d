from pathlib import Path

import pytest

import config


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
