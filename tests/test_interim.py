"""Results before a run ends (pipeline/interim.py): provisional aggregates of
the sessions stored so far, shown on the run's page and in its status; and
a cancelled run keeps and shows what it evaluated.

Chunks are handed out here by hand (``send`` records them), so the run sits
between two chunks for as long as the test needs: no timing involved."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from core.status import RunStatus
from pipeline import execution, finalizer, interim
from pipeline.dispatch import dispatch
from pipeline.names import EVALUATE_CHUNK, FINALIZE_RUN
from pipeline.runs import RunRequest
from store.models import utcnow
from tests import crafted


def planned_run(app, tmp_path, sessions: int = 6):
    """A run of ``sessions`` sessions in chunks of one session, not sent."""
    app.test_client().get("/")  # the start-up resume, before the run exists
    rows = [
        {**crafted.alignment_sessions()[index % 2], "session_id": f"s{index}"}
        for index in range(sessions)
    ]
    path = crafted.write(tmp_path / "i.jsonl", rows)
    with path.open("rb") as stream:
        run = app.extensions["runs"].create(
            stream, path.name, RunRequest(suites=["quality"])
        )
    sent: list[tuple] = []
    ctx = execution.Context(
        app.extensions["storage"], app.config, lambda *task: sent.append(task)
    )
    dispatch(ctx.storage, ctx.config, ctx.send)
    return run, ctx, sent


def test_provisional_results_cover_the_sessions_stored_so_far(
    app_factory, tmp_path, monkeypatch
):
    monkeypatch.setattr(interim, "MAX_SHARE", float("inf"))  # after every chunk
    app = app_factory(CHUNK_UNITS=1, RUN_INFLIGHT_CHUNKS=100, INTERIM_EVERY_S=0)
    run, ctx, sent = planned_run(app, tmp_path)
    chunks = [task[2] for task in sent if task[0] == EVALUATE_CHUNK]
    assert len(chunks) == 6
    for chunk in chunks[:2]:
        execution.evaluate_chunk(ctx, run.id, chunk)
    stored = ctx.storage.runs.get_run(run.id)
    assert stored.status == RunStatus.RUNNING and stored.interim
    assert stored.interim["sessions_scored"] == 2
    assert set(stored.interim["summary"]) == set(run.methods)

    client = app.test_client()
    status = client.get(f"/api/v1/runs/{run.token}").get_json()
    assert status["provisional"]["sessions"] == 2
    assert status["provisional"]["of_sessions"] == 6
    page = client.get(f"/r/{run.token}?lang=en").get_data(as_text=True)
    assert 'data-testid="provisional"' in page and 'id="run-progress"' in page
    assert "cover the 2 of 6 sessions evaluated so far" in page
    assert 'data-testid="comparison-table"' in page and 'id="figures"' in page
    owner = client.get(f"/r/{run.manage_token}?lang=en").get_data(as_text=True)
    zone = owner.split('data-testid="cancel-zone"')[1].split("</details>")[0]
    assert 'data-testid="cancel-run"' in zone  # asked first: behind an opened box
    assert '<details class="danger-zone" data-testid="cancel-zone">' in owner

    for chunk in chunks[2:]:
        execution.evaluate_chunk(ctx, run.id, chunk)
    assert (FINALIZE_RUN, run.id) in sent
    finalizer.finalize(ctx.storage, run.id, ctx.config)
    final = client.get(f"/api/v1/runs/{run.token}").get_json()
    assert final["status"] == "done" and final["provisional"] is None


def test_a_cancelled_run_keeps_and_shows_what_it_evaluated(app_factory, tmp_path):
    app = app_factory(CHUNK_UNITS=1, RUN_INFLIGHT_CHUNKS=100)
    run, ctx, sent = planned_run(app, tmp_path)
    chunks = [task[2] for task in sent if task[0] == EVALUATE_CHUNK]
    for chunk in chunks[:3]:
        execution.evaluate_chunk(ctx, run.id, chunk)
    client = app.test_client()
    cancelled = client.post(f"/api/v1/runs/{run.manage_token}/cancel")
    assert cancelled.status_code in (200, 202), cancelled.get_json()
    execution.evaluate_chunk(ctx, run.id, chunks[3])  # sent before: stores nothing
    # the cancel woke the dispatcher: the app's worker summarizes the rows
    deadline = time.monotonic() + 600
    while not ctx.storage.runs.get_run(run.id).aggregates:
        assert time.monotonic() < deadline, "the cancelled run was never summarized"
        time.sleep(0.05)
    sent.clear()
    dispatch(ctx.storage, ctx.config, ctx.send)
    assert sent == []  # summarized once, however often dispatch runs
    stored = ctx.storage.runs.get_run(run.id)
    assert stored.status == RunStatus.CANCELLED
    assert stored.aggregates["sessions_scored"] == 3
    page = client.get(f"/r/{run.token}?lang=en").get_data(as_text=True)
    assert "cover the 3 of 6 sessions evaluated before the cancel" in page
    assert 'data-testid="comparison-table"' in page


def test_a_cancelled_run_not_yet_summarized_says_so_and_reloads(app_factory, tmp_path):
    app = app_factory(CHUNK_UNITS=1, RUN_INFLIGHT_CHUNKS=100)
    run, ctx, _sent = planned_run(app, tmp_path)
    # cancelled and claimed by a worker that has not finished yet
    ctx.storage.runs.set_status(run.id, RunStatus.CANCELLED, interim_at=utcnow())
    page = app.test_client().get(f"/r/{run.token}?lang=en").get_data(as_text=True)
    assert 'data-testid="cancelled-pending"' in page
    assert 'http-equiv="refresh"' in page
    sent: list[tuple] = []
    dispatch(ctx.storage, ctx.config, lambda *task: sent.append(task))
    assert (FINALIZE_RUN, run.id) not in sent  # claimed already


def test_slow_provisional_aggregates_come_less_often(app_factory, tmp_path):
    """An aggregation that took 2 s waits 10 s (a fifth of a worker's time)
    before the next, whatever INTERIM_EVERY_S says."""
    app = app_factory(CHUNK_UNITS=1, RUN_INFLIGHT_CHUNKS=100, INTERIM_EVERY_S=0)
    run, ctx, sent = planned_run(app, tmp_path)
    chunks = [task[2] for task in sent if task[0] == EVALUATE_CHUNK]
    execution.evaluate_chunk(ctx, run.id, chunks[0])
    first = ctx.storage.runs.get_run(run.id)
    assert first.interim["sessions_scored"] == 1
    ctx.storage.runs.update_run(run.id, interim={**first.interim, "computed_in_s": 2.0})
    execution.evaluate_chunk(ctx, run.id, chunks[1])
    assert ctx.storage.runs.get_run(run.id).interim["sessions_scored"] == 1  # not yet


def test_summarizing_is_a_stage_with_its_own_progress(app_factory, tmp_path):
    app = app_factory(CHUNK_UNITS=1, RUN_INFLIGHT_CHUNKS=100, INTERIM_EVERY_S=3600)
    run, ctx, sent = planned_run(app, tmp_path, sessions=2)
    for task in [task for task in sent if task[0] == EVALUATE_CHUNK]:
        execution.evaluate_chunk(ctx, run.id, task[2])
    client = app.test_client()
    polled = []
    write = ctx.storage.runs.update_run

    def write_then_poll(run_id, **fields):
        write(run_id, **fields)
        polled.append(client.get(f"/api/v1/runs/{run.token}").get_json())

    before = client.get(f"/api/v1/runs/{run.token}").get_json()
    ctx.storage.runs.update_run = write_then_poll
    finalizer.finalize(ctx.storage, run.id, ctx.config)
    steps = [p["progress"] for p in polled if p["status"] == "running"]
    # quality: one suite, then the comparisons
    shown = [s["stage_progress"] for s in steps]
    assert [step for at, step in enumerate(shown) if step not in shown[:at]] == [
        {"done": 1, "total": 2}, {"done": 2, "total": 2},
    ]  # fmt: skip
    assert {s["stage"] for s in steps} == {"summarizing"}
    # the steps are written beside the provisional results, which stay
    assert all(p["provisional"] == before["provisional"] for p in polled[:-1])


def test_a_worker_loads_what_aggregating_needs_once_it_consumes():
    """``interim.preload`` (run when a worker is ready, app.py) loads the
    aggregation's modules beside the worker's first tasks, so the worker's
    first aggregation does not wait for them."""
    code = (
        "import sys; from pipeline import interim; interim.preload().join(); "
        "print(all(name in sys.modules for name in interim.AGGREGATION_MODULES))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
        cwd=Path(__file__).resolve().parents[1],
    )  # fmt: skip
    assert done.stdout.split() == ["True"], done.stderr
