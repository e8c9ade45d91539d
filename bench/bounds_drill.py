"""Bounds drill (issue 27): the red team's findings repeated against the app
served in its own process (embedded worker, SQLite) with the scripted judge
(``testing/judge_server.py``) in this process. Each step prints the bounded
figure beside the one the red team measured:

* the word-diff page of a 1.15 MB upload (6 rounds of 32,000 CJK characters
  a reply): 137 s of CPU for one GET before;
* a search of that upload, and ``/healthz`` while four clients request diffs
  and searches without pause (27.7 s of waiting before);
* a run whose judge never answers parseably under ``MAX_JUDGE_CALLS_PER_RUN``
  = 100 (200 calls before), then a retry of it (more calls before);
* replies over ``JUDGE_MAX_REPLY_BYTES`` (read and stored whole before);
* a judge that drips one byte every 0.2 s: each call ends by
  ``JUDGE_DEADLINE_S``; after cancelling that run, a normal run's calls
  (0 calls in 181 s before);
* a cross-site POST (``Origin`` of another site) creating a run (accepted
  before).

Baseline: ``/healthz`` alone, and the server's RSS after start-up."""

from __future__ import annotations

import json
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import requests

from bench.cost_drill import _mb
from bench.load import start_server
from testing.judge_server import ScriptedJudge
from tests import crafted

LIMIT, DEADLINE_S = 100, 5


def cjk_upload() -> bytes:
    rng = random.Random(1)

    def text(n: int) -> str:
        return "".join(chr(rng.randint(0x4E00, 0x4E00 + 3000)) for _ in range(n))

    rounds = [
        {
            "round": k,
            "user_message": "m",
            "responses": {"A": text(32_000), "B": text(32_000)},
        }
        for k in range(1, 7)
    ]
    session = {
        "session_id": "s",
        "user_profile": "p",
        "user_personality": "q",
        "rounds": rounds,
    }
    return (json.dumps(session, ensure_ascii=False) + "\n").encode()


def faulty(fault: str, sessions: int = 3) -> bytes:
    """``sessions`` x 5 rounds x 2 methods, every reply carrying ``fault``."""
    found = []
    for index in range(sessions):
        session = crafted.alignment_sessions()[index % 2]
        session["session_id"] = f"s{index}"
        for round_ in session["rounds"]:
            round_["responses"] = {
                m: f"{t} [[fault={fault}]]" if fault else t
                for m, t in round_["responses"].items()
            }
        found.append(session)
    return "".join(json.dumps(s) + "\n" for s in found).encode()


def post(base: str, data: bytes, **fields) -> dict:
    files = {"file": ("x.jsonl", data)}
    return requests.post(
        f"{base}/api/v1/runs", files=files, data=fields, timeout=120
    ).json()


def wait(base: str, token: str, limit_s: float = 600) -> dict:
    start = time.perf_counter()
    while time.perf_counter() - start < limit_s:
        body = requests.get(f"{base}/api/v1/runs/{token}", timeout=60).json()
        if body["status"] not in ("queued", "running"):
            return body
        time.sleep(0.3)
    return body


def timed_get(url: str) -> float:
    start = time.perf_counter()
    requests.get(url, timeout=600)
    return round(time.perf_counter() - start, 4)


def explore_pages(base: str) -> dict:
    token = post(base, cjk_upload(), suites="quality")["token"]
    wait(base, token)
    diff = f"{base}/r/{token}/diff?id=s&a=A&b=B"
    search = f"{base}/r/{token}/search?q=%E4%B8%80%E4%B8%81"
    found = {
        "diff_s": timed_get(diff),
        "search_s": timed_get(search),
        "before": "diff 137 s of CPU; search 7.8 s on 190 MB",
    }
    alone = [timed_get(f"{base}/healthz") for _ in range(20)]
    stop, waits = threading.Event(), []

    def hammer(url: str) -> None:
        while not stop.is_set():
            requests.get(url, timeout=600)

    threads = [threading.Thread(target=hammer, args=(u,)) for u in (diff, search) * 2]
    for thread in threads:
        thread.start()
    for _ in range(40):
        waits.append(timed_get(f"{base}/healthz"))
        time.sleep(0.05)
    stop.set()
    for thread in threads:
        thread.join()
    found["healthz_alone_p95_ms"] = round(1000 * statistics.quantiles(alone, n=20)[18])
    found["healthz_under_4_p95_ms"] = round(
        1000 * statistics.quantiles(waits, n=20)[18]
    )
    found["healthz_before"] = "27.7 s of waiting under four diff GETs"
    return found


