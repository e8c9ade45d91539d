"""Paid once through a stopped and a killed worker, in both modes (the
drill of ``testing/paid_once.py``, which ``bench/paid_once_drill.py`` runs
at 100 sessions beside four busy CPU loops): a worker stopped with SIGSTOP
past its lease pays no request twice; a killed one's requests in flight are
the only ones asked again; every row equals an undisturbed run's."""

from __future__ import annotations

import pytest

from testing import paid_once
from testing.judge_server import ScriptedJudge
from tests import crafted

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500)]
SESSIONS = 12  # 120 units, 240 requests a run


@pytest.fixture
def deployment_env():
    return {name: str(value) for name, value in paid_once.SETTINGS.items()}


class FixtureWorkers:
    """The drill's view of the tests' two deployments (``deployment``)."""

    def __init__(self, deployment):
        self.deployment, self.app = deployment, deployment.app
        if hasattr(deployment, "deployment"):  # team mode: a second worker
            deployment.deployment.start_worker()

    def pid(self, index: int) -> int:
        if hasattr(self.deployment, "deployment"):
            return self.deployment.deployment.workers[index].pid
        return self.app.extensions["worker"].pid

    def kill(self, _index: int) -> None:
        self.deployment.kill_worker()  # the last one; another starts


def test_a_stopped_worker_pays_nothing_twice_and_a_killed_one_only_its_calls_in_flight(
    deployment, tmp_path
):
    path = crafted.write(tmp_path / "p.jsonl", paid_once.sessions(SESSIONS))
    with ScriptedJudge(latency=paid_once.LATENCY) as judge:
        found = paid_once.drill(FixtureWorkers(deployment), judge, path)
    units = SESSIONS * paid_once.ROUNDS * 2
    for name in ("undisturbed", "sigstop", "kill9"):
        assert found[name]["status"] == "done", (name, found)
        assert found[name]["distinct"] == 2 * units, (name, found)
        assert found[name]["rows_identical"], (name, found)
    assert found["undisturbed"]["paid_twice"] == 0
    assert found["sigstop"]["paid_twice"] == 0, found
    # asked again: only the calls in flight at the kill (a call holds its
    # slot until its verdict is in the cache)
    concurrency = paid_once.SETTINGS["JUDGE_CONCURRENCY"]
    assert found["kill9"]["paid_twice"] <= concurrency, found
