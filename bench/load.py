"""Load drills with Locust (``bench/locustfile.py``), headless, bounded in time,
on loopback only, against the app served by werkzeug's threaded server in its
own process (embedded worker, SQLite, rate limits off). Locust runs as a
subprocess and writes CSV stats; this process never imports it (it
monkey-patches the standard library with gevent). Two scenarios:

* ``mixed``: 50 ``MixedUser`` clients (spawned 10/s) for 60 s, no judge:
  dashboard and status reads of a shared finished run, the upload page, and
  uploads of ``sample_data.jsonl`` that start evaluations, each polled.
  Requests/s, p50/p95/p99 overall and per route, failures. Baseline: the
  upload page fetched by one client alone before the load (median of 20);
  the shared dashboard alone too (median of 5).
* ``responsiveness``: the scripted judge (``testing/judge_server.py``, own
  process) at 50 ms, a 300-session file (10 rounds x 4 methods) uploaded
  through ``POST /api/v1/runs`` with suites alignment and quality, then 20
  ``ReaderUser`` clients reading that run's ``/r/<token>`` and
  ``/api/v1/runs/<token>`` for 30 s (a) while it evaluates and (b) after it
  has finished. p50/p95/p99 per phase and route (target: p95 < 300 ms in both
  phases), failures, how far the run got during (a). Baseline: each route
  fetched by one client alone just before each phase (median of 5).

Every phase also reports the CPU cores the server process (web and embedded
worker, one interpreter) and Locust used: a server near 1.0 is CPU-bound.
"""

from __future__ import annotations

import csv
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

from bench.judge_orchestration import cpu_seconds, start_judge, write_sessions

ROOT = Path(__file__).resolve().parents[1]
LOCUST = Path(sys.executable).with_name("locust")
LOCUSTFILE = Path(__file__).resolve().with_name("locustfile.py")
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
FINAL = ("done", "partial", "failed", "cancelled")
MIXED_USERS, MIXED_SPAWN_RATE, MIXED_SECONDS = 50, 10, 60
READERS, READ_SECONDS = 20, 30
SESSIONS, ROUNDS, METHODS = 300, 10, ("Base", "RAG", "Ours", "Oracle")
LATENCY, JUDGE_CONCURRENCY = 0.05, 32
RUN_TIMEOUT_S = 900  # a run that has not finished by then fails the drill


# -- the app and the judge, each in its own process ----------------------------


def start_server(workdir: Path, extra: dict | None = None, gunicorn: bool = False):
    """The app on 127.0.0.1 (a free port); returns (process, base URL).
    ``gunicorn``: served by ``gunicorn.conf.py`` with two workers (each its
    own process and page caches) instead of werkzeug's threaded server."""
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{workdir / 'load.sqlite3'}",
        "UPLOAD_FOLDER": str(workdir / "uploads"),
        "RESULTS_FOLDER": str(workdir / "results"),
        "SECRET_KEY": "load",
        # Every client shares 127.0.0.1: the drill measures load, not abuse.
        "RATE_LIMITS_ENABLED": "false",
    }
    for name in ("REDIS_URL", "JUDGE_API_URL", "JUDGE_MODEL", "JUDGE_MODELS"):
        env.pop(name, None)
    env.update(extra or {})
    if gunicorn:
        return _start_gunicorn(workdir, env)
    with (workdir / "server.log").open("ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-c", SERVE],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
        )
    port = process.stdout.readline().strip()
    if not port.isdigit():
        stop(process)
        tail = (workdir / "server.log").read_text(errors="replace")[-2000:]
        raise RuntimeError(f"the server did not start:\n{tail}")
    return process, f"http://127.0.0.1:{port}"


def _start_gunicorn(workdir: Path, env: dict) -> tuple[subprocess.Popen, str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [
        sys.executable,
        "-m",
        "gunicorn",
        "-c",
        "gunicorn.conf.py",
        "--bind",
        f"127.0.0.1:{port}",
        "-w",
        "2",
        "--access-logfile",
        "/dev/null",
        "app:app",
    ]
    with (workdir / "server.log").open("ab") as log:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=log)
    base, deadline = f"http://127.0.0.1:{port}", time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if requests.get(f"{base}/healthz", timeout=2).ok:
                return process, base
        except requests.RequestException:
            time.sleep(0.2)
    stop(process)
    raise RuntimeError("gunicorn did not start")


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
    for stream in (process.stdin, process.stdout):
        if stream:
            stream.close()


