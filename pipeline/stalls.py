"""A run that stops moving says why, and recovers (issue 57: four faults
left runs ``running`` for ever, at the same percentage, with nothing on
their page).

A run moves when a unit is done, a judge counter grows or a chunk's rows
are stored (``store/progress.py`` stamps ``runs.moved_at`` then and clears
the stall). A running run that has not moved for ``RUN_STALL_S`` is
*stalled*: the watchdog's sweep (``check_stalls``) records the cause, which
the status API and the run's page show, and acts on it:

* ``judge_limits`` / ``judge_refusing``: its requests wait for their turn
  under the judge's stated rate limits, or the judge answers them 429.
  Waiting is right (handing the work out again would only wait again), so
  the run is left alone and says so; its user may cancel it.
* ``no_worker``: no live worker holds its work (killed, its broker gone);
  ``work_failing``: its work failed and was handed back; ``no_progress``:
  its worker holds the work but nothing comes. Its chunks are handed out
  again, their judge requests' claims ended (so a retry waits on none), and
  a chunk past ``MAX_CHUNK_ATTEMPTS`` claims is given up: its rows become
  errors naming the stall, and the run ends ``partial`` with the reason.

Only the process that holds a run's chunks can see what they wait on, so it
decides; a run whose chunks no live process holds is decided by any. Where
no worker sweeps at all, ``describe`` (the read side) still says
``no_worker`` once a sweep is overdue. A batch-mode run waiting for its
batches at the provider (hours, by design) is not stalled: its steps fail
the batch part on their own (``pipeline/batch/steps.py``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from time import monotonic
from typing import TYPE_CHECKING, Any

from core.clock import aware, utcnow
from core.holders import gone
from core.i18n import LazyText, _l
from core.status import BatchStage, RunStatus
from judge_client import pacing
from pipeline.leases import LEASES

if TYPE_CHECKING:
    from store import StorageLike
    from store.chunks import Chunk
    from store.models import Run

log = logging.getLogger(__name__)

CAUSES: dict[str, LazyText] = {
    "judge_limits": _l(
        "No progress for %(minutes)s min: %(waiting)s judge requests wait for "
        "their turn under the judge's rate limits (%(limits)s). The run goes on "
        "as they allow; cancel it if that is too slow."
    ),
    "judge_refusing": _l(
        "No progress for %(minutes)s min: the judge answers its requests as over "
        "its rate limit (HTTP 429). They wait, are retried, and fail after the "
        "retries."
    ),
    "no_worker": _l(
        "No progress for %(minutes)s min: no live worker holds its work (is a "
        "worker running?). It is handed out again as soon as one is."
    ),
    "work_failing": _l(
        "No progress for %(minutes)s min: its work failed (%(error)s) and was "
        "handed out again."
    ),
    "no_progress": _l(
        "No progress for %(minutes)s min: no judge reply came and no result was "
        "stored. Its work was handed out again."
    ),
}
WAITING = ("judge_limits", "judge_refusing")  # causes the run waits out
LIMIT_TEXTS = (_l("%(count)s requests a minute"), _l("%(count)s tokens a minute"))
NO_LIMIT = _l("none stated")


def still_since(run: Run) -> datetime:
    """When the run last moved (or started, or was created)."""
    return aware(run.moved_at or run.started_at or run.created_at)


class Watch:
    """How long this process has watched without a break. A process that was
    stopped (SIGSTOP) or starved did not see its runs move meanwhile: right
    after it resumes, their last move looks as old as its pause, and handing
    their work out again then paid its requests twice (a resumed worker
    found its own chunks "stalled"). So a stall is judged only after the
    sweeps have come at least every few intervals for ``RUN_STALL_S``."""

    GAP = 3.0  # sweeps further apart than this many intervals: a break

    def __init__(self, clock: Callable[[], float] = monotonic) -> None:
        self.clock = clock
        self.since: float | None = None  # watching without a break since
        self.last = 0.0

    def watched_for(self, stall_s: float, interval_s: float) -> bool:
        """True once this process has swept without a break for ``stall_s``.

        >>> now = [0.0]; watch = Watch(lambda: now[0])
        >>> [watch.watched_for(10, 1) for now[0] in range(12)][-3:]
        [False, True, True]
        >>> now[0] = 30; watch.watched_for(10, 1)  # 19 s since the last: a break
        False
        """
        now = self.clock()
        if self.since is None or now - self.last > self.GAP * max(interval_s, 1.0):
            self.since = now
        self.last = now
        return now - self.since >= stall_s


WATCH = Watch()


def stalled(
    storage: StorageLike, config: dict[str, Any]
) -> Iterator[tuple[Run, list[Chunk], bool]]:
    """Each running run that stopped moving and is this process's to decide
    (it holds the run's work, or no live process does), with its chunks in
    work, after its stall is recorded; True when its work is to be handed
    out again (``pipeline.worker.execution.check_stalls``)."""
    stall_s = config["RUN_STALL_S"]
    if not WATCH.watched_for(stall_s, config["WATCHDOG_INTERVAL_S"]):
        return
    now = utcnow()
    for run in storage.runs.unfinished_runs():
        since = still_since(run)
        if run.status != RunStatus.RUNNING or now - since < timedelta(seconds=stall_s):
            continue
        if _at_the_provider(storage, run):
            continue
        chunks = storage.chunks.held_chunks(run.id)
        held_here = set(LEASES.keys())  # (a method: not a dict)
        here = [c for c in chunks if (run.id, c.chunk) in held_here]
        if not here and any(c.holder and not gone(c.holder) for c in chunks):
            continue  # a live process holds its work: that one decides
        cause, params = _cause(storage, run, chunks, here)
        yield run, chunks, _record(storage, run, cause, params, stall_s)


def _at_the_provider(storage: StorageLike, run: Run) -> bool:
    batch = storage.batches.progress(run.id)
    return batch is not None and batch["stage"] != BatchStage.ANSWERED


def _cause(
    storage: StorageLike, run: Run, chunks: list[Chunk], here: list[Chunk]
) -> tuple[str, dict[str, Any]]:
    minutes = {"minutes": round((utcnow() - still_since(run)).total_seconds() / 60)}
    if not chunks:
        error = storage.chunks.last_error(run.id)
        if error:
            return "work_failing", {**minutes, "error": error[:200]}
        return "no_worker", minutes
    if not here:  # held by processes known to be gone
        return "no_worker", minutes
    held = list(pacing.holding().values())
    if held:
        longest = max(held, key=lambda h: h["wait_s"])
        if longest["refused"]:
            return "judge_refusing", minutes
        said = {"rpm": longest["rpm"] or 0, "tpm": longest["tpm"] or 0}
        return "judge_limits", {**minutes, "waiting": longest["waiting"], **said}
    return "no_progress", minutes


def _record(
    storage: StorageLike,
    run: Run,
    cause: str,
    params: dict[str, Any],
    stall_s: float,
) -> bool:
    """Store the stall; True when its work is due to be handed out again
    (not for a cause the run waits out; once per ``stall_s``)."""
    now = utcnow()
    handed = (run.stall or {}).get("handed_at")
    due = cause not in WAITING and (
        handed is None
        or now - datetime.fromisoformat(handed) >= timedelta(seconds=stall_s)
    )
    stall = {
        "cause": cause,
        "params": params,
        "since": still_since(run).isoformat(),
        "handed_at": now.isoformat() if due else handed,
    }
    storage.runs.set_stall(run.id, stall)
    if (run.stall or {}).get("cause") != cause:  # said once, not every sweep
        log.warning("run %s stalled: %s %s", run.id, cause, params)
    return due


def reason(run: Run) -> str:
    """The recorded stall in English (a chunk given up names it)."""
    stall = run.stall or {}
    return _message(stall, english=True)


def _message(stall: dict[str, Any], english: bool = False) -> str:
    template = CAUSES.get(stall.get("cause", ""), CAUSES["no_progress"])
    params = dict(stall.get("params") or {})
    if stall.get("cause") == "judge_limits":
        params["limits"] = _limits(params, english)
    return (template.msgid if english else str(template)) % params


def _limits(params: dict[str, Any], english: bool) -> str:
    said = []
    for name, text in (("rpm", LIMIT_TEXTS[0]), ("tpm", LIMIT_TEXTS[1])):
        if params.get(name):
            shown = text.msgid if english else str(text)
            said.append(shown % {"count": f"{params[name]:,}"})
    return ", ".join(said) or (NO_LIMIT.msgid if english else str(NO_LIMIT))


def describe(run: Run, config: dict[str, Any]) -> dict[str, Any] | None:
    """What the status API and the page say of a running run that stopped
    moving: its recorded stall, or, when no worker's sweep recorded one in
    time (none is alive to), ``no_worker``."""
    if run.status != RunStatus.RUNNING:
        return None
    stall = run.stall
    if stall is None:
        still_s = (utcnow() - still_since(run)).total_seconds()
        # a live worker's sweep records a cause by then (it sweeps every
        # interval): the page never stays silent longer
        overdue = config["RUN_STALL_S"] + config["WATCHDOG_INTERVAL_S"]
        if still_s < overdue:
            return None
        stall = {
            "cause": "no_worker",
            "params": {"minutes": round(still_s / 60)},
            "since": still_since(run).isoformat(),
        }
    return {
        "cause": stall["cause"],
        "since": stall["since"],
        "message": _message(stall),
        "handed_out_again": bool(stall.get("handed_at")),
    }
