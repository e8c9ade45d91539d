"""CPU per judge call of the HTTP client alone (issue 32: half of it).

The scripted judge runs in its own process; this process makes CALLS calls,
CONCURRENCY at a time (one pool shared by every chunk, as the worker's
``JudgePool`` is), with one client per chunk of CHUNK calls (the worker
builds a ``Judge`` and its client per chunk). Its CPU time (every thread,
user + system) per 1,000 calls is the figure. Two clients alternate ROUNDS
times:

* **before**: ``judge_client/http.py`` and ``transport.py`` as they were at
  BASELINE_COMMIT, read from git (urllib3, one keep-alive pool per judge
  host, a blocking call per thread), on CONCURRENCY threads;
* **now**: the product's ``JudgeClient``, coroutines on the judge loop
  through a ``JudgePool`` of CONCURRENCY (aiohttp).

(The ``requests`` client before urllib3, at a8f1518, is in bench/README.md's
table; it needs tenacity, which left the lock with it.)

The prompt is an alignment-sized request (about 3 KB), the reply the
scripted judge's (a few hundred bytes), as in the judge benchmarks.
"""

from __future__ import annotations

import importlib.util
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench.judge_orchestration import start_judge

ROOT = Path(__file__).resolve().parents[1]
BASELINE_COMMIT = "3a18c47"  # the urllib3 client on threads
CALLS = 4_000
CHUNK = 320  # calls per chunk: 160 units x 2 alignment calls
CONCURRENCY = 16
ROUNDS = 3
LATENCY = 0.005  # short: the client's work, not the wait, is measured


def messages(index: int) -> list[dict]:
    reply = f"reply {index}: " + "a considered answer to the user " * 12
    prompt = (
        "You are judging how well a reply fits the user's profile.\n"
        + "Profile: likes hiking, tea, quiet evenings; prefers short answers. " * 20
        + f"\n<<<RESPONSE\n{reply}\nRESPONSE>>>\nScore each dimension."
    )
    return [
        {"role": "system", "content": "You are a careful judge."},
        {"role": "user", "content": prompt},
    ]


def _module_at(commit: str, path: str, name: str, **given):
    """The module at ``path`` as it was at ``commit``, loaded beside the
    current one; ``given`` are names set in it first."""
    source = subprocess.run(
        ["git", "show", f"{commit}:{path}"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    source = source.replace("from judge_client import transport", "")
    spec = importlib.util.spec_from_loader(name, loader=None)
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update(given)
    exec(compile(source, name, "exec"), module.__dict__)
    return module


def baseline_module():
    """``JudgeClient`` at BASELINE_COMMIT over that commit's transport."""
    transport = _module_at(
        BASELINE_COMMIT, "judge_client/transport.py", "judge_transport_baseline"
    )
    return _module_at(
        BASELINE_COMMIT,
        "judge_client/http.py",
        "judge_http_baseline",
        transport=transport,
    )


def _config(url: str):
    from judge_client.config import JudgeConfig

    return JudgeConfig(base_url=url, model="scripted", concurrency=CONCURRENCY)


def timed(client_class, url: str, pool) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of CALLS calls, one client per chunk;
    ``pool.submit(function, *args)``: threads, or the judge pool."""
    config = _config(url)
    cpu, wall = time.process_time(), time.perf_counter()
    for start in range(0, CALLS, CHUNK):
        client = client_class(config)
        futures = [
            pool.submit(client.complete, messages(index), 0)
            for index in range(start, min(start + CHUNK, CALLS))
        ]
        for future in futures:
            assert future.result()["text"]
    return time.process_time() - cpu, time.perf_counter() - wall


def run() -> dict:
    from judge_client.http import JudgeClient
    from judge_client.pool import JudgePool

    judge, url = start_judge(LATENCY)
    threads = ThreadPoolExecutor(CONCURRENCY)
    clients = {
        "before": (baseline_module().JudgeClient, threads),
        "now": (JudgeClient, JudgePool(CONCURRENCY)),
    }
    found: dict[str, list[float]] = {name: [] for name in clients}
    try:
        for client_class, pool in clients.values():  # warm: imports, threads
            timed(client_class, url, pool)
        for _ in range(ROUNDS):
            for name, (client_class, pool) in clients.items():
                cpu, _ = timed(client_class, url, pool)
                found[name].append(cpu * 1000 / CALLS)
    finally:
        threads.shutdown()
        judge.terminate()
        judge.wait()
    before, now = (statistics.median(found[name]) for name in clients)
    return {
        "name": f"judge client CPU per 1,000 calls (c = {CONCURRENCY}, median of {ROUNDS})",
        "before_cpu_s_per_1000": round(before, 3),
        "now_cpu_s_per_1000": round(now, 3),
        "before_all": [round(v, 3) for v in found["before"]],
        "now_all": [round(v, 3) for v in found["now"]],
        "less_cpu_x": round(before / now, 2),
        "baseline": f"judge_client/http.py at {BASELINE_COMMIT}",
    }


if __name__ == "__main__":
    for key, value in run().items():
        print(f"{key:28} {value}", file=sys.stdout)
