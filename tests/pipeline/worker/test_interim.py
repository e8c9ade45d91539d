"""Results before a run ends (pipeline/worker/interim.py): provisional aggregates of
the sessions stored so far, shown on the run's page and in its status; and
a cancelled run keeps and shows what it evaluated. The claim on a piece of
interim work and its stored result are ``store/interim.py``'s.

Chunks are handed out here by hand (``send`` records them), so the run sits
between two chunks for as long as the test needs: no timing involved."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from core.status import RunStatus
from metrics.results import judge_usage
from pipeline.dispatch import dispatch
from pipeline.names import EVALUATE_CHUNK, FINALIZE_RUN
from pipeline.service.runs import RunRequest
from pipeline.worker import execution, finalizer, interim
from store.models import utcnow
from tests import crafted
from tests.pipeline_support import FAST_JUDGE
from tests.services import SUBPROCESS_DEADLINE_S


def planned_run(app, tmp_path, sessions: int = 6, **asked):
    """A run of ``sessions`` sessions in chunks of one session, not sent;
    ``asked``: the request's fields (suites: quality)."""
    app.test_client().get("/")  # the start-up resume, before the run exists
    rows = [
        {**crafted.alignment_sessions()[index % 2], "session_id": f"s{index}"}
        for index in range(sessions)
    ]
    path = crafted.write(tmp_path / "i.jsonl", rows)
    with path.open("rb") as stream:
        run = app.extensions["runs"].create(
            stream, path.name, RunRequest(**{"suites": ["quality"], **asked})
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
    assert (
        "Before the cancel, results were stored for 30 of 60 responses, in 3 "
        "of 6 sessions."
    ) in page
    assert 'data-testid="comparison-table"' in page


PRICE = {"input": 2.5, "output": 10.0}


def judged_run(app_factory, tmp_path, judge_server):
    """A run of alignment (the judge: 20 requests a session) and quality,
    chunks of one session handed out by hand, in a workspace."""
    app = app_factory(
        CHUNK_UNITS=1,
        RUN_INFLIGHT_CHUNKS=100,
        **FAST_JUDGE,
        JUDGE_API_URL=judge_server.url,
        JUDGE_MODEL="scripted",
        JUDGE_PRICES={"scripted": PRICE},
    )
    space = app.extensions["storage"].workspaces.create_workspace("lab")
    run, ctx, sent = planned_run(
        app, tmp_path, suites=["alignment", "quality"], workspace_id=space.id
    )
    assert run.suites == ["alignment", "quality"]  # the judge's suite first
    chunks = [task[2] for task in sent if task[0] == EVALUATE_CHUNK]
    return app, space, run, ctx, chunks


def cancel_after(monkeypatch, app, run, suite: str) -> None:
    """Cancel the run once a chunk has scored ``suite``'s rows, before it
    stores them: the chunk is under way at the cancel."""
    real = execution._suite_rows
    service = app.extensions["runs"]

    def then_cancel(name, *args, **kwargs):
        rows = real(name, *args, **kwargs)
        if name == suite:
            assert service.cancel(service.storage.runs.get_run(run.id))
        return rows

    monkeypatch.setattr(execution, "_suite_rows", then_cancel)


def summarized(ctx, run):
    """The cancelled run, once the app's worker (the cancel woke it)
    summarized what it stored."""
    deadline = time.monotonic() + 600
    while not ctx.storage.runs.get_run(run.id).aggregates:
        assert time.monotonic() < deadline, "the cancelled run was never summarized"
        time.sleep(0.05)
    return ctx.storage.runs.get_run(run.id)


def test_a_run_cancelled_before_any_row_was_stored_says_what_it_paid_for(
    app_factory, tmp_path, judge_server, monkeypatch
):
    """Issue 56: "0 of 30 sessions evaluated" beside 60 judge calls paid,
    the alignment card blaming a missing judge and "Nothing to show."."""
    app, space, run, ctx, chunks = judged_run(app_factory, tmp_path, judge_server)
    cancel_after(monkeypatch, app, run, "alignment")
    execution.evaluate_chunk(ctx, run.id, chunks[0])
    assert ctx.storage.rows.status_counts(run.id) == {}  # stopped: nothing stored
    stored = summarized(ctx, run)
    assert stored.aggregates["cancel_cover"] == {
        "responses": 0,
        "of_responses": 60,
        "complete": 0,
        "partial": 0,
        "of_sessions": 6,
        "by_suite": {"alignment": 0, "quality": 0},
    }
    used = ctx.storage.progress.judge_usage(run.id)["scripted"]
    assert used["calls"] == judge_server.state.calls == 20  # paid, and counted
    cost = judge_usage(stored, {"scripted": used})["scripted"]["cost_usd"]

    client = app.test_client()
    page = client.get(f"/r/{run.token}?lang=en").get_data(as_text=True)
    assert "Cancelled before any result was stored (0 of 6 sessions)." in page
    assert (
        f"Before the cancel: 20 requests sent, which cost US$ {cost:.4f}; "
        "0 verdicts from the cache (no request, no cost)."
    ) in page
    alignment = page.split('data-testid="panel-alignment"')[1].split("</details>")[0]
    assert "cancelled before this suite stored any result" in alignment
    assert "configured judge" not in alignment
    assert (
        'data-testid="rows-empty">The run was cancelled before any result '
        "row was stored.<"
    ) in page
    kind = client.get(f"/r/{run.token}?lang=en&metric=quality").get_data(as_text=True)
    assert "The run was cancelled before any row of Overall quality was stored." in kind
    listed = client.get(f"/w/{space.token}?lang=en").get_data(as_text=True)
    assert 'data-testid="run-progress">results stored for 0 / 60 responses<' in listed
    for lang in ("zh", "ko"):
        translated = client.get(f"/r/{run.token}?lang={lang}").get_data(as_text=True)
        assert 'data-testid="cancelled-spent"' in translated
        assert "Before the cancel" not in translated
        assert "Cancelled before any result" not in translated


def test_a_cancelled_run_counts_sessions_complete_and_partly_evaluated(
    app_factory, tmp_path, judge_server, monkeypatch
):
    """A chunk stores each suite's rows in turn: cancelled between them, its
    session has alignment rows and no quality rows (partly evaluated); and
    no row lands after the cancel."""
    app, space, run, ctx, chunks = judged_run(app_factory, tmp_path, judge_server)
    execution.evaluate_chunk(ctx, run.id, chunks[0])
    cancel_after(monkeypatch, app, run, "quality")
    execution.evaluate_chunk(ctx, run.id, chunks[1])
    stored = summarized(ctx, run)
    assert stored.aggregates["cancel_cover"] == {
        "responses": 20,
        "of_responses": 60,
        "complete": 1,
        "partial": 1,
        "of_sessions": 6,
        "by_suite": {"alignment": 2, "quality": 1},
    }
    assert stored.aggregates["status_counts"] == ctx.storage.rows.status_counts(run.id)

    client = app.test_client()
    page = client.get(f"/r/{run.token}?lang=en").get_data(as_text=True)
    assert (
        "results were stored for 20 of 60 responses: 1 of 6 sessions complete, "
        "1 partly evaluated"
    ) in page
    used = ctx.storage.progress.judge_usage(run.id)["scripted"]
    assert used["calls"] + used["cached"] == 40  # two sessions' items, each once
    assert (
        f"Before the cancel: {used['calls']} requests sent, which cost US$ "
        f"{judge_usage(stored, {'scripted': used})['scripted']['cost_usd']:.4f}; "
        f"{used['cached']} verdicts from the cache"
    ) in page
    quality = page.split('data-testid="panel-quality"')[1].split("</details>")[0]
    assert "Cancelled: this suite&#39;s results cover 1 of 6 sessions." in quality
    methods = page.split('data-testid="methods-paragraph">')[1].split("</p>")[0]
    assert "We began to evaluate 2 methods" in methods
    assert (
        "results were stored for 20 of the 60 responses, in 1 of the 6 sessions "
        "for every suite and 1 more for some suites only"
    ) in methods
    listed = client.get(f"/w/{space.token}?lang=en").get_data(as_text=True)
    assert 'data-testid="run-progress">results stored for 20 / 60 responses<' in listed


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
        {"done": 1, "total": 2},
        {"done": 2, "total": 2},
    ]
    assert {s["stage"] for s in steps} == {"summarizing"}
    # the steps are written beside the provisional results, which stay
    assert all(p["provisional"] == before["provisional"] for p in polled[:-1])


def test_a_worker_loads_what_aggregating_needs_once_it_consumes():
    """``interim.preload`` (run when a worker is ready, app.py) loads the
    aggregation's modules beside the worker's first tasks, so the worker's
    first aggregation does not wait for them."""
    code = (
        "import sys; from pipeline.worker import interim; interim.preload().join(); "
        "print(all(name in sys.modules for name in interim.AGGREGATION_MODULES))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_DEADLINE_S,
        cwd=Path(__file__).resolve().parents[3],
    )
    assert done.stdout.split() == ["True"], done.stderr


def test_a_worker_preloads_nothing_its_aggregations_do_not_load():
    """scipy.stats is no aggregation's of stored rows: loaded beside the
    first judge calls it held their GIL for 0.5 s of CPU (issue 61 item 8)."""
    code = (
        "import sys; from pipeline.worker import interim; interim.preload().join(); "
        "print('scipy.stats' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_DEADLINE_S,
        cwd=Path(__file__).resolve().parents[3],
    )
    assert done.stdout.split() == ["False"], done.stderr
