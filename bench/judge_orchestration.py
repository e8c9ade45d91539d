"""10,000 judge calls at 50 ms latency through the real pipeline (queue,
embedded worker, judge client, database), against the ideal
calls x latency / concurrency. The scripted judge runs in its own process so
it does not compete with the client for this process's GIL. A second run of
the same file measures the cache (target: zero calls, >= 20x faster)."""

from __future__ import annotations

import json
import random
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.datagen import session

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_judge(latency: float) -> tuple[subprocess.Popen, str]:
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bench.judge_server",
            "--port",
            str(port),
            "--latency",
            str(latency),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    url = process.stdout.readline().strip()
    return process, url


def make_app(workdir: Path, concurrency: int):
    from app import create_app

    return create_app(
        {
            "SECRET_KEY": "bench",
            "INSTANCE_PATH": str(workdir / "instance"),
            "DATABASE_URL": f"sqlite:///{workdir / 'bench.sqlite3'}",
            "UPLOAD_FOLDER": str(workdir / "uploads"),
            "RESULTS_FOLDER": str(workdir / "results"),
            "REDIS_URL": None,
            "JUDGE_CONCURRENCY": concurrency,
        }
    )


def timed_run(app, path: Path, judge_url: str) -> tuple[float, object]:
    import runs

    storage = app.extensions["storage"]
    # The alignment suite only: the deterministic suites would add their own
    # CPU time to the judge path this benchmark isolates.
    request = runs.RunRequest(
        judge_url=judge_url, judge_model="scripted", suites=["alignment"]
    )
    with app.app_context():
        with path.open("rb") as stream:
            run = runs.create_run(stream, path.name, request)
        start = time.perf_counter()
        runs.enqueue(run.id)
    while (run := storage.get_run(run.id)).status in ("queued", "running"):
        time.sleep(0.05)
    return time.perf_counter() - start, run


def run(calls: int = 10_000, latency: float = 0.05, concurrency: int = 32) -> dict:
    units = calls // 2  # alignment + binary per (session, round, method)
    sessions, rounds, methods = units // 20, 10, ("Base", "Ours")
    judge, url = start_judge(latency)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            workdir = Path(tmp)
            path = workdir / "judge_bench.jsonl"
            _write_sessions(path, sessions, rounds, methods)
            app = make_app(workdir, concurrency)
            first_s, first = timed_run(app, path, url)
            second_s, second = timed_run(app, path, url)
            app.extensions["embedded_worker"].stop()
    finally:
        judge.terminate()
        judge.wait()
    ideal = first.judge_calls * latency / concurrency
    return {
        "name": f"judge orchestration (embedded, concurrency {concurrency})",
        "calls": first.judge_calls,
        "latency_s": latency,
        "concurrency": concurrency,
        "wall_s": round(first_s, 2),
        "ideal_s": round(ideal, 2),
        "ratio_to_ideal": round(first_s / ideal, 3),
        "calls_per_s": round(first.judge_calls / first_s, 1),
        "target_ratio": 1.25,
        "status": first.status,
        "rerun_wall_s": round(second_s, 2),
        "rerun_judge_calls": second.judge_calls,
        "rerun_cache_hits": second.cache_hits,
        "rerun_speedup": round(first_s / second_s, 1),
    }


def _write_sessions(path: Path, sessions: int, rounds: int, methods) -> None:

    rng = random.Random(11)
    with path.open("w", encoding="utf-8") as out:
        for index in range(sessions):
            out.write(
                json.dumps(
                    session(rng, index, rounds, list(methods)), ensure_ascii=False
                )
                + "\n"
            )


if __name__ == "__main__":
    print(
        json.dumps(
            run(calls=int(sys.argv[1]) if len(sys.argv) > 1 else 10_000), indent=2
        )
    )
