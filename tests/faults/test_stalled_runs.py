"""A run whose worker is gone says so on its status and page, in both
deployments, and finishes once a worker is back (issue 57: a run sat
``running`` for hours with nothing said)."""

from __future__ import annotations

import os
import signal
import time

import pytest
from markupsafe import escape

from testing.judge_server import ScriptedJudge
from tests import crafted, workers
from tests.faults.test_hostile_judge import sessions
from tests.pipeline_support import Redis, submit, wait_for

STALL_S = 10.0  # RUN_STALL_S here: a loaded machine's pauses stay below it
BOUND_S = 180.0


@pytest.fixture
def deployment_env():
    # QUEUE_TIMEOUT_S: a chunk the killed worker marked sent but never put
    # on the broker is sent again after 10 s, not 300 (past BOUND_S)
    return {
        "RUN_STALL_S": str(STALL_S),
        "WATCHDOG_INTERVAL_S": "0.5",
        "JUDGE_CONCURRENCY": "4",
        "JUDGE_TIMEOUT_S": "30",
        "QUEUE_TIMEOUT_S": "10",
    }


def _status(app, token: str) -> dict:
    answer = app.test_client().get(f"/api/v1/runs/{token}")
    assert answer.status_code == 200, answer.data[:300]
    return answer.get_json()


def _worker_gone(deployment):
    """Kill team mode's worker (none is started in its place); freeze the
    embedded default's (its supervisor sees it alive). Returns the undo."""
    if isinstance(deployment, Redis):
        workers.kill(deployment.deployment.workers[-1])
        return deployment.deployment.start_worker
    pid = deployment.app.extensions["worker"].pid
    os.kill(pid, signal.SIGSTOP)
    return lambda: os.kill(pid, signal.SIGCONT)


def test_a_run_whose_worker_is_gone_says_so_then_finishes(deployment, tmp_path):
    app = deployment.app
    path = crafted.write(tmp_path / "gone.jsonl", sessions("g", "", 12))
    with ScriptedJudge(latency=0.05) as judge:
        run_id = submit(app, path, judge, suites=["alignment"])
        token = app.extensions["storage"].runs.get_run(run_id).token
        deadline = time.monotonic() + BOUND_S
        while judge.state.calls < 8:  # under way
            assert time.monotonic() < deadline, "the run never started"
            time.sleep(0.02)
        back = _worker_gone(deployment)
        try:
            while True:
                status = _status(app, token)
                stalled = status["progress"]["stalled"]
                # no_worker; or, once a sweep (the app's own, in the embedded
                # default) handed the frozen worker's chunk back, work_failing
                if stalled and stalled["cause"] in ("no_worker", "work_failing"):
                    break
                assert status["status"] == "running", status["status"]
                assert time.monotonic() < deadline, "the run sat silent"
                time.sleep(0.2)
            page = app.test_client().get(f"/r/{token}").get_data(as_text=True)
            assert escape(stalled["message"]) in page
        finally:
            back()
        document = wait_for(app, run_id, timeout=BOUND_S)
    assert document["run"]["status"] == "done"
    units = sum(1 for row in document["rows"] if row["metric"] in ("al", "binary"))
    # a killed worker's requests in flight may be paid again, no more
    assert judge.state.calls <= units + 4
