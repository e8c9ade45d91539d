"""Finalize exactly once (issue 32): however many callers ask at the same
moment (the last chunks, the watchdog's sweep), one aggregates the run."""

from __future__ import annotations

import threading

import pytest

from config import DEFAULTS
from pipeline.worker import finalizer, interim
from store.models import utcnow
from tests import aggregate_rows as data
from tests.metrics.test_aggregate_equality import store_run


@pytest.mark.slow
def test_racing_finalizations_aggregate_once(any_storage, monkeypatch):
    storage = any_storage
    run = store_run(storage, data.synthetic_rows("single", "key"))
    calls, real = [], interim.aggregate_stored

    def counted(*args, **kwargs):
        calls.append(threading.get_ident())
        return real(*args, **kwargs)

    monkeypatch.setattr(interim, "aggregate_stored", counted)
    start = threading.Barrier(4)

    def finalize():
        start.wait()
        finalizer.finalize(storage, run.id, dict(DEFAULTS))

    racers = [threading.Thread(target=finalize) for _ in range(4)]
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join()
    assert len(calls) == 1
    assert storage.runs.get_run(run.id).status in ("done", "partial")
    finalizer.finalize(storage, run.id, dict(DEFAULTS))  # a late sweep: nothing
    assert len(calls) == 1


@pytest.mark.slow
def test_a_stale_claim_is_taken_again(sqlite_storage, monkeypatch):
    """A worker that died while aggregating leaves its claim, no longer
    refreshed; once it is older than FINALIZE_STALE_S the next caller
    finalizes."""
    storage = sqlite_storage
    run = store_run(storage, data.synthetic_rows("single", "key"))
    assert storage.runs.claim_finalize(run.id, stale_before=utcnow()) is True
    finalizer.finalize(storage, run.id, dict(DEFAULTS))
    assert storage.runs.get_run(run.id).status == "running"  # claimed, not stale
    monkeypatch.setattr(finalizer, "FINALIZE_STALE_S", 0.0)
    finalizer.finalize(storage, run.id, dict(DEFAULTS))
    assert storage.runs.get_run(run.id).status in ("done", "partial")


@pytest.mark.slow
def test_a_long_aggregation_keeps_its_claim(sqlite_storage, monkeypatch):
    """The claim is refreshed while the aggregation runs, so a slow but live
    finalization is not taken over."""
    import time

    storage = sqlite_storage
    run = store_run(storage, data.synthetic_rows("single", "key"))
    monkeypatch.setattr(finalizer, "FINALIZE_BEAT_S", 0.05)
    seen, real = [], interim.aggregate_stored

    def slow(*args, **kwargs):
        first = storage.runs.get_run(run.id).finalizing_at
        time.sleep(0.5)
        seen.append((first, storage.runs.get_run(run.id).finalizing_at))
        return real(*args, **kwargs)

    monkeypatch.setattr(interim, "aggregate_stored", slow)
    finalizer.finalize(storage, run.id, dict(DEFAULTS))
    [(first, later)] = seen
    assert later > first  # beaten meanwhile