# -- Locust, headless, in its own process ---------------------------------------


def locust(
    base: str, user: str, users: int, rate: float, seconds: int, env: dict, prefix: Path
) -> tuple[dict[str, dict], float]:
    """Run ``user`` x ``users`` for ``seconds``; (CSV rows by name incl.
    ``Aggregated``, CPU seconds Locust used)."""
    command = [
        str(LOCUST),
        "-f",
        str(LOCUSTFILE),
        "--headless",
        "-u",
        str(users),
        "-r",
        str(rate),
        "-t",
        f"{seconds}s",
        "--host",
        base,
        "--csv",
        str(prefix),
        "--only-summary",
        "--loglevel",
        "WARNING",
        user,
    ]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with prefix.with_suffix(".log").open("wb") as log:
        # exit code 1 when any request failed: the CSV says which
        subprocess.run(
            command,
            cwd=ROOT,
            env={**os.environ, **env},
            stdout=log,
            stderr=subprocess.STDOUT,
            timeout=seconds + 90,
            check=False,
        )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    stats = Path(f"{prefix}_stats.csv")
    if not stats.exists():
        raise RuntimeError(prefix.with_suffix(".log").read_text()[-2000:])
    with stats.open(newline="") as rows:
        return {row["Name"]: row for row in csv.DictReader(rows)}, cpu


def percentiles(row: dict | None) -> list[float | None]:
    """[p50, p95, p99] in ms (Locust rounds above 100 ms to 2 digits)."""
    if row is None or row["Request Count"] == "0":
        return [None, None, None]
    return [float(row[p]) for p in ("50%", "95%", "99%")]


def first_failures(prefix: Path, count: int = 3) -> list[str]:
    with Path(f"{prefix}_failures.csv").open(newline="") as rows:
        found = list(csv.DictReader(rows))[:count]
    return [
        f"{r['Method']} {r['Name']}: {r['Error']} x{r['Occurrences']}" for r in found
    ]


# -- the app over HTTP, one client -----------------------------------------------


def solo_ms(url: str, count: int) -> float:
    """Median of ``count`` sequential GETs of ``url`` by one client, in ms."""
    times = []
    with requests.Session() as session:
        for _ in range(count):
            start = time.perf_counter()
            session.get(url, timeout=60).raise_for_status()
            times.append(time.perf_counter() - start)
    return round(statistics.median(times) * 1000, 1)


def upload(base: str, content: bytes, suites: str | None = None) -> str:
    data = {"suites": suites} if suites else {}
    files = {"file": ("drill.jsonl", content)}
    response = requests.post(f"{base}/api/v1/runs", files=files, data=data, timeout=120)
    response.raise_for_status()
    return response.json()["token"]


def status(base: str, token: str) -> dict:
    response = requests.get(f"{base}/api/v1/runs/{token}", timeout=120)
    response.raise_for_status()
    return response.json()


