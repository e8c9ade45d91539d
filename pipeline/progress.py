"""A run's progress: how a worker counts a chunk's units while it evaluates
them (:class:`ChunkProgress`), and what a status poll shows
(:func:`run_progress`).

Counting a chunk. Its suites run one after another over all of its units
(session, round, method), so a unit is one n-th done per suite that scored
it, and the chunk's units done are
``units * (suites finished + share of the current suite) / suites``. The share
of a suite that asks the judge is its items with an outcome (the judge
reports each one: a cache hit, a verdict or a failure) over the items the
suite's ``estimate`` expects for the chunk's sessions; a suite without an
estimate moves the count when it ends. A suite without the judge runs
session by session and counts each session's units as it is done
(``pipeline/worker/execution.py``).

Writing it. At most one write per ``WRITE_EVERY_S`` per chunk, never one per
item: a poll every second or two sees the count move, and a thousand items a
second cost one small transaction. Each write carries the absolute count
(the storage keeps the chunk's high-water mark, capped below its units, so
a lost write costs nothing and a retried chunk never counts twice; see
``store/progress.py``) and the judge counters gained since the last write,
so ``judge_calls`` moves with the work. A failed write is logged and the next
one catches up: progress must never fail the scoring.

Estimates. The rate is the one observed since the run started (its first
chunk went to a worker): ``done / elapsed``. The page shows the time left
as a range, and only once a twentieth of the units are done and ten seconds
have passed (before that a rate says little). A smoothed recent rate would
follow a changing judge faster, but would need a history of samples shared
by every web process; the overall rate needs none and does not jump when a
chunk finishes.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from math import ceil
from time import monotonic
from typing import TYPE_CHECKING, Any

from core.status import FINAL_RUN, RunStatus
from dataset import replies

if TYPE_CHECKING:
    from metrics.suite import Suite
    from store.models import Run

log = logging.getLogger(__name__)
WRITE_EVERY_S = 1.0  # a chunk's progress reaches the database this often


class ChunkProgress:
    """Units done of one chunk, written through ``write(units_done,
    **counter_gains)`` at most every ``interval_s`` seconds.

    >>> writes, now = [], [0.0]
    >>> progress = ChunkProgress(lambda units, **gains: writes.append(units),
    ...                          units=100, suites=2, clock=lambda: now[0])
    >>> progress.start_suite(50)          # a judge suite expecting 50 items
    >>> for tenth in range(1, 51):
    ...     now[0] = tenth / 10           # 10 items a second
    ...     progress.add(1)
    >>> writes                            # once a second, not 50 times
    [10, 20, 30, 40, 50]
    >>> progress.end_suite(); progress.start_suite(None)  # no estimate
    >>> progress.add(7); progress.end_suite(); progress.write(); writes[-1]
    99
    """

    def __init__(
        self,
        write: Callable[..., object],
        units: int,
        suites: int,
        interval_s: float | None = None,
        clock: Callable[[], float] = monotonic,
    ):
        self._write = write
        self.units = units
        self.suites = max(suites, 1)
        self.interval_s = WRITE_EVERY_S if interval_s is None else interval_s
        self._clock = clock
        # () -> the judge's counters so far; set when the chunk has a judge
        self.counters: Callable[[], dict[str, int]] = dict
        self._lock = threading.Lock()  # a suite may ask the judge from threads
        self._finished = 0  # suites finished
        self._expected: int | None = None  # work of the current suite
        self._worked = 0
        self._written_units = 0
        self._written_counters: dict[str, int] = {}
        self._written_at = clock()

    @property
    def units_done(self) -> int:
        """The chunk's units done so far, below ``units`` (the chunk's last
        unit is counted when it finishes)."""
        share = min(self._worked / self._expected, 1.0) if self._expected else 0.0
        done = int((self._finished + share) * self.units / self.suites)
        return max(min(done, self.units - 1), 0)

    def start_suite(self, expected: int | None) -> None:
        """The next suite starts; ``expected``: its work (judge items or
        units), None when unknown (the suite then counts when it ends)."""
        with self._lock:
            self._expected, self._worked = expected, 0

    def add(self, work: int = 1) -> None:
        """``work`` more items or units of the current suite are done."""
        with self._lock:
            self._worked += work
            due = self._clock() - self._written_at >= self.interval_s
        if due:
            self.write()

    def end_suite(self) -> None:
        with self._lock:
            self._finished += 1
            self._expected, self._worked = None, 0

    def write(self) -> None:
        """Write now (unthrottled): the units done, and the counters gained."""
        with self._lock:
            self._written_at = self._clock()
            units, totals = self.units_done, self.counters()
            gains = {
                name: value - self._written_counters.get(name, 0)
                for name, value in totals.items()
            }
            gains = {name: gain for name, gain in gains.items() if gain}
            if units <= self._written_units and not gains:
                return
            try:
                self._write(units, **gains)
            except Exception:  # advisory: the next write catches up
                log.warning("a progress write failed", exc_info=True)
                return
            self._written_units = max(units, self._written_units)
            self._written_counters = totals


def expected_items(
    suite: Suite,
    sessions: list[dict[str, Any]],
    methods: list[str],
    options: dict[str, Any],
    judges: int = 1,
) -> int | None:
    """Judge items ``suite`` will ask for ``sessions`` (of each of ``judges``:
    a panel asks each), from its estimate of calls per sample; None when it
    has no estimate or the estimate fails."""
    if suite.estimate is None:
        return None
    window = options.get("history_chars")
    try:
        calls: int = sum(
            replies.estimate(suite, s, methods, window, options)[0] for s in sessions
        )
    except Exception:  # an estimate is advisory: never fail the scoring on it
        log.warning("estimating suite %s failed", suite.name, exc_info=True)
        return None
    return calls * int(options.get("samples", 1)) * max(1, judges)


def run_progress(run: Run, now: datetime | None = None) -> dict[str, Any]:
    """``progress`` of a status poll: ``done`` and ``total`` units, and from
    the rate observed since the run started, ``units_per_second``,
    ``eta_seconds`` and ``judge_calls_per_minute``; null while not yet
    estimable (nothing done yet, no judge, a run not started)."""
    elapsed = _elapsed(run, now or datetime.now(UTC))
    done, total = run.done, run.total
    rate = done / elapsed if elapsed and done else None
    if run.status in FINAL_RUN:
        finished = run.status in (RunStatus.DONE, RunStatus.PARTIAL)
        eta = 0 if finished else None
    else:
        eta = ceil((total - done) / rate) if rate else None
    judge_rate = run.judge_calls * 60 / elapsed if run.judge and elapsed else None
    return {
        "done": done,
        "total": total,
        "stage": _stage(run),
        "stage_progress": _stage_progress(run),
        "eta_seconds": eta,
        "eta_range": _eta_range(run, done, total, elapsed, rate),
        "units_per_second": round(rate, 3) if rate else None,
        "judge_calls_per_minute": None if judge_rate is None else round(judge_rate, 1),
    }


def _stage(run: Run) -> str:
    """``queued``, ``evaluating``, ``summarizing`` (every unit done: the
    run is aggregated) or ``finished``."""
    if run.status in FINAL_RUN:
        return "finished"
    if run.status == RunStatus.QUEUED:
        return "queued"
    return "summarizing" if run.total and run.done >= run.total else "evaluating"


def _stage_progress(run: Run) -> dict[str, int] | None:
    """Steps of the summary done, ``{"done", "total"}``, while summarizing
    (written by the aggregation, ``pipeline/worker/interim.summary_steps``).

    >>> from types import SimpleNamespace as Run
    >>> steps = {"summarizing": {"done": 2, "total": 5}}
    >>> _stage_progress(Run(status="running", total=9, done=9, interim=steps))
    {'done': 2, 'total': 5}
    >>> _stage_progress(Run(status="running", total=9, done=4, interim=steps))
    """
    if _stage(run) != "summarizing":
        return None
    steps: dict[str, int] | None = (run.interim or {}).get("summarizing")
    return steps


STABLE_SHARE, STABLE_AFTER_S = 0.05, 10.0  # an ETA is shown once both hold
RATE_SPREAD = (0.8, 1.25)  # the range: the rate so far, this much slower/faster


def _eta_range(
    run: Run, done: int, total: int, elapsed: float | None, rate: float | None
) -> list[int] | None:
    """Seconds left as ``[low, high]`` once the rate is worth a forecast
    (``STABLE_SHARE`` of the units done and ``STABLE_AFTER_S`` elapsed):
    a range, because judges speed up and slow down. None before, and once
    nothing is left to evaluate.

    >>> from types import SimpleNamespace as Run
    >>> _eta_range(Run(status="running"), 30, 90, 60.0, 0.5)
    [96, 150]
    >>> _eta_range(Run(status="running"), 2, 90, 60.0, 2 / 60) is None  # too early
    True
    """
    if run.status in FINAL_RUN or not rate or not elapsed or done >= total:
        return None
    if done < STABLE_SHARE * total or elapsed < STABLE_AFTER_S:
        return None
    slow, fast = RATE_SPREAD
    left = total - done
    return [ceil(left / (rate * fast)), ceil(left / (rate * slow))]


def _elapsed(run: Run, now: datetime) -> float | None:
    """Seconds the run has been running (until it finished); None before
    it started. Runs of earlier releases did not record their start: their
    creation stands in."""
    if run.status == RunStatus.QUEUED:
        return None
    start = run.started_at or run.created_at
    end = run.finished_at if run.status in FINAL_RUN and run.finished_at else now
    if start is None:
        return None
    seconds = (_aware(end) - _aware(start)).total_seconds()
    return seconds if seconds > 0 else None


def _aware(moment: datetime) -> datetime:
    """SQLite hands back naive datetimes; every stored time is UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
