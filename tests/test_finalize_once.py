"""Finalize exactly once (issue 32): however many callers ask at the same
moment (the last chunks, the watchdog's sweep), one aggregates the run."""

from __future__ import annotations

import threading

from config import DEFAULTS
from pipeline import execution, interim
from store.models import utcnow
from tests import aggregate_rows as data
from tests.test_aggregate_equality import store_run


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
        execution.finalize(storage, run.id, dict(DEFAULTS))

    racers = [threading.Thread(target=finalize) for _ in range(4)]
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join()
    assert len(calls) == 1
    assert storage.get_run(run.id).status in ("done", "partial")
    execution.finalize(storage, run.id, dict(DEFAULTS))  # a late sweep: nothing
    assert len(calls) == 1


def test_a_stale_claim_is_taken_again(sqlite_storage):
    """A worker that died while aggregating leaves its claim; once it is
    older than CHUNK_STALL_S the next caller finalizes."""
    storage = sqlite_storage
    run = store_run(storage, data.synthetic_rows("single", "key"))
    assert storage.claim_finalize(run.id, stale_before=utcnow()) is True
    execution.finalize(storage, run.id, {**DEFAULTS, "CHUNK_STALL_S": 3600})
    assert storage.get_run(run.id).status == "running"  # claimed, not stale
    execution.finalize(storage, run.id, {**DEFAULTS, "CHUNK_STALL_S": 0})
    assert storage.get_run(run.id).status in ("done", "partial")
