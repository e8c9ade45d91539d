"""Results before a run ends.

*While a run is evaluated*, the worker that finishes a chunk aggregates the
rows stored so far, at most every ``INTERIM_EVERY_S`` (the first time that
long after the run started: a shorter run shows its final results) and never for more
than a fifth of a worker's time (one worker, by a claim on
``runs.interim_at``), into ``runs.interim``: the run's pages show
them marked provisional, with the sessions they cover. A chunk stores its
sessions whole, so these are the aggregates of whole sessions, computed as
the final ones are; they change as sessions are added.

*A cancelled run* keeps every row its chunks stored before the cancel
(a suite's rows of a chunk at a time; a chunk under way stores nothing
after it: ``store/leases.fenced``). The cancel clears ``interim_at``; the
dispatcher then hands the run to a worker once (``claim_cancelled``), which
aggregates those rows into ``runs.aggregates`` with what they cover
(``cancel_cover``: responses, sessions complete or partly evaluated, per
suite). The status stays ``cancelled`` and its pages say what the results
cover and what the judge was paid for (``web/presentation/cancelled.py``).
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Callable
from datetime import timedelta
from time import monotonic
from typing import TYPE_CHECKING, Any, cast

from core.clock import utcnow
from core.status import ACTIVE_RUN, RowStatus
from metrics import engine, registry
from metrics.rows import finite_json

if TYPE_CHECKING:
    from metrics.row_source import RowSource
    from metrics.suite import Suite
    from store import StorageLike
    from store.models import Run

log = logging.getLogger(__name__)
# metrics.rows.finite_json has no annotations: a dict comes back a dict
_finite_dict = cast("Callable[[dict[str, Any]], dict[str, Any]]", finite_json)


def aggregate_stored(
    storage: StorageLike,
    run: Run,
    config: dict[str, Any],
    on_step: Callable[[int, int], object] | None = None,
) -> dict[str, Any]:
    """The aggregates of the run's stored rows, with their status counts and
    the sessions they cover. Each suite reads its rows a few metrics at a
    time (``store/suite_rows.py``): memory follows one or two metrics' rows,
    not the run's. ``on_step(done, total)``: see ``engine.aggregate``."""

    from store import suite_rows  # SQL: loaded by the worker, not the CLI

    def rows_of(suite: Suite) -> RowSource:
        return suite_rows.source(storage.engine, run.id, suite)

    max_compared = config["MAX_COMPARED_METHODS"]
    counts = storage.rows.status_counts(run.id)
    aggregates = engine.aggregate(
        rows_of,
        run.suites,
        run.methods,
        max_compared,
        on_step=on_step,
        replies_missing=bool(counts.get(RowStatus.MISSING)),
        families=run.families,
        judge=(run.judge or {}).get("model"),
    )
    return _finite_dict(
        {
            **aggregates,
            "status_counts": counts,
            "missing_replies": storage.rows.missing_replies(run.id),
            "not_scored": engine.not_scored(
                storage.rows.unscored_causes(run.id), run.suites
            ),
            "sessions_scored": storage.runs.count_scored_sessions(run.id),
        }
    )


# What every aggregation loads (scipy.special for the t quantiles, numpy, the
# row readers), which a worker's first aggregation (provisional, or the
# finalize of a run too short for one) would otherwise spend (issue 32).
# Not scipy.stats: Wilcoxon and the stored rows' ranks are computed without
# it (metrics/stats.py, store/suite_rows.py), and its 0.5 s of CPU loaded
# while the first calls go out held the GIL they need (issue 61 item 8); a
# panel's agreement or an in-memory rank check loads it on use.
AGGREGATION_MODULES = ("scipy.special", "numpy", "store.suite_rows")


def preload() -> threading.Thread:
    """Load what aggregating needs, in a thread of its own, once a worker
    consumes: its first tasks go on meanwhile (they mostly wait on the
    judge), and the run's finalize finds it loaded."""

    def load() -> None:
        for name in AGGREGATION_MODULES:
            importlib.import_module(name)

    loader = threading.Thread(target=load, name="preload", daemon=True)
    loader.start()
    return loader


# The aggregation of a large run takes seconds: provisional results may take
# at most this share of a worker's time (the next ones wait accordingly).
MAX_SHARE = 0.2


def refresh(storage: StorageLike, run_id: str, config: dict[str, Any]) -> None:
    """Provisional aggregates of an active run, when they are due: every
    ``INTERIM_EVERY_S``, or less often when the last one took long."""
    run = storage.runs.get_run(run_id)
    if run is None or run.status not in ACTIVE_RUN:
        return
    took = float((run.interim or {}).get("computed_in_s") or 0.0)
    every = max(config["INTERIM_EVERY_S"], took / MAX_SHARE)
    if not storage.runs.claim_interim(
        run_id, computed_before=utcnow() - timedelta(seconds=every)
    ):
        return
    started = monotonic()
    try:
        interim = aggregate_stored(storage, run, config)
    except Exception:  # provisional: the final aggregation says what failed
        log.exception("provisional aggregates of run %s failed", run_id)
        return
    interim["computed_in_s"] = round(monotonic() - started, 3)
    storage.runs.update_run(run_id, interim=interim)


def summary_steps(storage: StorageLike, run: Run) -> Callable[[int, int], None]:
    """``on_step`` for the final aggregation: each step finished is written
    beside the provisional results (``interim["summarizing"]``), so the
    progress page's last stage moves too (``pipeline/progress.py``)."""
    shown = dict(run.interim or {})

    def on_step(done: int, total: int) -> None:
        shown["summarizing"] = {"done": done, "total": total}
        try:
            storage.runs.update_run(run.id, interim=dict(shown))
        except Exception:  # advisory, like every progress write
            log.warning("a summary progress write failed", exc_info=True)

    return on_step


def summarize_cancelled(storage: StorageLike, run: Run, config: dict[str, Any]) -> None:
    """The results of what a cancelled run evaluated before the cancel, and
    what its stored rows cover (``cancel_cover``: its page, the workspace
    and the Methods paragraph say it)."""
    aggregates = aggregate_stored(storage, run, config)
    aggregates["cancel_cover"] = cancel_cover(storage, run)
    storage.runs.update_run(run.id, aggregates=aggregates)


def cancel_cover(storage: StorageLike, run: Run) -> dict[str, Any]:
    """``storage.runs.stored_cover`` of the run's suites, with the totals it
    is out of: ``of_responses`` (the run's units: one per session, round and
    method) and ``of_sessions``. ``responses`` is null when no suite of the
    run scores single responses (its rows are per session: a count of
    responses would say 0 of what it evaluated)."""
    suites = [registry.get(name) for name in run.suites if name in registry.names()]
    if not suites:  # suites removed since: nothing to count them by
        return {
            "responses": None,
            "of_responses": run.total,
            "complete": 0,
            "partial": 0,
            "of_sessions": run.sessions,
            "by_suite": {},
        }
    cover = storage.runs.stored_cover(run.id, suites)
    per_response = any(m.level == "row" for suite in suites for m in suite.metrics)
    return {
        **cover,
        "responses": cover["responses"] if per_response else None,
        "of_responses": run.total,
        "of_sessions": run.sessions,
    }