def wait_until(base: str, token: str, wanted, timeout: float) -> dict:
    """Poll the run's status (every 0.5 s) until ``wanted(status)``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        body = status(base, token)
        if wanted(body["status"]):
            return body
        time.sleep(0.5)
    raise RuntimeError(f"run {token} still {body['status']} after {timeout} s")


# -- one drill: Locust against the server, with CPU accounting -------------------------


def drill(
    tag: str,
    base: str,
    server,
    user: str,
    users: int,
    rate: float,
    seconds: int,
    token: str,
    workdir: Path,
) -> dict:
    """Figures of one Locust run, keys prefixed ``tag``: overall and per route."""
    cpu = cpu_seconds(server.pid)
    stats, locust_cpu = locust(
        base, user, users, rate, seconds, {"DRILL_TOKEN": token}, workdir / tag
    )
    server_cpu = cpu_seconds(server.pid) - cpu
    every = stats.pop("Aggregated")
    result = {
        f"{tag}_requests": int(every["Request Count"]),
        f"{tag}_failures": int(every["Failure Count"]),
        f"{tag}_rps": round(float(every["Requests/s"]), 1),
        f"{tag}_p50/p95/p99_ms": percentiles(every),
        f"{tag}_server_cores": round(server_cpu / seconds, 2),
        f"{tag}_locust_cores": round(locust_cpu / seconds, 2),
    }
    for name, row in stats.items():
        result[f"{tag}_route {row['Type']} {name}"] = {
            "requests": int(row["Request Count"]),
            "failures": int(row["Failure Count"]),
            "p50/p95/p99_ms": percentiles(row),
        }
    if result[f"{tag}_failures"]:
        result[f"{tag}_first_failures"] = first_failures(workdir / tag)
    return result


# -- scenario: mixed traffic ------------------------------------------------------


def mixed(workdir: Path) -> dict:
    """50 MixedUsers x 60 s against one app with no judge."""
    server, base = start_server(workdir)
    try:
        shared = upload(base, UPLOAD)
        wait_until(base, shared, FINAL.__contains__, 120)
        result = {
            "mixed_users": MIXED_USERS,
            "mixed_seconds": MIXED_SECONDS,
            "mixed_baseline_solo_upload_page_ms": solo_ms(f"{base}/", 20),
            "mixed_solo_dashboard_ms": solo_ms(f"{base}/r/{shared}", 5),
        }
        users = ("MixedUser", MIXED_USERS, MIXED_SPAWN_RATE, MIXED_SECONDS)
        result.update(drill("mixed", base, server, *users, shared, workdir))
    finally:
        stop(server)
    return result


# -- scenario: responsiveness while a run evaluates and after -----------------------


def read_phase(tag: str, base: str, token: str, server, workdir: Path) -> dict:
    """20 ReaderUsers x 30 s on one run; solo medians of each route first."""
    routes = {"dashboard": f"/r/{token}", "status": f"/api/v1/runs/{token}"}
    result = {
        f"{tag}_solo_{name}_ms": solo_ms(base + path, 5)
        for name, path in routes.items()
    }
    users = ("ReaderUser", READERS, READERS, READ_SECONDS)
    result.update(drill(tag, base, server, *users, token, workdir))
    return result


def responsiveness(workdir: Path, gunicorn: bool = False) -> dict:
    """A 300-session alignment + quality run at 50 ms, read by 20 clients."""
    judge, url = start_judge(LATENCY)
    server = None
    try:
        data = workdir / "drill.jsonl"
        write_sessions(data, SESSIONS, ROUNDS, METHODS)
        judge_env = {"JUDGE_API_URL": url, "JUDGE_MODEL": "scripted"}
        judge_env["JUDGE_CONCURRENCY"] = str(JUDGE_CONCURRENCY)
        server, base = start_server(workdir, judge_env, gunicorn)
        started = time.monotonic()
        token = upload(base, data.read_bytes(), "alignment,quality")
        body = wait_until(base, token, lambda found: found != "queued", 120)
        result = {"during_status_at_start": body["status"]}
        result.update(read_phase("during", base, token, server, workdir))
        result.update(progress("during_at_end", status(base, token)))
        body = wait_until(base, token, FINAL.__contains__, RUN_TIMEOUT_S)
        result["run_status"] = body["status"]
        result["run_upload_to_final_s"] = round(time.monotonic() - started, 1)
        result.update(read_phase("after", base, token, server, workdir))
    finally:
        if server is not None:
            stop(server)
        stop(judge)
    return result


def progress(tag: str, body: dict) -> dict:
    done, total = body["progress"]["done"], body["progress"]["total"]
    share = f"{100 * done / total:.0f}%" if total else "-"
    return {f"{tag}_status": body["status"], f"{tag}_done": f"{done}/{total} ({share})"}


# -- the benchmark -------------------------------------------------------------------


def run() -> dict:
    result = {
        "name": "load (Locust): 50 mixed clients x 60 s; 20 readers of a 300-session "
        "run at 50 ms judge, during and after",
        "readers": READERS,
        "read_seconds": READ_SECONDS,
        "run_units": SESSIONS * ROUNDS * len(METHODS),
        "judge_latency_s": LATENCY,
        "judge_concurrency": JUDGE_CONCURRENCY,
        "target_p95_ms": 300,
    }
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "mixed").mkdir()
        (Path(tmp) / "readers").mkdir()
        (Path(tmp) / "gunicorn").mkdir()
        result.update(mixed(Path(tmp) / "mixed"))
        result.update(responsiveness(Path(tmp) / "readers"))
        served = responsiveness(Path(tmp) / "gunicorn", gunicorn=True)
        result.update({f"gunicorn_{key}": value for key, value in served.items()})
    return result


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
