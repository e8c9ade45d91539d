"""Finalize a run once its chunks are all finished: one worker claims it,
aggregates the stored rows (``pipeline/worker/interim.py``) and sets the final
status; a run with nothing evaluated fails with the counts of why, and so
does one whose judge was asked without a single reply read
(``no_readable_verdict``: the other suites' rows stay).

Finalizing twice computes the same aggregates, so a redelivered FINALIZE or
the watchdog's is harmless: the claim only saves the work.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from core.clock import utcnow
from core.status import ACTIVE_RUN, FAILED_ROWS, RowStatus, RunStatus
from core.telemetry import FINALIZE_REQUESTS
from metrics import registry
from pipeline.batch.steps import cancel_batches
from pipeline.dispatch import fail_run
from pipeline.worker import interim

if TYPE_CHECKING:
    from store import StorageLike
    from store.models import Run

log = logging.getLogger(__name__)


# The finalize claim is refreshed while the aggregation runs; a claim not
# refreshed for FINALIZE_STALE_S belongs to a worker that died (killed while
# aggregating): the next FINALIZE (redelivered, or sent by the watchdog's
# sweep) takes it. A worker's chunk heartbeat (CHUNK_STALL_S, minutes) would
# leave such a run waiting far longer than its aggregation takes.
FINALIZE_BEAT_S, FINALIZE_STALE_S = 2.0, 10.0


@contextmanager
def _beating(storage: StorageLike, run_id: str) -> Iterator[None]:
    """Refresh the run's finalize claim every ``FINALIZE_BEAT_S`` meanwhile."""
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(FINALIZE_BEAT_S):
            try:
                storage.runs.beat_finalize(run_id)
            except Exception:  # advisory: a missed beat costs a late duplicate at worst
                log.warning("a finalize heartbeat failed", exc_info=True)

    beater = threading.Thread(
        target=beat, name=f"finalize-beat-{run_id[:8]}", daemon=True
    )
    beater.start()
    try:
        yield
    finally:
        stop.set()
        beater.join()


def finalize(storage: StorageLike, run_id: str, config: dict[str, Any]) -> None:
    """Aggregate a finished run (``pipeline/worker/interim.py``); a cancelled one
    keeps its status and gets the results of the rows it stored."""
    run = storage.runs.get_run(run_id)
    if run is not None and run.status == RunStatus.CANCELLED:
        cancel_batches(storage, config, run)  # nothing more is paid for
        interim.summarize_cancelled(storage, run, config)
        return
    if run is None or run.status not in ACTIVE_RUN:
        FINALIZE_REQUESTS.labels("ended").inc()
        return
    # the last chunks and the watchdog may all ask: one worker aggregates
    stale = utcnow() - timedelta(seconds=FINALIZE_STALE_S)
    if not storage.runs.claim_finalize(run_id, stale_before=stale):
        FINALIZE_REQUESTS.labels("claimed").inc()
        return
    FINALIZE_REQUESTS.labels("aggregated").inc()
    try:
        with _beating(storage, run_id):
            aggregates = interim.aggregate_stored(
                storage, run, config, on_step=interim.summary_steps(storage, run)
            )
    except Exception as exc:  # never leave a run hanging in "running"
        log.exception("aggregating run %s failed", run_id)
        fail_run(storage, run_id, "aggregation_failed", detail=type(exc).__name__)
        return
    counts = aggregates["status_counts"]
    failed = sum(counts.get(status, 0) for status in FAILED_ROWS)
    # Finished runs are immutable: pages read these instead of re-counting rows.
    storage.runs.update_run(run_id, aggregates=aggregates)
    if not any(counts.get(status, 0) for status in EVALUATED_ROWS):
        # nothing was evaluated: every row missing, not applicable or without
        # a judge; "done" would claim results there are not
        fail_run(storage, run_id, "nothing_to_evaluate", **_why_nothing(counts))
        return
    unread = _judge_unread(storage, run)
    if unread:
        # the judge was asked and not one reply was read: "partial" with
        # every judge value null would hide that the judging failed
        fail_run(storage, run_id, "no_readable_verdict", **unread)
        return
    storage.runs.set_status(run_id, RunStatus.PARTIAL if failed else RunStatus.DONE)


EVALUATED_ROWS = (RowStatus.OK, *FAILED_ROWS)  # an outcome of an attempt


def _judge_unread(storage: StorageLike, run: Run) -> dict[str, int] | None:
    """``{"unscored", "errors"}`` of the judge metrics' rows when the judge
    was asked (some of them unscored or error) and none is ``ok``; else
    None. The judge metrics are the registry's: those that need a judge,
    of suites that use one. A run without a judge, or whose judge was never
    called (a chunk that failed before asking), is not one of these."""
    if not run.judge or not run.judge_calls:
        return None
    judged = [
        metric
        for name in run.suites
        if name in registry.names() and registry.get(name).uses_judge
        for metric in registry.get(name).metrics
        if metric.needs_judge and metric.level != "summary"
    ]
    if not judged:
        return None
    counts = storage.rows.status_counts(run.id, judged)
    unscored = counts.get(RowStatus.UNSCORED, 0)
    errors = counts.get(RowStatus.ERROR, 0)
    if counts.get(RowStatus.OK, 0) or not (unscored or errors):
        return None
    return {"unscored": unscored, "errors": errors}


def _why_nothing(counts: dict[str, int]) -> dict[str, int]:
    return {str(status): counts.get(status, 0) for status in NOT_EVALUATED_ROWS}


NOT_EVALUATED_ROWS = (
    RowStatus.MISSING,
    RowStatus.NOT_APPLICABLE,
    RowStatus.NOT_CONFIGURED,
)
