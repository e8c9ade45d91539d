"""Killing the worker process mid-run, in both modes (a Celery worker on
Redis; the embedded default's supervised Celery worker on the local broker):
a new worker completes the run and every row exists exactly once
(at-least-once delivery + upserts)."""

from __future__ import annotations

import time

import pytest

from testing.judge_server import ScriptedJudge
from tests import crafted
from tests.pipeline_support import submit, wait_for

# The embedded worker runs at nice 10: beside busy processes it gets a small
# share of the CPU, so these drills get a ceiling above the suite's 300 s.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500)]
SESSIONS = 12
ROUNDS = 5
DRILL_SESSIONS = 40
KILLS = 2  # the second kills the worker started after the first


@pytest.fixture
def deployment_env():
    # Small chunks so the kill lands between many tasks; redelivery after 5 s.
    # No call here is meant to time out: a generous read timeout, so a
    # machine starved of CPU cannot turn a 50 ms reply into an error row
    # (a run of -n 4 beside other work ended "partial" once with 0.5 s).
    # A killed worker's chunks are taken back once their lease expires
    # (10 s; the sweep every second), not when the broker redelivers them.
    # A chunk its killed sender marked sent but never put on the broker is
    # sent again after QUEUE_TIMEOUT_S: 10 s here, not 300 (an idle run of
    # the Redis drill waited five minutes for it).
    return {
        "CHUNK_UNITS": "10",
        "JUDGE_CONCURRENCY": "4",
        "JUDGE_TIMEOUT_S": "30",
        "CHUNK_STALL_S": "10",
        "WATCHDOG_INTERVAL_S": "1",
        "QUEUE_TIMEOUT_S": "10",
    }


def sessions() -> list[dict]:
    values = [50, 60, 70, 80, 90]
    return [
        crafted.session(
            f"s{index:02d}",
            {
                "Base": crafted.scores([40] * ROUNDS, [0] * ROUNDS),
                "Ours": [
                    f"{index} {text}" for text in crafted.scores(values, [1] * ROUNDS)
                ],
            },
        )
        for index in range(SESSIONS)
    ]


def wait_for_progress(storage, run_id, fraction, timeout=600.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = storage.runs.get_run(run_id)
        if run.total and run.done >= fraction * run.total:
            return run
        time.sleep(0.05)
    raise AssertionError("no progress before the kill")


def test_killed_worker_run_completes_with_every_row_once(deployment, tmp_path):
    app = deployment.app
    storage = app.extensions["storage"]
    path = crafted.write(tmp_path / "crash.jsonl", sessions())
    with ScriptedJudge(latency=0.05) as judge:
        run_id = submit(app, path, judge, suites=["alignment"])
        before = wait_for_progress(storage, run_id, 0.25)
        deployment.kill_worker()
        assert storage.runs.get_run(run_id).status == "running"
        assert before.done < before.total
        document = wait_for(app, run_id, timeout=600)
    assert document["run"]["status"] == "done"
    keys = [
        (r["session_id"], r["round"], r["method"], r["metric"])
        for r in document["rows"]
    ]
    # al, its five dimensions, binary and the response's length
    assert len(keys) == len(set(keys)) == SESSIONS * ROUNDS * 2 * 8
    run = storage.runs.get_run(run_id)
    assert run.done == run.total == SESSIONS * ROUNDS * 2
    ours = document["summary"]["Ours"]
    assert (ours["al_avg"], ours["al_slope"], ours["binary_rate"]) == (70.0, 10.0, 1.0)


def drill_sessions() -> list[dict]:
    """40 sessions x 5 rounds x 2 methods = 400 units = 800 judge calls: 40
    chunks, so each kill lands among many chunks yet to do."""
    values = [50, 60, 70, 80, 90]
    return [
        crafted.session(
            f"d{index:03d}",
            {
                "Base": [f"{index} b{k}" for k in range(ROUNDS)],  # hash-derived scores
                "Ours": [
                    f"{index} {t}" for t in crafted.scores(values, [1, 0, 1, 1, 0])
                ],
            },
        )
        for index in range(DRILL_SESSIONS)
    ]


def test_kills_at_random_points_give_the_undisturbed_results(deployment, tmp_path):
    import random

    app = deployment.app
    storage = app.extensions["storage"]
    path = crafted.write(tmp_path / "drill.jsonl", drill_sessions())
    rng = random.Random(20261121)
    with ScriptedJudge(latency=0.02) as judge:
        undisturbed = wait_for(
            app,
            submit(app, path, judge, suites=["alignment"], use_cache=False),
            timeout=600,
        )
        run_id = submit(app, path, judge, suites=["alignment"], use_cache=False)
        for kill in range(KILLS):  # one in each third of the run but the last
            wait_for_progress(
                storage, run_id, (kill + rng.random()) / (KILLS + 1), timeout=300
            )
            deployment.kill_worker()
        document = wait_for(app, run_id, timeout=600)
    assert document["run"]["status"] == "done"
    keys = [
        (r["session_id"], r["round"], r["method"], r["metric"])
        for r in document["rows"]
    ]
    assert len(keys) == len(set(keys)) == DRILL_SESSIONS * ROUNDS * 2 * 8
    assert document["summary"] == undisturbed["summary"]
    assert document["curves"] == undisturbed["curves"]
    values = {
        (r["session_id"], r["round"], r["method"], r["metric"]): r["value"]
        for r in document["rows"]
    }
    assert values == {
        (r["session_id"], r["round"], r["method"], r["metric"]): r["value"]
        for r in undisturbed["rows"]
    }
