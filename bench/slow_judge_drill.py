"""A slow judge beside a fast one (issue 46's red-team drill): a 40-unit
run on a judge answering in 30 s holds that judge's slots; a 40-unit run
on an instant judge is then submitted. Before judge slots were held per
endpoint and model the fast run took 298 s against 1.6 s alone; the aim
is at most 2x its time alone. Embedded default (one worker process of
``EMBEDDED_WORKER_THREADS`` task threads), ``JUDGE_CONCURRENCY`` 8,
chunks of 40 units.

A second figure is the share of task threads: a slow run of
``BIG_SLOW_UNITS`` units has ``RUN_INFLIGHT_CHUNKS`` (8) chunks running at
once, each holding a task thread while it waits on its slow calls; with 4
threads (the earlier default) a fast run's chunk waited behind them, with
``EMBEDDED_WORKER_THREADS`` above the in-flight caps it finds a free one.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from testing.judge_server import ScriptedJudge
from tests import crafted

SLOW_S = 30.0
UNITS = 40  # 4 sessions x 5 rounds x 2 methods
BIG_SLOW_UNITS = 400
ALONE_ROUNDS = 3


def _file(workdir: Path, name: str, sessions: int) -> Path:
    values = [50, 60, 70, 80, 90]
    return crafted.write(
        workdir / f"{name}.jsonl",
        [
            crafted.session(
                f"{name}{index:03d}",
                {
                    "Base": [f"{name}{index} b{k}" for k in range(5)],
                    "Ours": [
                        f"{name}{index} {t}" for t in crafted.scores(values, [1] * 5)
                    ],
                },
            )
            for index in range(sessions)
        ],
    )


def _app(workdir: Path, **settings):
    from tests.pipeline_support import GENEROUS_RATE_LIMITS
    from tests.worker_support import create_test_app

    workdir.mkdir(parents=True, exist_ok=True)
    return create_test_app(
        {
            "TESTING": True,
            "SECRET_KEY": "bench",
            "REDIS_URL": None,
            "INSTANCE_PATH": str(workdir / "instance"),
            "UPLOAD_FOLDER": str(workdir / "uploads"),
            "RESULTS_FOLDER": str(workdir / "results"),
            "DATABASE_URL": f"sqlite:///{workdir / 'db.sqlite3'}",
            "EMBEDDED_WORKER": "process",
            "JUDGE_TIMEOUT_S": 2 * SLOW_S,
            "JUDGE_CONCURRENCY": 8,
            "CHUNK_UNITS": UNITS,
            **GENEROUS_RATE_LIMITS,
            **settings,
        }
    )


def _timed(app, path: Path, judge: ScriptedJudge, limit_s=1800.0):
    """Seconds to the run's end and its status (None: not ended by
    ``limit_s``)."""
    from tests.pipeline_support import submit, wait_for

    started = time.monotonic()
    run_id = submit(app, path, judge, suites=["alignment"], use_cache=False)
    try:
        status = wait_for(app, run_id, timeout=limit_s)["run"]["status"]
    except AssertionError:  # still running at the limit
        return None, app.extensions["storage"].runs.get_run(run_id).status
    return time.monotonic() - started, status


def _beside_slow(app, fast_path, slow_path, fast, limit_s=1800.0) -> dict:
    """The fast run's time while a slow run holds its judge's slots."""
    from tests.pipeline_support import submit

    service, storage = app.extensions["runs"], app.extensions["storage"]
    with ScriptedJudge(latency=SLOW_S) as slow:
        slow_run = submit(app, slow_path, slow, suites=["alignment"], use_cache=False)
        while slow.state.in_flight < 8:  # the slow judge's slots are full
            time.sleep(0.05)
        seconds, status = _timed(app, fast_path, fast, limit_s)
        slow_replies = slow.state.calls
        service.cancel(storage.runs.get_run(slow_run))
    return {
        "seconds": None if seconds is None else round(seconds, 2),
        "status": status,
        "slow_replies_meanwhile": slow_replies,
    }


def _ratio(found: dict, alone: float) -> dict:
    seconds = found["seconds"]
    return {**found, "ratio": None if seconds is None else round(seconds / alone, 2)}


def run() -> dict:
    from tests.worker_support import stop_worker

    found = {}
    with tempfile.TemporaryDirectory() as tmp, ScriptedJudge() as fast:
        workdir = Path(tmp)
        fast_path = _file(workdir, "f", UNITS // 10)
        small_slow = _file(workdir, "s", UNITS // 10)
        big_slow = _file(workdir, "b", BIG_SLOW_UNITS // 10)
        app = _app(workdir / "default")
        try:
            _timed(app, fast_path, fast)  # the worker warm
            alone = statistics.median(
                _timed(app, fast_path, fast)[0] for _ in range(ALONE_ROUNDS)
            )
            found["fast_alone_s"] = round(alone, 2)
            small = _beside_slow(app, fast_path, small_slow, fast)
            found["beside_40_unit_slow_run"] = _ratio(small, alone)
            big = _beside_slow(app, fast_path, big_slow, fast)
            found[f"beside_{BIG_SLOW_UNITS}_unit_slow_run"] = _ratio(big, alone)
        finally:
            stop_worker(app)
        app = _app(workdir / "four", EMBEDDED_WORKER_THREADS=4)
        try:
            _timed(app, fast_path, fast)
            big = _beside_slow(app, fast_path, big_slow, fast, limit_s=120.0)
            found[f"beside_{BIG_SLOW_UNITS}_unit_slow_run_4_threads"] = _ratio(
                big, alone
            )
        finally:
            stop_worker(app)
    return found


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=1))
