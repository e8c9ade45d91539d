"""A run that stops moving says why and recovers (issue 57,
``pipeline/stalls.py``): its cause on the status API and its page, its
work handed out again where waiting would not help, and given up (the
run ends with the reason) past its attempts."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select

from core.clock import utcnow
from core.holders import this_host
from core.status import RunStatus
from judge_client import pacing
from pipeline import stalls
from pipeline.leases import LEASES
from pipeline.worker import execution
from store.models import Run, RunChunk
from tests.pipeline.test_progress import planned_run

STILL = {"RUN_STALL_S": 60.0, "MAX_CHUNK_ATTEMPTS": 3}


@pytest.fixture(autouse=True)
def watched(monkeypatch):
    """This process has swept without a break for long (``stalls.Watch``)."""
    monkeypatch.setattr(stalls.WATCH, "watched_for", lambda *args: True)


def _still_running(storage, minutes: float = 11):
    """A planned run, running, that last moved ``minutes`` ago."""
    run = planned_run(storage)
    storage.runs.set_status(run.id, RunStatus.RUNNING.value, started_at=utcnow())
    with storage.engine.begin() as conn:
        conn.execute(
            Run.__table__.update()
            .where(Run.id == run.id)
            .values(moved_at=utcnow() - timedelta(minutes=minutes))
        )
    return storage.runs.get_run(run.id)


def _context(app):
    return execution.Context(app.extensions["storage"], app.config, lambda *t: None)


def test_a_run_that_moved_recently_is_not_stalled(app_factory):
    app = app_factory(**STILL)
    run = _still_running(app.extensions["storage"], minutes=0.5)
    assert execution.check_stalls(_context(app)) == 0
    assert app.extensions["runs"].progress(run)["stalled"] is None


def test_work_held_by_a_process_that_ended_is_handed_out_again(app_factory):
    """No live worker holds it: ``no_worker``, the chunk back for a claim,
    its judge requests' claims ended (a retry waits on none)."""
    app = app_factory(**STILL)
    storage = app.extensions["storage"]
    run = _still_running(storage)
    dead = f"{this_host()}:{2**22 + 7}:gone"  # (no such pid)
    chunk = storage.chunks.start_chunk(run.id, 0, holder=dead)
    until = utcnow() + timedelta(minutes=16)
    attempt = f"{dead}:0.{chunk.lease}"
    storage.judge_cache.claim_requests(["k"], attempt, until)
    assert execution.check_stalls(_context(app)) == 1
    assert storage.chunks.chunk_states(run.id) in ({"pending": 1}, {"sent": 1})
    assert storage.judge_cache.requests_claimed(["k"]) == {}
    stalled = app.extensions["runs"].progress(storage.runs.get_run(run.id))["stalled"]
    assert stalled["cause"] == "no_worker" and stalled["handed_out_again"]
    assert "no live worker" in stalled["message"]


def test_work_that_waits_on_the_judges_limits_is_left_to_wait_and_says_so(
    app_factory, monkeypatch
):
    """Held here while this process's pace holds requests back (a stated
    10 tokens a minute is hours a request): ``judge_limits`` with the
    limits, and nothing handed out again (it would only wait again)."""
    app = app_factory(**STILL)
    storage = app.extensions["storage"]
    run = _still_running(storage)
    chunk = storage.chunks.start_chunk(run.id, 0, holder=LEASES.holder)
    LEASES.hold(run.id, 0, chunk.lease)
    pace = pacing.Pace(tpm=10)
    pace._waiters[object()] = pace.clock() - 700
    monkeypatch.setitem(pacing._PACES, ("http://judge", "m"), pace)
    try:
        assert execution.check_stalls(_context(app)) == 1
    finally:
        LEASES.drop(run.id, 0)
    assert storage.chunks.chunk_states(run.id) == {"running": 1}
    stalled = app.extensions["runs"].progress(storage.runs.get_run(run.id))["stalled"]
    assert stalled["cause"] == "judge_limits" and not stalled["handed_out_again"]
    assert "10 tokens a minute" in stalled["message"]
    pace.refused_at = pace.clock()  # then the judge answers 429
    LEASES.hold(run.id, 0, chunk.lease)
    try:
        execution.check_stalls(_context(app))
    finally:
        LEASES.drop(run.id, 0)
    stalled = app.extensions["runs"].progress(storage.runs.get_run(run.id))["stalled"]
    assert stalled["cause"] == "judge_refusing"


def test_a_stall_ends_when_the_run_moves(app_factory):
    app = app_factory(**STILL)
    storage = app.extensions["storage"]
    run = _still_running(storage)
    execution.check_stalls(_context(app))
    assert storage.runs.get_run(run.id).stall["cause"] == "no_worker"
    storage.chunks.start_chunk(run.id, 0, holder=LEASES.holder)
    storage.progress.record_progress(run.id, 0, 10, judge_calls=2)
    assert storage.runs.get_run(run.id).stall is None
    assert (
        app.extensions["runs"].progress(storage.runs.get_run(run.id))["stalled"] is None
    )


def test_work_stalled_past_its_attempts_is_given_up_and_the_run_ends_with_why(
    app_factory,
):
    """Held here, nothing waiting on the judge, nothing moving: handed out
    again once per RUN_STALL_S; at the last attempt its rows become errors
    naming the stall and the run is final."""
    app = app_factory(**{**STILL, "MAX_CHUNK_ATTEMPTS": 1})
    storage = app.extensions["storage"]
    run = _still_running(storage)
    chunk = storage.chunks.start_chunk(run.id, 0, holder=LEASES.holder)
    LEASES.hold(run.id, 0, chunk.lease)
    try:
        assert execution.check_stalls(_context(app)) == 1
    finally:
        LEASES.drop(run.id, 0)
    assert storage.chunks.chunk_states(run.id) == {"failed": 1}
    with storage.engine.connect() as conn:
        error = conn.scalar(select(RunChunk.error).where(RunChunk.run_id == run.id))
    assert error.startswith("No progress for 11 min")  # (why it was handed back)


def test_with_no_worker_sweeping_the_page_still_says_why(app_factory):
    """No sweep recorded a cause (no worker is alive to): once a sweep is
    overdue, the read side says ``no_worker``."""
    app = app_factory(**STILL, WATCHDOG_INTERVAL_S=30.0)
    run = _still_running(app.extensions["storage"], minutes=12)
    stalled = app.extensions["runs"].progress(run)["stalled"]
    assert stalled["cause"] == "no_worker" and not stalled["handed_out_again"]


def test_a_process_that_was_paused_judges_no_stall_until_it_has_watched(
    app_factory, monkeypatch
):
    """A worker resumed after SIGSTOP saw none of its runs move while it was
    stopped: their last move looks old, and handing its own chunks out again
    paid their requests twice. A stall is judged only after RUN_STALL_S of
    sweeps without a break."""
    app = app_factory(**STILL)
    storage = app.extensions["storage"]
    run = _still_running(storage)
    now = [1000.0]
    monkeypatch.setattr(stalls, "WATCH", stalls.Watch(lambda: now[0]))
    assert execution.check_stalls(_context(app)) == 0  # it just (re)started
    now[0] += 30.0  # a sweep every 30 s (the interval): watching
    assert execution.check_stalls(_context(app)) == 0
    now[0] += 30.0
    assert execution.check_stalls(_context(app)) == 1
    assert storage.runs.get_run(run.id).stall["cause"] == "no_worker"
