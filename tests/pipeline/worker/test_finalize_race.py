"""Finalize exactly once, end to end on Redis + PostgreSQL (issue 32): two
Celery worker processes, the watchdog sweeping every 0.1 s (each sweep asks
to finalize every run whose chunks are all stored), and three more finalize
requests sent the moment the test sees a run's chunks all stored. The
workers count what each request did (``personasteer_finalize_requests``,
shared through prometheus_client's multi-process files): every run is
aggregated once, every other request finds the claim taken or the run
ended."""

from __future__ import annotations

import time

import pytest

from core.status import ChunkState
from pipeline.names import FINALIZE_RUN
from tests import crafted
from tests.pipeline_support import submit

pytestmark = [pytest.mark.redis, pytest.mark.postgres, pytest.mark.timeout(1500)]
RUNS = 6
EXTRA_REQUESTS = 3  # per run, beside the last chunk's and the watchdog's
# 8 chunks a run (4 units a session, 8 a chunk), 48 in all for the two
# workers; the race is at each run's end, so 40 sessions (20 chunks a run)
# raced it the same way in more time
SESSIONS = 16


@pytest.fixture
def deployment_env(tmp_path):
    folder = tmp_path / "metrics"
    folder.mkdir()
    return {
        "WATCHDOG_INTERVAL_S": "0.1",
        "PROMETHEUS_MULTIPROC_DIR": str(folder),
        "CHUNK_UNITS": "8",
    }


def finalize_requests(folder) -> dict[str, int]:
    """The workers' counts, by outcome."""
    from prometheus_client import CollectorRegistry
    from prometheus_client.multiprocess import MultiProcessCollector

    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=str(folder))
    return {
        sample.labels["outcome"]: int(sample.value)
        for metric in registry.collect()
        if metric.name == "personasteer_finalize_requests"
        for sample in metric.samples
        if sample.name.endswith("_total")
    }


def _stored(storage, run_id: str) -> bool:
    states = storage.chunks.chunk_states(run_id)
    ended = (ChunkState.DONE, ChunkState.FAILED)
    return bool(states) and all(state in ended for state in states)


def _race(app, runs: list[str]) -> None:
    """Until every run ended: three finalize requests for each as soon as
    its chunks are all stored (while it aggregates, or after)."""
    storage, send = app.extensions["storage"], app.extensions["queue"].send
    raced: set[str] = set()
    while len(raced) < len(runs) or any(
        storage.runs.get_run(run_id).status in ("queued", "running") for run_id in runs
    ):
        for run_id in set(runs) - raced:
            if _stored(storage, run_id):
                for _ in range(EXTRA_REQUESTS):
                    send(FINALIZE_RUN, run_id)
                raced.add(run_id)
        # prompt while a run is still to race; then only its end is awaited
        time.sleep(0.02 if len(raced) < len(runs) else 0.2)


def test_two_workers_and_the_watchdog_aggregate_each_run_once(
    redis_deployment, deployment_env, tmp_path
):
    redis_deployment.start_worker()  # a second worker process
    app = redis_deployment.app
    sessions = [
        crafted.session(f"s{n}", {"A": ["one", "two"], "B": ["three", "four"]})
        for n in range(SESSIONS)
    ]
    path = crafted.write(tmp_path / "race.jsonl", sessions)
    runs = [
        submit(app, path, None, suites=["quality"], use_cache=False)
        for _ in range(RUNS)
    ]
    _race(app, runs)
    storage = app.extensions["storage"]
    assert {storage.runs.get_run(run_id).status for run_id in runs} == {"done"}
    folder = deployment_env["PROMETHEUS_MULTIPROC_DIR"]
    counts = finalize_requests(folder)
    while sum(counts.values()) < RUNS * (1 + EXTRA_REQUESTS):  # the extras land
        time.sleep(0.05)
        counts = finalize_requests(folder)
    assert counts["aggregated"] == RUNS, counts
    assert counts.get("claimed", 0) + counts.get("ended", 0) >= RUNS * EXTRA_REQUESTS
