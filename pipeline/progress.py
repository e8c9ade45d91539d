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
as a range ``[low, high]`` (``eta_low_s``/``eta_high_s``), and says
"estimating" (``eta_note``) until there is evidence: ``MIN_JUDGE_CALLS``
judge calls answered (a judged run), ``STABLE_SHARE`` of the units done and
``STABLE_AFTER_S`` seconds elapsed. The range:

* high: the rate so far, start-up included: the slowest the run has gone.
  A judge that later slows below its average (rate limits that start
  late) overruns it; the page's waiting line says so then;
* low: that rate, faster by what the evidence cannot rule out. The count:
  ``n`` calls (units without a judge) give the rate to about ``1/sqrt(n)``
  (a Poisson count), so up to ``RATE_Z / sqrt(n)`` faster. The start-up:
  the elapsed time includes the worker picking the chunk up, the first
  connection and pacing's first, slower requests. Charged to the rate they
  made early estimates 2-5x too long (issue 61: "3-4 minutes" for a run
  that took 86 s), so the low end assumes up to ``WARMUP_S`` seconds of it
  did no work: ``elapsed / (elapsed - WARMUP_S)`` faster (at most
  ``1 / MIN_WORK_SHARE``), a factor that falls to 1 as the run goes on.

A smoothed recent rate would follow a changing judge faster, but would need
a history of samples shared by every web process; the overall rate needs
none and does not jump when a chunk finishes.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from math import ceil, sqrt
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
    estimable (nothing done yet, no judge, a run not started). The time left
    as a range, ``eta_low_s``/``eta_high_s`` (also ``eta_range``), null with
    ``eta_note: "estimating"`` until the evidence is enough
    (:func:`_eta_range`)."""
    elapsed = _elapsed(run, now or datetime.now(UTC))
    done, total = run.done, run.total
    rate = done / elapsed if elapsed and done else None
    if run.status in FINAL_RUN:
        finished = run.status in (RunStatus.DONE, RunStatus.PARTIAL)
        eta = 0 if finished else None
    else:
        eta = ceil((total - done) / rate) if rate else None
    judge_rate = run.judge_calls * 60 / elapsed if run.judge and elapsed else None
    span = _eta_range(run, done, total, elapsed, rate)
    return {
        "done": done,
        "total": total,
        "stage": _stage(run),
        "stage_progress": _stage_progress(run),
        "eta_seconds": eta,
        "eta_range": span,
        "eta_low_s": None if span is None else span[0],
        "eta_high_s": None if span is None else span[1],
        "eta_note": _eta_note(run, span),
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


# an ETA is shown once all hold: a twentieth of the units, 15 s, and 20 judge
# calls (a judged run). 20 calls pin a rate to about 1/sqrt(20) = 22%: fewer
# leave the count's part of the range wider than the rest
STABLE_SHARE, STABLE_AFTER_S, MIN_JUDGE_CALLS = 0.05, 15.0, 20
# start-up the low end allows: worker pick-up, first connection and pacing's
# first requests came to 10-16 s in issue 61's runs
WARMUP_S, MIN_WORK_SHARE = 12.0, 0.2
RATE_Z = 1.645  # the count's spread: one side of a 90% interval


def _eta_range(
    run: Run, done: int, total: int, elapsed: float | None, rate: float | None
) -> list[int] | None:
    """Seconds left as ``[low, high]`` once the evidence is enough (see the
    module's "Estimates"): from the rate so far, spread by the count it
    rests on and by the start-up it may include. None before, and once
    nothing is left to evaluate.

    >>> from types import SimpleNamespace as Run
    >>> judged = {"status": "running", "judge": {"model": "m"}}
    >>> _eta_range(Run(**judged, judge_calls=120), 30, 90, 60.0, 0.5)
    [84, 120]
    >>> _eta_range(Run(**judged, judge_calls=9), 30, 90, 60.0, 0.5) is None
    True
    """
    if run.status in FINAL_RUN or not rate or not elapsed or done >= total:
        return None
    if not _enough_evidence(run, done, total, elapsed):
        return None
    count = run.judge_calls if getattr(run, "judge", None) else done
    spread = RATE_Z / sqrt(max(count, 1))
    warmup = elapsed / max(elapsed - WARMUP_S, elapsed * MIN_WORK_SHARE)
    left = total - done
    low = left / (rate * (1 + spread) * warmup)
    high = left / rate
    return [ceil(low), ceil(high)]


def _enough_evidence(run: Run, done: int, total: int, elapsed: float) -> bool:
    """Whether the rate so far is worth a forecast: ``STABLE_SHARE`` of the
    units, ``STABLE_AFTER_S`` seconds and, with a judge, ``MIN_JUDGE_CALLS``
    calls answered."""
    if done < STABLE_SHARE * total or elapsed < STABLE_AFTER_S:
        return False
    return not getattr(run, "judge", None) or run.judge_calls >= MIN_JUDGE_CALLS


def _eta_note(run: Run, span: list[int] | None) -> str | None:
    """``"estimating"`` while a queued or running run shows no range (the
    evidence is short); None once there is one, while summarizing and once
    final."""
    if span is not None or _stage(run) not in ("queued", "evaluating"):
        return None
    return "estimating"


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
