"""The port the app serves on (issue 61): ``PORT`` read by config.py, and
the set-up's check, before anything is installed, that it is free."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import pytest

import config
from tests.services import SUBPROCESS_DEADLINE_S

ROOT = Path(__file__).resolve().parents[1]


def test_config_reads_port():
    assert config.from_environ({"PORT": "8123"})["PORT"] == 8123
    assert config.port({"PORT": " 8123 "}) == 8123
    assert config.port({}) == config.DEFAULTS["PORT"] == 5000
    for bad in ("abc", "0", "65536"):
        with pytest.raises(config.ConfigError, match="PORT"):
            config.from_environ({"PORT": bad})


def check_port(port: str) -> subprocess.CompletedProcess:
    """The set-up's check alone (``bootstrap.sh check-port``: no install)."""
    return subprocess.run(
        ["bash", "scripts/bootstrap.sh", "check-port"],
        cwd=ROOT,
        env={**os.environ, "PORT": port},
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_DEADLINE_S,
    )


def test_a_taken_port_fails_before_the_install_with_a_clear_message():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        found = check_port(str(port))
    assert found.returncode == 1
    assert f"port {port} on 127.0.0.1 is taken" in found.stderr
    assert "PORT=5000 bash scripts/bootstrap.sh run" in found.stderr
    assert "installing" not in found.stderr  # nothing was installed first


def test_a_free_port_passes_and_a_port_that_is_none_is_said():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert check_port(str(port)).returncode == 0
    found = check_port("http")
    assert found.returncode == 2 and "PORT must be an integer" in found.stderr


def test_run_checks_the_port_before_it_installs():
    script = (ROOT / "scripts" / "bootstrap.sh").read_text()
    branch = script.split("\n  run)\n", 1)[1]
    assert branch.index("check_port") < branch.index("install_all")


def test_the_cli_guesses_the_links_on_the_configured_port(capsys):
    from types import SimpleNamespace

    from cli.outcome import print_links

    run = SimpleNamespace(status="done", token="v", manage_token="m", error=None)
    print_links(run, None, 8123)
    assert "dashboard (share): http://127.0.0.1:8123/r/v" in capsys.readouterr().err
