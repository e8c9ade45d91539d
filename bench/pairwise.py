"""Pairwise judging of 4 methods x 200 sessions x 5 rounds (6 pairs, both
orders: 12,000 judge calls) at 50 ms judge latency with ``JUDGE_CONCURRENCY``
32, embedded mode, through the real pipeline; wall time against the ideal
calls x latency / concurrency. The scripted judge runs in its own process
(``bench/judge_orchestration.py``)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from bench.judge_orchestration import (
    cpu_snapshot,
    cpu_used,
    figures,
    judge_server_calls,
    make_app,
    start_judge,
    timed_run,
    write_sessions,
)

METHODS = ("Base", "RAG", "Ours", "Ours-v2")
SESSIONS, ROUNDS, CONCURRENCY, LATENCY = 200, 5, 32, 0.05


def run(sessions: int = SESSIONS, rounds: int = ROUNDS) -> dict:
    pairs = len(METHODS) * (len(METHODS) - 1) // 2
    result = {
        "name": "pairwise judging (4 methods, both orders, c32, 50 ms)",
        "calls": sessions * rounds * pairs * 2,
        "latency_s": LATENCY,
        "concurrency": CONCURRENCY,
    }
    judge, url = start_judge(LATENCY)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            data = Path(tmp) / "pairwise_bench.jsonl"
            write_sessions(data, sessions, rounds, METHODS)
            app = make_app(Path(tmp), CONCURRENCY)
            try:
                served_before = judge_server_calls(judge)
                processes = {"judge": [judge.pid], "bench": [os.getpid()]}
                before = cpu_snapshot(processes)
                wall, judge_phase, finished = timed_run(app, data, url, ("pairwise",))
                after = cpu_snapshot(processes)
                ideal = finished.judge_calls * LATENCY / CONCURRENCY
                result.update(figures("", wall, judge_phase, finished, ideal))
                result["judge_server_calls"] = judge_server_calls(judge) - served_before
                result.update(cpu_used(before, after, wall))
            finally:
                app.extensions["worker"].stop()
                app.extensions["storage"].engine.dispose()
    finally:
        judge.terminate()
        judge.wait()
    return result


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
