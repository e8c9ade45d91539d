"""Load drill: 50 concurrent clients on loopback for 60 s, each looping over
upload -> poll status -> view the dashboard (and a shared finished dashboard),
against the app served by werkzeug's threaded server in its own process
(embedded worker, SQLite, no judge). Bounded in time and count; reports
requests/s, error count and latency percentiles. The baseline is the upload
page fetched by one client alone before the load starts."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]
SERVE = """
import logging
from werkzeug.serving import make_server
from app import app
logging.getLogger("werkzeug").setLevel(logging.ERROR)
server = make_server("127.0.0.1", 0, app, threaded=True)
print(server.server_port, flush=True)
server.serve_forever()
"""
UPLOAD = (ROOT / "sample_data.jsonl").read_bytes()


def start_server(workdir: Path) -> tuple[subprocess.Popen, str]:
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{workdir / 'load.sqlite3'}",
        "UPLOAD_FOLDER": str(workdir / "uploads"),
        "SECRET_KEY": "load",
        # 50 clients share 127.0.0.1: the drill measures throughput, not abuse.
        "RATE_LIMITS_ENABLED": "false",
    }
    for name in ("REDIS_URL", "JUDGE_API_URL", "JUDGE_MODEL"):
        env.pop(name, None)
    process = subprocess.Popen(
        [sys.executable, "-c", SERVE],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    return process, f"http://127.0.0.1:{process.stdout.readline().strip()}"


class Tally:
    def __init__(self):
        self.latencies: list[float] = []
        self.errors: list[str] = []
        self.lock = threading.Lock()

    def timed(self, session: requests.Session, method: str, url: str, **kwargs):
        start = time.perf_counter()
        try:
            response = session.request(
                method, url, timeout=30, allow_redirects=False, **kwargs
            )
            ok = response.status_code < 400
            problem = None if ok else f"{method} {url} -> {response.status_code}"
        except requests.RequestException as exc:
            response, problem = None, f"{method} {url} -> {type(exc).__name__}"
        with self.lock:
            self.latencies.append(time.perf_counter() - start)
            if problem:
                self.errors.append(problem)
        return response


def client_loop(base: str, shared_token: str, deadline: float, tally: Tally) -> None:
    session = requests.Session()
    while time.monotonic() < deadline:
        files = {"file": ("load.jsonl", UPLOAD)}
        created = tally.timed(session, "POST", f"{base}/api/v1/runs", files=files)
        token = (
            created.json()["token"]
            if created is not None and created.status_code == 202
            else None
        )
        for _ in range(3):
            if token:
                tally.timed(session, "GET", f"{base}/api/v1/runs/{token}")
        tally.timed(session, "GET", f"{base}/r/{shared_token}")
        if token:
            tally.timed(session, "GET", f"{base}/r/{token}")


def finished_run(base: str) -> str:
    token = requests.post(
        f"{base}/api/v1/runs", files={"file": ("s.jsonl", UPLOAD)}, timeout=30
    ).json()["token"]
    while requests.get(f"{base}/api/v1/runs/{token}", timeout=30).json()["status"] in (
        "queued",
        "running",
    ):
        time.sleep(0.2)
    return token


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def run(clients: int = 50, seconds: float = 60.0) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        server, base = start_server(Path(tmp))
        try:
            shared = finished_run(base)
            solo = []
            for _ in range(20):
                start = time.perf_counter()
                requests.get(f"{base}/", timeout=30)
                solo.append(time.perf_counter() - start)
            tally = Tally()
            deadline = time.monotonic() + seconds
            threads = [
                threading.Thread(
                    target=client_loop, args=(base, shared, deadline, tally)
                )
                for _ in range(clients)
            ]
            started = time.perf_counter()
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            elapsed = time.perf_counter() - started
        finally:
            server.terminate()
            server.wait(timeout=30)
            server.stdout.close()
    return {
        "name": f"load: {clients} clients x {seconds:.0f} s (upload, poll, dashboards)",
        "requests": len(tally.latencies),
        "requests_per_s": round(len(tally.latencies) / elapsed, 1),
        "errors": len(tally.errors),
        "first_errors": tally.errors[:5],
        "p50_ms": round(statistics.median(tally.latencies) * 1000, 1),
        "p95_ms": round(percentile(tally.latencies, 0.95) * 1000, 1),
        "p99_ms": round(percentile(tally.latencies, 0.99) * 1000, 1),
        "baseline_solo_upload_page_ms": round(statistics.median(solo) * 1000, 1),
    }


if __name__ == "__main__":
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 60.0
    print(json.dumps(run(seconds=seconds), indent=2))
