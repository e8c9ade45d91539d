"""10,000 judge calls at 50 ms latency through the real pipeline (upload,
queue, worker, judge client, database), each configuration against its ideal
calls x latency / concurrency:

* embedded (the app's worker process, SQLite) at concurrency 8, 32 and 64;
  at 32 a second upload of the same file measures the re-run (an identical
  finished run's rows are reused: zero calls; timed from the upload);
* Redis + PostgreSQL with two separate ``celery`` worker processes of
  ``JUDGE_CONCURRENCY`` 16 and then 32 each (32 and 64 in all), the web side
  in this process.

The scripted judge runs in its own process so it does not compete with the
client for a GIL; it reports its own call count, which shows whether any call
was made twice. CPU seconds per process (``/proc/<pid>/stat``) and the busy
cores of the machine (``/proc/stat``) show what limits a configuration.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from testing.datagen import session

ROOT = Path(__file__).resolve().parents[1]
REDIS_URL = "redis://127.0.0.1:6379/10"  # tests use 15, 14, ... (one per xdist worker)
POSTGRES_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
EMBEDDED_CONCURRENCIES = (8, 32, 64)
RERUN_CONCURRENCY = 32
WORKERS = 2
WORKER_CONCURRENCIES = (16, 32)  # two workers: c = 32 and c = 64 in all
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


# -- the scripted judge, in its own process ----------------------------------


def serve_judge(latency: float, record_to: str | None = None) -> None:
    """Child process: the scripted judge. Prints its URL, then its total call
    count once per line read from stdin. ``record_to``: a file that gets
    every request body, one a line."""
    from testing.judge_server import ScriptedJudge

    with ScriptedJudge(latency) as judge:
        if record_to:
            judge.state.record_to = open(record_to, "ab", buffering=1 << 20)  # noqa: SIM115
        print(judge.url, flush=True)
        for _ in sys.stdin:
            if judge.state.record_to:
                judge.state.record_to.flush()
            print(judge.state.calls, flush=True)


def start_judge(
    latency: float, record_to: str | None = None
) -> tuple[subprocess.Popen, str]:
    code = (
        "from bench.judge_orchestration import serve_judge; "
        f"serve_judge({latency}, {record_to!r})"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", code],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    url = process.stdout.readline().strip()
    return process, url


def judge_server_calls(judge: subprocess.Popen) -> int:
    """Calls the judge process has answered so far (every attempt counts)."""
    judge.stdin.write("\n")
    judge.stdin.flush()
    return int(judge.stdout.readline())


# -- CPU accounting ----------------------------------------------------------


def cpu_seconds(pid: int | str) -> float:
    """User + system CPU of one process (``/proc/<pid>/stat`` fields 14, 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def busy_seconds() -> float:
    """CPU seconds the whole machine spent busy (``/proc/stat``, all cores)."""
    ticks = [int(v) for v in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    idle = ticks[3] + ticks[4]  # idle + iowait
    return (sum(ticks[:8]) - idle) / CLOCK_TICKS


def pids_named(name: str) -> list[str]:
    """Live processes whose command name is ``name`` (e.g. every postgres)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "comm").read_text().strip() == name:
                found.append(entry.name)
        except OSError:
            continue  # exited while we looked
    return found


def cpu_snapshot(pids: dict[str, list]) -> dict[str, float]:
    """CPU seconds per label (summed over its pids) plus the machine's busy time."""
    snapshot = {"machine": busy_seconds()}
    for label, group in pids.items():
        total = 0.0
        for pid in group:
            try:
                total += cpu_seconds(pid)
            except OSError:
                continue
        snapshot[label] = total
    return snapshot


def cpu_used(before: dict, after: dict, wall: float) -> dict:
    """CPU seconds per label over a window, and the busy cores of the machine."""
    used = {f"cpu_{k}_s": round(after[k] - before[k], 1) for k in before}
    used["busy_cores"] = round(used.pop("cpu_machine_s") / wall, 2)
    return used


# -- one timed run -----------------------------------------------------------


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


def timed_run(
    app, path: Path, judge_url: str, suites: tuple[str, ...] = ("alignment",)
) -> tuple[float, float, object]:
    """Create the run, then time enqueue -> final status (seconds) and
    enqueue -> last chunk stored (the judge phase, before aggregation)."""
    from pipeline.service.runs import RunRequest

    storage, service = app.extensions["storage"], app.extensions["runs"]
    # Judge suites only (alignment by default): the deterministic suites would
    # add their own CPU time to the judge path this benchmark isolates.
    request = RunRequest(
        judge_url=judge_url, judge_model="scripted", suites=list(suites)
    )
    start = time.perf_counter()  # from the upload: a reused run is made in create
    with path.open("rb") as stream:
        run = service.create(stream, path.name, request)
    service.enqueue(run.id)
    chunks_s = None
    while (run := storage.runs.get_run(run.id)).status in ("queued", "running"):
        if chunks_s is None and run.total and run.done >= run.total:
            chunks_s = time.perf_counter() - start
        time.sleep(0.05)
    wall = time.perf_counter() - start
    return wall, chunks_s or wall, run


def figures(prefix: str, wall: float, chunks_s: float, run, ideal: float) -> dict:
    """The flat figures of one timed run, keys prefixed (``c8_``, ...)."""
    return {
        f"{prefix}status": run.status,
        f"{prefix}wall_s": round(wall, 2),
        f"{prefix}ideal_s": round(ideal, 2),
        f"{prefix}ratio_to_ideal": round(wall / ideal, 3),
        f"{prefix}calls_per_s": round(run.judge_calls / wall, 1),
        f"{prefix}judge_phase_s": round(chunks_s, 2),
    }


# -- embedded mode -----------------------------------------------------------


def embedded(data: Path, judge, url: str, latency: float, concurrency: int) -> dict:
    """One embedded run at ``concurrency`` (plus the cached re-run at 32),
    against ideal = judge calls x latency / concurrency."""
    prefix = f"c{concurrency}_"
    with tempfile.TemporaryDirectory() as tmp:
        app = make_app(Path(tmp), concurrency)
        try:
            worker = warm_worker(app)  # started as `python app.py` starts it
            pids = {"judge": [judge.pid], "bench": [os.getpid()], "worker": [worker]}
            calls_before = judge_server_calls(judge)
            before = cpu_snapshot(pids)
            wall, chunks_s, run = timed_run(app, data, url)
            after = cpu_snapshot(pids)
            served = judge_server_calls(judge) - calls_before
            ideal = run.judge_calls * latency / concurrency
            result = figures(prefix, wall, chunks_s, run, ideal)
            result[f"{prefix}judge_server_calls"] = served
            result.update(_prefixed(prefix, cpu_used(before, after, wall)))
            if concurrency == RERUN_CONCURRENCY:
                result.update(rerun(app, data, url, wall, prefix))
        finally:
            app.extensions["worker"].stop()
            app.extensions["storage"].engine.dispose()
    return result


def warm_worker(app) -> int:
    """Start the app's worker process; its pid once it runs."""
    supervisor = app.extensions["worker"]
    supervisor.ensure_started()
    while supervisor.pid is None:
        time.sleep(0.01)
    return supervisor.pid


def rerun(app, data: Path, url: str, first_s: float, prefix: str) -> dict:
    """The same file again on the same database: cache hits against the first run."""
    wall, _, run = timed_run(app, data, url)
    return {
        f"{prefix}rerun_wall_s": round(wall, 2),
        f"{prefix}rerun_judge_calls": run.judge_calls,
        f"{prefix}rerun_cache_hits": run.cache_hits,
        f"{prefix}rerun_speedup": round(first_s / wall, 1),
    }


def _prefixed(prefix: str, values: dict) -> dict:
    return {f"{prefix}{key}": value for key, value in values.items()}


# -- Redis mode: two worker processes ----------------------------------------


def start_worker(env: dict, log_path: Path, name: str) -> subprocess.Popen:
    """``celery -A app:celery_app worker`` as tests/workers.py starts it."""
    celery = Path(sys.executable).with_name("celery")
    with log_path.open("ab") as log:  # the child keeps its own descriptor
        return subprocess.Popen(
            [
                str(celery),
                "-A",
                "app:celery_app",
                "worker",
                "--pool",
                "threads",
                "--concurrency",
                "4",
                "--loglevel",
                "WARNING",
                "--without-heartbeat",
                "--without-gossip",
                "--without-mingle",
                "--hostname",
                f"{name}@%h",
            ],
            cwd=ROOT,
            env={**os.environ, **env},
            stdout=log,
            stderr=subprocess.STDOUT,
        )


def stop_worker(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def wait_for_workers(app, count: int, timeout: float = 60.0) -> None:
    """Until ``count`` workers answer a ping, so start-up is not timed."""
    control = app.extensions["queue"].celery.control
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if len(control.ping(timeout=0.5)) >= count:
            return
    raise RuntimeError(f"fewer than {count} workers answered within {timeout} s")


def flush_redis() -> None:
    import redis

    with redis.Redis.from_url(REDIS_URL) as client:
        client.flushdb()


def schema_sql(statement: str) -> None:
    from sqlalchemy import create_engine, text

    admin = create_engine(POSTGRES_URL)
    try:
        with admin.begin() as conn:
            conn.execute(text(statement))
    finally:
        admin.dispose()


def deployment_env(workdir: Path, schema: str, concurrency: int) -> dict[str, str]:
    """What the workers and the web side share: Redis db 14, the schema, uploads."""
    return {
        "REDIS_URL": REDIS_URL,
        "DATABASE_URL": f"{POSTGRES_URL}?options=-csearch_path%3D{schema}",
        "UPLOAD_FOLDER": str(workdir / "uploads"),
        "RESULTS_FOLDER": str(workdir / "results"),
        "SECRET_KEY": "bench",
        "JUDGE_CONCURRENCY": str(concurrency),
    }


def web_app(workdir: Path, env: dict):
    """The web side in this process, configured from the same environment."""
    import config
    from app import create_app

    return create_app(
        {
            "SECRET_KEY": "bench",
            "INSTANCE_PATH": str(workdir / "instance"),
            **config.from_environ(env),
        }
    )


def redis_workers(
    data: Path, judge, url: str, latency: float, concurrency: int
) -> dict:
    """Two worker processes (``concurrency`` judge calls each in flight)
    against ideal = judge calls x latency / (2 x concurrency); the judge's
    own count against 10,000."""
    schema = f"bench_{uuid.uuid4().hex[:12]}"
    flush_redis()
    schema_sql(f'CREATE SCHEMA "{schema}"')
    try:
        with tempfile.TemporaryDirectory() as tmp:
            return deployment(Path(tmp), schema, data, judge, url, latency, concurrency)
    finally:
        flush_redis()
        schema_sql(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def deployment(
    workdir: Path, schema: str, data, judge, url, latency, concurrency
) -> dict:
    """Web app here, the worker processes beside it; workers stopped on any exit."""
    env = deployment_env(workdir, schema, concurrency)
    app = web_app(workdir, env)
    app.extensions["storage"].upgrade()  # `flask db upgrade`, before the workers start
    processes = []
    try:
        for index in range(WORKERS):
            name = f"bench{index + 1}"
            processes.append(start_worker(env, workdir / f"{name}.log", name))
        wait_for_workers(app, WORKERS)
        return redis_timed(app, data, judge, url, latency, processes, concurrency)
    finally:
        for process in processes:
            stop_worker(process)
        app.extensions["storage"].engine.dispose()


def redis_timed(app, data, judge, url, latency, processes, concurrency) -> dict:
    """Time one run through the workers, with CPU seconds of every process."""
    total = WORKERS * concurrency
    prefix = f"redis_{WORKERS}workers_c{total}_"
    pids = {f"worker{i + 1}": [p.pid] for i, p in enumerate(processes)}
    pids.update(judge=[judge.pid], web=[os.getpid()])
    pids.update(redis=pids_named("redis-server"), postgres=pids_named("postgres"))
    calls_before = judge_server_calls(judge)
    before = cpu_snapshot(pids)
    wall, chunks_s, run = timed_run(app, data, url)
    after = cpu_snapshot(pids)
    result = figures(prefix, wall, chunks_s, run, run.judge_calls * latency / total)
    result[f"{prefix}run_judge_calls"] = run.judge_calls
    result[f"{prefix}judge_server_calls"] = judge_server_calls(judge) - calls_before
    result.update(_prefixed(prefix, cpu_used(before, after, wall)))
    return result


# -- the benchmark -----------------------------------------------------------


def run(calls: int = 10_000, latency: float = 0.05) -> dict:
    """Every configuration on the same generated file and the same judge."""
    units = calls // 2  # alignment + binary per (session, round, method)
    sessions, rounds, methods = units // 20, 10, ("Base", "Ours")
    result = {
        "name": "judge orchestration (embedded c8/c32/c64; Redis 2 workers x 16 and x 32)",
        "calls": sessions * rounds * len(methods) * 2,
        "latency_s": latency,
        "target_ratio": 1.25,
    }
    judge, url = start_judge(latency)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            data = Path(tmp) / "judge_bench.jsonl"
            write_sessions(data, sessions, rounds, methods)
            for concurrency in EMBEDDED_CONCURRENCIES:
                result.update(embedded(data, judge, url, latency, concurrency))
            for concurrency in WORKER_CONCURRENCIES:
                result.update(redis_workers(data, judge, url, latency, concurrency))
    finally:
        judge.terminate()
        judge.wait()
    return result


def write_sessions(path: Path, sessions: int, rounds: int, methods) -> None:
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
