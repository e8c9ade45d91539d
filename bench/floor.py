"""The product's whole CLI run against the floor (issue 32): 10,000 judge
calls at 50 ms on one scripted judge (its own process), at concurrency 16
and 64, ROUNDS rounds, each round alternating

* **floor**: ``bench/floor_client.py``, raw asyncio with keep-alive
  connections, replaying the exact request bodies the product sent (recorded
  by the judge during an untimed first run);
* **embedded**: ``flask --app app evaluate FILE --suite alignment --no-cache
  --concurrency C`` in the embedded default (SQLite, the CLI starts its
  worker process);
* **Redis**: the same command in team mode (Redis + PostgreSQL) with two warm
  ``celery`` workers of ``JUDGE_CONCURRENCY`` C/2 each.

Every time is a whole process's, fork to exit. CPU seconds per 1,000 calls
count the command and its children (the embedded worker), plus the two
workers in Redis mode (``/proc``); the judge's own CPU is left out.
Target: the CLI within 1.10x of the floor at c = 16, 1.25x at c = 64.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from bench import judge_orchestration as orchestration

ROOT = Path(__file__).resolve().parents[1]
FLASK = str(Path(sys.executable).with_name("flask"))
LATENCY = 0.05
SESSIONS, ROUNDS_PER_SESSION = 250, 10  # x 2 methods x 2 calls: 10,000 calls
CONCURRENCIES = (16, 64)
ROUNDS = 3
TARGETS = {16: 1.10, 64: 1.25}


def _adopt_orphans() -> None:
    """Become the subreaper of what this process starts: the embedded
    worker outlives its command by a moment (it exits at the end of file of
    its lifeline pipe) and is then reaped here, its CPU counted."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def _reap_orphans(keep: set[int]) -> None:
    """Wait for every child of this process but ``keep`` (the judge, the
    team-mode workers): the commands' adopted worker processes."""
    me = str(os.getpid())
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in keep:
            continue
        try:
            parent = (entry / "stat").read_text().rsplit(")", 1)[1].split()[1]
        except (OSError, IndexError):
            continue  # gone meanwhile
        if parent == me:
            with contextlib.suppress(ChildProcessError):  # reaped already
                os.waitpid(int(entry.name), 0)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(command: list[str], env: dict | None = None, keep=()) -> tuple[float, float]:
    """(wall, CPU) of one whole process and of its children (``keep``: this
    process's children that are not the command's)."""
    cpu, start = _children_cpu(), time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(
            f"{command[:4]} exited {done.returncode}: {done.stderr[-2000:]}"
        )
    _reap_orphans(set(keep))
    return wall, _children_cpu() - cpu


def _embedded_env(workdir: Path) -> dict:
    unset = ("REDIS_URL", "DATABASE_URL", "PYTHONDONTWRITEBYTECODE", "JUDGE_API_URL")
    env = {k: v for k, v in os.environ.items() if k not in unset}
    return {
        **env,
        "DATABASE_URL": f"sqlite:///{workdir / 'floor.sqlite3'}",
        "UPLOAD_FOLDER": str(workdir / "uploads"),
        "SECRET_KEY": "bench",
        "RESULTS_FOLDER": str(workdir / "results"),
        "QUEUE_FOLDER": str(workdir / "queue"),
    }


def _evaluate(data: Path, url: str, out: Path, concurrency: int | None) -> list[str]:
    command = [
        FLASK,
        "--app",
        "app",
        "evaluate",
        str(data),
        "--suite",
        "alignment",
        "--judge-url",
        url,
        "--judge-model",
        "scripted",
        "--no-cache",
        "--out",
        str(out),
    ]
    return command + (["--concurrency", str(concurrency)] if concurrency else [])


