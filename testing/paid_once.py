"""The paid-once drill (issue 46), shared by ``tests/pipeline/test_paid_once.py`` and
``bench/paid_once_drill.py`` (which runs it in both modes beside four busy
CPU loops): a worker stopped with SIGSTOP past its chunk lease, then
SIGCONT; another killed with kill -9. Each disturbed run is compared with an undisturbed run of the
same file (``use_cache`` off, so each run asks the judge afresh).

Figures per mode and drill: the judge's requests against the run's
distinct requests, the requests made twice, the wall time against the
undisturbed run's, and whether every row's value equals the undisturbed
run's. A stopped worker must pay nothing twice (its calls' claims outlive
its lease: ``store/call_claims.py``). A killed worker's requests in flight
are the only ones paid again: their replies died with it, though the
provider answered (and billed) them. A call holds its judge slot until its
verdict is in the cache, so that is at most ``JUDGE_CONCURRENCY``.

The embedded default has one worker: stopped, nobody takes its chunks
(its own sweep never expires its own leases), so the drill shows it goes
on without paying again; killed, its supervisor starts another. Team mode
runs two Celery workers on Redis and PostgreSQL: the other one takes the
stopped one's chunks once their lease expired, and awaits its calls.
"""

from __future__ import annotations

import os
import signal
import time
from collections import Counter
from pathlib import Path

from testing.judge_server import ScriptedJudge
from tests import crafted

SESSIONS, ROUNDS = 100, 5  # x 2 methods = 1,000 units = 2,000 requests
LATENCY = 0.05
LEASE_S, STOP_S = 5.0, 12.0  # stopped more than twice its lease
# A killed Celery worker's prefetched tasks come back when the queue's
# timeout sends them again (QUEUE_TIMEOUT_S; Redis itself redelivers after
# its visibility timeout, an hour by default).
SETTINGS = {
    "CHUNK_UNITS": 20,
    "JUDGE_CONCURRENCY": 4,
    "JUDGE_TIMEOUT_S": 30.0,
    "JUDGE_MAX_RETRIES": 1,
    "CHUNK_STALL_S": LEASE_S,
    "WATCHDOG_INTERVAL_S": 1.0,
    "QUEUE_TIMEOUT_S": 10.0,
}


def sessions(count: int = SESSIONS) -> list[dict]:
    values = [50, 60, 70, 80, 90]
    return [
        crafted.session(
            f"p{index:03d}",
            {
                "Base": [f"{index} b{k}" for k in range(ROUNDS)],  # hash-derived scores
                "Ours": [
                    f"{index} {t}" for t in crafted.scores(values, [1, 0, 1, 1, 0])
                ],
            },
        )
        for index in range(count)
    ]


def wait_for_progress(storage, run_id: str, fraction: float, timeout=600.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = storage.runs.get_run(run_id)
        if run.total and run.done >= fraction * run.total:
            return
        time.sleep(0.05)
    raise AssertionError(f"run {run_id} made no progress to {fraction:.0%}")


def stop_past_lease(workers, storage, run_id: str) -> None:
    """SIGSTOP the first worker at a quarter of the run, SIGCONT after STOP_S."""
    wait_for_progress(storage, run_id, 0.25)
    pid = workers.pid(0)
    os.kill(pid, signal.SIGSTOP)
    time.sleep(STOP_S)
    os.kill(pid, signal.SIGCONT)


def kill_one(workers, storage, run_id: str) -> None:
    """kill -9 the last worker at half of the run (a new one starts)."""
    wait_for_progress(storage, run_id, 0.5)
    workers.kill(-1)


def one_run(workers, judge: ScriptedJudge, path: Path, disturb=None) -> dict:
    """A run of ``path`` (disturbed by ``disturb(workers, storage, run_id)``):
    its status, requests, distinct requests, requests made twice, seconds
    and row values."""
    from tests.pipeline_support import submit, wait_for

    app = workers.app
    before, calls = Counter(judge.state.attempts), judge.state.calls
    started = time.monotonic()
    run_id = submit(app, path, judge, suites=["alignment"], use_cache=False)
    if disturb is not None:
        disturb(workers, app.extensions["storage"], run_id)
    document = wait_for(app, run_id, timeout=1800)
    seen = judge.state.attempts - before
    return {
        "status": document["run"]["status"],
        "requests": judge.state.calls - calls,
        "distinct": len(seen),
        "paid_twice": sum(n - 1 for n in seen.values()),
        "seconds": round(time.monotonic() - started, 2),
        "values": {
            (r["session_id"], r["round"], r["method"], r["metric"]): r["value"]
            for r in document["rows"]
        },
    }


def drill(workers, judge: ScriptedJudge, path: Path) -> dict:
    """The undisturbed run, then the stopped and the killed drills."""
    undisturbed = one_run(workers, judge, path)
    result = {"undisturbed": _figures(undisturbed, undisturbed)}
    for name, disturb in (("sigstop", stop_past_lease), ("kill9", kill_one)):
        result[name] = _figures(one_run(workers, judge, path, disturb), undisturbed)
    return result


def _figures(run: dict, undisturbed: dict) -> dict:
    return {
        **{k: run[k] for k in ("status", "requests", "distinct", "paid_twice")},
        "seconds": run["seconds"],
        "vs_undisturbed": round(run["seconds"] / undisturbed["seconds"], 2),
        "rows_identical": run["values"] == undisturbed["values"],
    }
