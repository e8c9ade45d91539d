"""A slow judge beside a fast one (issue 46's red-team drill): a 40-unit
run on a judge answering in 30 s holds that judge's slots; a 40-unit run
on an instant judge is then submitted. Before judge slots were held per
endpoint and model the fast run took 298 s against 1.6 s alone; the aim
is at most 2x its time alone. Embedded default (one worker process of
``EMBEDDED_WORKER_THREADS`` task threads), ``JUDGE_CONCURRENCY`` 8,
chunks of 40 units.

A second figure shows where the share still ends: a slow run of
``BIG_SLOW_UNITS`` units has as many chunks running as the worker has task
threads, each waiting on its slow calls, and a fast run's chunk waits for a
thread (reported, not a pass/fail).
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from bench.judge_server import ScriptedJudge
from tests import crafted

SLOW_S = 30.0
UNITS = 40  # 4 sessions x 5 rounds x 2 methods
BIG_SLOW_UNITS = 400
ALONE_ROUNDS = 3


def _file(workdir: Path, name: str, sessions: int) -> Path:
    values = [50, 60, 70, 80, 90]
    return crafted.write(workdir / f"{name}.jsonl", [
        crafted.session(f"{name}{index:03d}", {
            "Base": [f"{name}{index} b{k}" for k in range(5)],
            "Ours": [f"{name}{index} {t}" for t in crafted.scores(values, [1] * 5)]})
        for index in range(sessions)
    ])  # fmt: skip


def _app(workdir: Path):
    from tests.pipeline_support import GENEROUS_RATE_LIMITS
    from tests.worker_support import create_test_app

    return create_test_app({
        "TESTING": True, "SECRET_KEY": "bench", "REDIS_URL": None,
        "INSTANCE_PATH": str(workdir / "instance"),
        "UPLOAD_FOLDER": str(workdir / "uploads"),
        "RESULTS_FOLDER": str(workdir / "results"),
        "DATABASE_URL": f"sqlite:///{workdir / 'db.sqlite3'}",
        "EMBEDDED_WORKER": "process", "JUDGE_TIMEOUT_S": 2 * SLOW_S,
        "JUDGE_CONCURRENCY": 8, "CHUNK_UNITS": UNITS, **GENEROUS_RATE_LIMITS,
    })  # fmt: skip


def _timed(app, path: Path, judge: ScriptedJudge) -> tuple[float, str]:
    from tests.pipeline_support import submit, wait_for

    started = time.monotonic()
    run_id = submit(app, path, judge, suites=["alignment"], use_cache=False)
    status = wait_for(app, run_id, timeout=1800)["run"]["status"]
    return time.monotonic() - started, status


def _beside_slow(app, fast_path, slow_path, fast, slow) -> dict:
    """The fast run's time while a slow run holds its judge's slots."""
    from tests.pipeline_support import submit

    service, storage = app.extensions["runs"], app.extensions["storage"]
    slow_run = submit(app, slow_path, slow, suites=["alignment"], use_cache=False)
    while slow.state.in_flight < 8:  # the slow judge's slots are full
        time.sleep(0.05)
    seconds, status = _timed(app, fast_path, fast)
    slow_replies = slow.state.calls
    service.cancel(storage.get_run(slow_run))
    return {"seconds": round(seconds, 2), "status": status,
            "slow_replies_meanwhile": slow_replies}  # fmt: skip


def run() -> dict:
    from tests.worker_support import stop_worker

    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        fast_path = _file(workdir, "f", UNITS // 10)
        small_slow = _file(workdir, "s", UNITS // 10)
        big_slow = _file(workdir, "b", BIG_SLOW_UNITS // 10)
        app = _app(workdir)
        try:
            with ScriptedJudge() as fast:
                _timed(app, fast_path, fast)  # the worker warm
                alone = [_timed(app, fast_path, fast)[0] for _ in range(ALONE_ROUNDS)]
                median = statistics.median(alone)
                with ScriptedJudge(latency=SLOW_S) as slow:
                    small = _beside_slow(app, fast_path, small_slow, fast, slow)
                with ScriptedJudge(latency=SLOW_S) as slow:
                    big = _beside_slow(app, fast_path, big_slow, fast, slow)
        finally:
            stop_worker(app)
    return {
        "fast_alone_s": round(median, 2),
        "beside_40_unit_slow_run": {**small, "ratio": round(small["seconds"] / median, 2)},
        f"beside_{BIG_SLOW_UNITS}_unit_slow_run": {
            **big, "ratio": round(big["seconds"] / median, 2)},
    }  # fmt: skip


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=1))