class Deployment:
    """Team mode at one concurrency: a schema, Redis db, two warm workers."""

    def __init__(self, workdir: Path, concurrency: int):
        self.schema = f"floor_{uuid.uuid4().hex[:12]}"
        orchestration.flush_redis()
        orchestration.schema_sql(f'CREATE SCHEMA "{self.schema}"')
        base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        settings = orchestration.deployment_env(workdir, self.schema, concurrency // 2)
        self.env = {**base, **settings}
        app = orchestration.web_app(workdir, settings)
        app.extensions["storage"].upgrade()
        self.workers = [
            orchestration.start_worker(self.env, workdir / f"w{i}.log", f"floor{i}")
            for i in range(2)
        ]
        orchestration.wait_for_workers(app, 2)
        app.extensions["storage"].engine.dispose()

    def cpu(self) -> float:
        return sum(orchestration.cpu_seconds(w.pid) for w in self.workers)

    def close(self) -> None:
        for worker in self.workers:
            orchestration.stop_worker(worker)
        orchestration.flush_redis()
        orchestration.schema_sql(f'DROP SCHEMA IF EXISTS "{self.schema}" CASCADE')


def _record(data: Path, workdir: Path) -> Path:
    """The product's request bodies: one untimed run against a recording judge."""
    bodies = workdir / "bodies.jsonl"
    judge, url = orchestration.start_judge(0.0, record_to=str(bodies))
    try:
        command = _evaluate(data, url, workdir / "record.json", 64)
        _timed(command, _embedded_env(workdir), keep={judge.pid})
        orchestration.judge_server_calls(judge)  # flushes the recording
    finally:
        judge.terminate()
        judge.wait()
    return bodies


def _round(data, workdir, judge, url, bodies, concurrency, deployment) -> dict:
    keep = {judge.pid, *(worker.pid for worker in deployment.workers)}
    floor = _timed(
        [
            sys.executable,
            "-m",
            "bench.floor_client",
            url,
            str(concurrency),
            str(bodies),
        ],
        keep=keep,
    )
    out = workdir / "out.json"
    command = _evaluate(data, url, out, concurrency)
    embedded = _timed(command, _embedded_env(workdir), keep)
    workers_before = deployment.cpu()
    command = _evaluate(data, url, out, None)
    redis_wall, redis_cpu = _timed(command, deployment.env, keep)
    redis_cpu += deployment.cpu() - workers_before
    return {"floor": floor, "embedded": embedded, "redis": (redis_wall, redis_cpu)}


def _summary(concurrency: int, found: list[dict], calls: int) -> dict:
    prefix = f"c{concurrency}_"
    result = {f"{prefix}ideal_s": round(calls * LATENCY / concurrency, 2)}
    for mode in ("floor", "embedded", "redis"):
        walls = [r[mode][0] for r in found]
        result[f"{prefix}{mode}_s"] = round(statistics.median(walls), 2)
        result[f"{prefix}{mode}_all_s"] = [round(w, 2) for w in walls]
        cpu = statistics.median(r[mode][1] for r in found) * 1000 / calls
        result[f"{prefix}{mode}_cpu_s_per_1000"] = round(cpu, 2)
        if mode != "floor":  # each round's run against that round's floor
            ratios = [r[mode][0] / r["floor"][0] for r in found]
            result[f"{prefix}{mode}_to_floor"] = round(statistics.median(ratios), 3)
            result[f"{prefix}{mode}_met"] = (
                statistics.median(ratios) <= TARGETS[concurrency]
            )
    return result


def run() -> dict:
    result: dict = {"name": f"whole CLI run against the floor (median of {ROUNDS})"}
    _adopt_orphans()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        data = workdir / "floor.jsonl"
        orchestration.write_sessions(
            data, SESSIONS, ROUNDS_PER_SESSION, ("Base", "Ours")
        )
        bodies = _record(data, workdir)
        calls = sum(1 for _ in bodies.open("rb"))
        result["calls"] = calls
        judge, url = orchestration.start_judge(LATENCY)
        try:
            for concurrency in CONCURRENCIES:
                deployment = Deployment(workdir, concurrency)
                try:
                    found = [
                        _round(
                            data, workdir, judge, url, bodies, concurrency, deployment
                        )
                        for _ in range(ROUNDS)
                    ]
                finally:
                    deployment.close()
                result.update(_summary(concurrency, found, calls))
            result["judge_calls_served"] = orchestration.judge_server_calls(judge)
        finally:
            judge.terminate()
            judge.wait()
    return result


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