def comparisons(base: str) -> dict:
    """Two runs of a 100-session file compared: how long the first request
    holds its web thread (it answers 202 "computing" after at most
    COMPARE_WAIT_S), when the stored comparison is ready, the next request,
    the compare page beside a dashboard view of one of the runs (medians of
    5), and ``/healthz`` while four clients compare without pause."""
    sessions = []
    for index in range(100):
        session = crafted.alignment_sessions()[index % 2]
        session["session_id"] = f"c{index}"
        sessions.append(session)
    data = "".join(json.dumps(s) + "\n" for s in sessions).encode()
    tokens = [post(base, data, suites="quality", name=n)["token"] for n in "ab"]
    for token in tokens:
        wait(base, token)
    url = f"{base}/api/v1/compare?runs={','.join(tokens)}"
    started = time.monotonic()
    first = requests.get(url, timeout=600)
    found: dict = {
        "first_answer": first.status_code,
        "first_held_s": round(time.monotonic() - started, 3),
    }
    while requests.get(url, timeout=600).status_code == 202:
        time.sleep(0.05)
    found["ready_s"] = round(time.monotonic() - started, 3)
    found["again_s"] = timed_get(url)
    page = f"{base}/compare?runs={','.join(tokens)}"
    compare_s = statistics.median(timed_get(page) for _ in range(5))
    dashboard_s = statistics.median(
        timed_get(f"{base}/r/{tokens[0]}") for _ in range(5)
    )
    found["compare_page_ms"] = round(1000 * compare_s, 1)
    found["dashboard_ms"] = round(1000 * dashboard_s, 1)
    found["page_vs_dashboard"] = round(compare_s / dashboard_s, 2)
    runs = ",".join(tokens)
    slowest = max(
        statistics.median(
            timed_get(f"{base}/compare/export.{kind}?runs={runs}") for _ in range(5)
        )
        for kind in ("csv", "json", "tex", "md")
    )
    found["slowest_export_vs_dashboard"] = round(slowest / dashboard_s, 2)
    stop, waits = threading.Event(), []

    def hammer() -> None:
        while not stop.is_set():
            requests.get(url, timeout=600)

    threads = [threading.Thread(target=hammer) for _ in range(4)]
    for thread in threads:
        thread.start()
    for _ in range(40):
        waits.append(timed_get(f"{base}/healthz"))
        time.sleep(0.05)
    stop.set()
    for thread in threads:
        thread.join()
    found["healthz_under_4_p95_ms"] = round(
        1000 * statistics.quantiles(waits, n=20)[18]
    )
    found["before"] = (
        "272 s for one /api/v1/compare of eight 600,000-row runs; "
        "1.33 s on a web thread for the first compare of these two"
    )
    return found


def budget(base: str, judge: ScriptedJudge) -> dict:
    before = judge.state.calls
    created = post(base, faulty("garbage"), suites="alignment")
    final = wait(base, created["token"])
    made = judge.state.calls - before
    retry = requests.post(
        f"{base}/api/v1/runs/{created['manage_token']}/retry", timeout=60
    )
    return {
        "cap": LIMIT,
        "calls": made,
        "status": final["status"],
        "retry_status": retry.status_code,
        "calls_after_retry": judge.state.calls - before,
        "before": "200 calls at a cap of 100; retries unchecked (1,400 calls)",
    }


def replies(base: str, pid: int) -> dict:
    created = post(base, faulty("huge", 1), suites="alignment")
    final = wait(base, created["token"])
    return {
        "status": final["status"],
        "unscored": final["counts"]["unscored"],
        "server_peak_rss_mb": _mb(pid, "VmHWM"),
        "before": "20 MB replies read and stored whole: worker 3.2 GB",
    }


def slow_judge(base: str, judge: ScriptedJudge) -> dict:
    slow = post(base, faulty("drip", 4), suites="alignment")
    time.sleep(DEADLINE_S + 2)
    started = time.perf_counter()
    requests.post(f"{base}/api/v1/runs/{slow['manage_token']}/cancel", timeout=60)
    before = judge.state.calls
    normal = post(base, faulty(""), suites="alignment")
    final = wait(base, normal["token"])
    return {
        "deadline_s": DEADLINE_S,
        "normal_run_status": final["status"],
        "normal_run_calls": judge.state.calls - before,
        "normal_run_s_after_cancel": round(time.perf_counter() - started, 1),
        "before": "0 calls in 181 s after the cancel",
    }


def cross_site(base: str) -> dict:
    files = {"file": ("x.jsonl", faulty("", 1))}
    answer = requests.post(
        f"{base}/api/v1/runs",
        files=files,
        timeout=60,
        headers={"Origin": "http://evil.example"},
    )
    return {"status": answer.status_code, "before": "202: a run created"}


def run() -> dict:
    with tempfile.TemporaryDirectory() as tmp, ScriptedJudge() as judge:
        judge.state.drip_s = 0.2
        process, base = start_server(
            Path(tmp),
            {
                "JUDGE_API_URL": judge.url,
                "JUDGE_MODEL": "scripted",
                "MAX_JUDGE_CALLS_PER_RUN": str(LIMIT),
                "JUDGE_DEADLINE_S": str(DEADLINE_S),
                "JUDGE_MAX_REPLY_BYTES": str(256 * 1024),
                "JUDGE_MAX_RETRIES": "0",
            },
        )
        try:
            requests.get(base + "/", timeout=30)
            result = {
                "name": "bounds drill: the red team's findings, bounded",
                "baseline_rss_mb": _mb(process.pid, "VmRSS"),
            }
            result["explore"] = explore_pages(base)
            result["compare"] = comparisons(base)
            result["budget"] = budget(base, judge)
            result["replies"] = replies(base, process.pid)
            result["slow_judge"] = slow_judge(base, judge)
            result["cross_site"] = cross_site(base)
            return result
        finally:
            process.terminate()
            process.wait(timeout=30)


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
    sys.exit(0)
