"""gunicorn serves the app with gunicorn.conf.py: two worker processes,
probes, an upload evaluated to the end, and /metrics summed over the
workers (prometheus_client's multi-process mode)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def served(tmp_path):
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'g.sqlite3'}",
        "UPLOAD_FOLDER": str(tmp_path / "uploads"),
        "SECRET_KEY": "gunicorn-test",
    }
    for name in ("REDIS_URL", "JUDGE_API_URL", "JUDGE_MODEL"):
        env.pop(name, None)
    log = tmp_path / "gunicorn.log"
    with log.open("wb") as sink, (tmp_path / "access.log").open("wb") as access:
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "-c",
                "gunicorn.conf.py",
                "--bind",
                f"127.0.0.1:{port}",
                "-w",
                "2",
                "app:app",
            ],
            cwd=ROOT,
            env=env,
            stdout=access,
            stderr=sink,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(base, server, log)
        yield base
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def wait_until_up(base: str, server, log: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise AssertionError(log.read_text(errors="replace")[-2000:])
        try:
            if requests.get(f"{base}/healthz", timeout=10).ok:
                return
        except requests.RequestException:  # not listening, or still importing
            time.sleep(0.2)
    raise AssertionError("gunicorn did not start")


# Timeouts far above any reply: a fresh clone's CI beside busy loops took more
# than 5 s for the first /readyz (it loads the database layer).
def test_gunicorn_serves_probes_runs_and_metrics(served):
    assert requests.get(f"{served}/healthz", timeout=120).json() == {"status": "ok"}
    assert requests.get(f"{served}/readyz", timeout=120).status_code == 200
    with (ROOT / "sample_data.jsonl").open("rb") as sample:
        created = requests.post(
            f"{served}/api/v1/runs",
            timeout=120,
            files={"file": ("s.jsonl", sample)},
            data={"suites": "quality"},
        )
    assert created.status_code == 202, created.text
    status_url = served + created.json()["status_url"]
    deadline = time.monotonic() + 120
    while (body := requests.get(status_url, timeout=120).json())["status"] in (
        "queued",
        "running",
    ):
        assert time.monotonic() < deadline, body
        time.sleep(0.3)
    assert body["status"] == "done" and body["summary"]
    results = requests.get(served + body["links"]["results"], timeout=30).json()
    assert len(results["rows"]) == sum(body["counts"].values())
    metrics = requests.get(f"{served}/metrics", timeout=120).text
    assert 'personasteer_runs{status="done"} 1.0' in metrics
    assert "personasteer_http_server_errors_total" in metrics  # from the workers' files


def test_the_access_log_never_holds_a_whole_token(served, tmp_path):
    with (ROOT / "sample_data.jsonl").open("rb") as sample:
        created = requests.post(
            f"{served}/api/v1/runs",
            timeout=120,
            files={"file": ("s.jsonl", sample)},
            data={"suites": "quality"},
        ).json()
    for token in (created["token"], created["manage_token"]):
        requests.get(f"{served}/api/v1/runs/{token}", timeout=30)
        requests.get(f"{served}/compare?runs={token}", timeout=30)
    log = tmp_path / "access.log"
    deadline = time.monotonic() + 60
    while log.read_text().count("/compare?runs=") < 2 and time.monotonic() < deadline:
        time.sleep(0.2)  # gunicorn writes the line after the response
    text = log.read_text()
    assert "/api/v1/runs/" in text and "/compare?runs=" in text
    for token in (created["token"], created["manage_token"]):
        assert token not in text and token[:4] + "…" in text
