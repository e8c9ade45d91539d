"""Unfinished runs are resumed when the embedded worker starts
(pipeline/worker_process.begin) and once per broker lifetime in team mode
(pipeline/resume.py)."""

from __future__ import annotations

import pytest
import redis

from pipeline.resume import EPOCH_KEY, BrokerEpoch
from tests import services

RUN = {"file_name": "a.jsonl", "file_sha256": "0" * 64, "upload_id": "u",
       "methods": ["M"], "suites": ["quality"]}  # fmt: skip


class Counting:
    """A run service stand-in that counts resumes (tests only)."""

    def __init__(self, storage):
        self.storage, self.calls = storage, []

    def resume_unfinished(self, created_before=None, live_leases=False) -> int:
        assert live_leases  # team mode: other workers' leases may be alive
        found = self.storage.unfinished_runs(created_before)
        self.calls.append([run.id for run in found])
        return len(found)


def test_the_embedded_worker_starts_on_an_empty_queue_and_takes_back_its_work(
    app_factory, tmp_path
):
    """What was queued or on a worker that died is sent again, once: the
    queue is emptied, in-flight chunks go back to pending, then dispatch."""
    from pathlib import Path

    from pipeline import worker_process
    from pipeline.runs import RunRequest
    from tests import crafted

    app = app_factory(CHUNK_UNITS=10, RUN_INFLIGHT_CHUNKS=2)
    service, storage = app.extensions["runs"], app.extensions["storage"]
    service.start_worker = None  # no worker: the queue is only looked at
    path = crafted.write(tmp_path / "q.jsonl", crafted.alignment_sessions())
    with path.open("rb") as stream:
        run = service.create(stream, path.name, RunRequest(suites=["quality"]))
    claimed = storage.claim_chunks(per_run=2, per_client=100)  # then the worker died
    storage.start_chunk(run.id, claimed[0].chunk)
    folder = Path(app.config["QUEUE_FOLDER"])
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "1_stale.celery.msg").write_text("{}")  # its task, never consumed
    worker_process.begin(app)
    queued = sorted(p.name for p in folder.glob("*.msg"))
    assert "1_stale.celery.msg" not in queued and len(queued) == 2
    states = storage.chunk_states(run.id)
    assert states["sent"] == 2 and "running" not in states
    assert app.extensions["watchdog"]._thread.is_alive()
    app.extensions["watchdog"].stop()


def test_a_task_queued_while_the_worker_took_its_chunk_back_runs_once(
    app_factory, tmp_path
):
    """The CLI starts the worker and sends a run's chunks while the worker
    starts: its start takes them back and sends them again, so each chunk has
    two tasks queued. The first to come runs it, the other finds it done
    (found when every judge call of a first CLI run was made twice). Either
    may come first: a chunk sent again never waits behind its own copy."""
    from pipeline import dispatch, execution
    from pipeline.names import EVALUATE_CHUNK
    from pipeline.runs import RunRequest
    from tests import crafted

    app = app_factory(CHUNK_UNITS=1000)
    service, storage = app.extensions["runs"], app.extensions["storage"]
    path = crafted.write(tmp_path / "q.jsonl", crafted.alignment_sessions())
    with path.open("rb") as stream:
        run = service.create(stream, path.name, RunRequest(suites=["quality"]))
    sent: list[tuple] = []
    ctx = execution.Context(storage, app.config, lambda *task: sent.append(task))
    dispatch.dispatch(storage, app.config, ctx.send)  # the CLI's send
    storage.requeue_in_flight(run.id)  # the worker's start takes it back
    dispatch.dispatch(storage, app.config, ctx.send)  # and sends it again
    first, second = [task for task in sent if task[0] == EVALUATE_CHUNK]
    assert (first[2], first[3], second[3]) == (0, 1, 2)
    execution.evaluate_chunk(ctx, *first[1:3])  # the earlier send comes first
    assert storage.chunk_states(run.id) == {"done": 1}
    claims = _claims(storage, run.id)
    execution.evaluate_chunk(ctx, *second[1:3])
    assert _claims(storage, run.id) == claims == [1]  # not claimed again


def _claims(storage, run_id: str) -> list[int]:
    from sqlalchemy import select

    from store.models import RunChunk

    query = select(RunChunk.claims).where(RunChunk.run_id == run_id)
    with storage.engine.connect() as conn:
        return list(conn.scalars(query))


@pytest.mark.redis
def test_team_mode_resumes_once_per_broker_lifetime(sqlite_storage):
    services.require("Redis", "127.0.0.1", 6379)
    client = redis.Redis.from_url(services.REDIS_URL)
    client.delete(EPOCH_KEY)  # the broker lost its data (a restart without persistence)
    lost = sqlite_storage.create_run(**RUN)
    service = Counting(sqlite_storage)
    epoch = BrokerEpoch(service, services.REDIS_URL)
    assert epoch() == 1 and service.calls == [[lost.id]]
    sqlite_storage.create_run(**RUN)  # queued after the epoch: its task is in Redis
    assert epoch() is None and BrokerEpoch(service, services.REDIS_URL)() is None
    assert len(service.calls) == 1
    client.delete(EPOCH_KEY)
    client.close()


def test_web_processes_in_team_mode_check_the_broker_instead_of_resuming(app_factory):
    app = app_factory(REDIS_URL="redis://127.0.0.1:1/0")
    assert app.extensions["worker"] is None  # no worker of its own to start
    assert isinstance(app.extensions["runs"].broker_check, BrokerEpoch)
