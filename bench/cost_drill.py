"""Cost drill: the red-team uploads that exhausted the first release, against
the app served in its own process (embedded worker, SQLite, no judge).

* one session of 10,000 rounds (the alignment suite's history made the cost
  quadratic: 4 GB from a 1 MB file) and one session of 10,000 methods (the
  pairwise comparisons were quadratic: 4 GB from 0.5 MB) must be refused at
  validation: the drill reports the HTTP status, the time to the refusal and
  the problem code;
* one line of 7.8 MB (48 s and 1.4 GB before) that the limits allow (200
  rounds x 32 methods x ~1.2 kB replies) is evaluated by the deterministic
  suites: the drill reports the time to a terminal status.

The server's peak RSS (``VmHWM``) is read from ``/proc`` after each step, so
each figure is the peak so far. Baseline: the server's RSS after start-up."""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import requests

from bench.load import start_server

ROUNDS, METHODS = 10_000, 10_000


def _mb(pid: int, field: str) -> float:
    with open(f"/proc/{pid}/status") as status:
        line = next(row for row in status if row.startswith(field))
    return round(int(line.split()[1]) / 1024, 1)


def many_rounds() -> bytes:
    rounds = [
        {
            "round": k,
            "user_message": f"message {k}",
            "responses": {"Base": f"reply {k}", "Ours": f"answer {k}"},
        }
        for k in range(1, ROUNDS + 1)
    ]
    session = {
        "session_id": "s1",
        "user_profile": "p",
        "user_personality": "q",
        "rounds": rounds,
    }
    return (json.dumps(session) + "\n").encode()


def many_methods() -> bytes:
    responses = {f"m{i}": "x" for i in range(METHODS)}
    session = {
        "session_id": "s1",
        "user_profile": "p",
        "user_personality": "q",
        "rounds": [{"round": 1, "user_message": "hi", "responses": responses}],
    }
    return (json.dumps(session) + "\n").encode()


def long_line() -> bytes:
    reply = "Sure, here is a thoughtful and friendly reply about hiking plans. " * 18
    rounds = [
        {
            "round": k,
            "user_message": f"What about day {k}?",
            "responses": {f"method-{m}": f"{reply} ({k}, {m})" for m in range(32)},
        }
        for k in range(1, 201)
    ]
    session = {
        "session_id": "long",
        "user_profile": "p",
        "user_personality": "q",
        "sample_dialogues": ["Hello there, friend!"],
        "rounds": rounds,
    }
    return (json.dumps(session) + "\n").encode()


def refused(base: str, data: bytes, pid: int) -> dict:
    start = time.perf_counter()
    response = requests.post(
        f"{base}/api/v1/runs", files={"file": ("x.jsonl", data)}, timeout=120
    )
    elapsed = time.perf_counter() - start
    codes = sorted({problem["code"] for problem in response.json().get("errors", [])})
    return {
        "status": response.status_code,
        "codes": codes,
        "refused_in_s": round(elapsed, 2),
        "upload_kb": round(len(data) / 1024),
        "peak_rss_mb": _mb(pid, "VmHWM"),
    }


def evaluated(base: str, data: bytes, pid: int) -> dict:
    start = time.perf_counter()
    body = requests.post(
        f"{base}/api/v1/runs",
        files={"file": ("x.jsonl", data)},
        data={"suites": "quality,style"},
        timeout=120,
    ).json()
    status = None
    while time.perf_counter() - start < 600:
        status = requests.get(f"{base}/api/v1/runs/{body['token']}", timeout=60).json()[
            "status"
        ]
        if status not in ("queued", "running"):
            break
        time.sleep(0.5)
    return {
        "status": status,
        "seconds": round(time.perf_counter() - start, 1),
        "upload_mb": round(len(data) / 2**20, 1),
        "peak_rss_mb": _mb(pid, "VmHWM"),
    }


def run() -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        process, base = start_server(Path(tmp))
        try:
            requests.get(base + "/", timeout=30)
            result = {
                "name": "cost drill: hostile uploads against the served app",
                "baseline_rss_mb": _mb(process.pid, "VmRSS"),
            }
            result["rounds_10000"] = refused(base, many_rounds(), process.pid)
            result["methods_10000"] = refused(base, many_methods(), process.pid)
            result["line_7_8_mb"] = evaluated(base, long_line(), process.pid)
            return result
        finally:
            process.terminate()
            process.wait(timeout=30)


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
    sys.exit(0)
