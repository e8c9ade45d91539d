"""Recovery is one path, the sweep of void leases (pipeline/worker/execution.sweep):
the embedded worker's first sweep, as the only worker of its database, takes
back every chunk in flight at once; a team's web process checks the broker
before it records a run."""

from __future__ import annotations


def test_the_embedded_worker_takes_back_its_work_when_it_starts(app_factory, tmp_path):
    """What was queued or on a worker that died is sent again at once: a
    chunk running under a lease another (dead) worker renewed a moment ago
    too, since no other worker of the database can be alive. A message the
    dead worker left in the queue stays: its task finds the chunk taken."""
    from pathlib import Path

    from pipeline.service.runs import RunRequest
    from pipeline.worker import worker_process
    from tests import crafted

    app = app_factory(CHUNK_UNITS=10, RUN_INFLIGHT_CHUNKS=2)
    service, storage = app.extensions["runs"], app.extensions["storage"]
    service.start_worker = None  # no worker: the queue is only looked at
    path = crafted.write(tmp_path / "q.jsonl", crafted.alignment_sessions())
    with path.open("rb") as stream:
        run = service.create(stream, path.name, RunRequest(suites=["quality"]))
    claimed = storage.chunks.claim_chunks(
        per_run=2, per_client=100
    )  # then the worker died
    storage.chunks.start_chunk(run.id, claimed[0].chunk, "elsewhere:1:gone")
    folder = Path(app.config["QUEUE_FOLDER"])
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "1_stale.celery.msg").write_text("{}")  # its task, never consumed
    worker_process.begin(app)
    queued = sorted(p.name for p in folder.glob("*.msg"))
    assert "1_stale.celery.msg" in queued and len(queued) == 3
    states = storage.chunks.chunk_states(run.id)
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
    from pipeline import dispatch
    from pipeline.names import EVALUATE_CHUNK
    from pipeline.service.runs import RunRequest
    from pipeline.worker import execution
    from tests import crafted

    app = app_factory(CHUNK_UNITS=1000)
    service, storage = app.extensions["runs"], app.extensions["storage"]
    path = crafted.write(tmp_path / "q.jsonl", crafted.alignment_sessions())
    with path.open("rb") as stream:
        run = service.create(stream, path.name, RunRequest(suites=["quality"]))
    sent: list[tuple] = []
    ctx = execution.Context(storage, app.config, lambda *task: sent.append(task))
    dispatch.dispatch(storage, app.config, ctx.send)  # the CLI's send
    execution.sweep(ctx, sole=True)  # the worker's start takes it back, sends it
    first, second = [task for task in sent if task[0] == EVALUATE_CHUNK]
    assert (first[2], first[3], second[3]) == (0, 1, 2)
    execution.evaluate_chunk(ctx, *first[1:3])  # the earlier send comes first
    assert storage.chunks.chunk_states(run.id) == {"done": 1}
    claims = _claims(storage, run.id)
    execution.evaluate_chunk(ctx, *second[1:3])
    assert _claims(storage, run.id) == claims == [1]  # not claimed again


def _claims(storage, run_id: str) -> list[int]:
    from sqlalchemy import select

    from store.models import RunChunk

    query = select(RunChunk.claims).where(RunChunk.run_id == run_id)
    with storage.engine.connect() as conn:
        return list(conn.scalars(query))


def test_web_processes_in_team_mode_check_the_broker_before_recording_a_run(
    app_factory, tmp_path
):
    from tests import crafted

    app = app_factory(REDIS_URL="redis://127.0.0.1:1/0")  # nothing listens there
    assert app.extensions["worker"] is None  # no worker of its own to start
    path = crafted.write(tmp_path / "q.jsonl", crafted.alignment_sessions())
    reply = app.test_client().post(
        "/api/v1/runs", data={"file": (path.open("rb"), "q.jsonl")}
    )
    assert reply.status_code == 503, reply.get_json()
    assert reply.get_json()["errors"][0]["code"] == "queue_unavailable"
    assert app.extensions["storage"].runs.unfinished_runs() == []  # none recorded
