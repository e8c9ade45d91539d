"""What a judge call gives back: its outcome for the row, the tokens it used,
and the check that stops a cancelled run's calls."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from time import monotonic
from typing import Any, Protocol, TypeVar

from core import usage
from core.status import Cancelled
from metrics.notes import Note

STORED_REPLY_CHARS = 20_000  # of a raw reply kept as evidence on the row
_T = TypeVar("_T")


class Prompted(Protocol):
    """A judge request (``metrics.judging.JudgeItem``): its prompt's version."""

    @property
    def prompt_version(self) -> str: ...


def kept_reply(text: str | None, limit: int = STORED_REPLY_CHARS) -> str | None:
    """A reply as a row keeps it: cut at ``limit`` characters with a marker
    saying how much was left out.

    >>> kept_reply("abcdef", 4)
    'abcd… [2 more characters not kept]'
    """
    if text is None or len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit} more characters not kept]"


@dataclass
class JudgeOutcome:
    status: str  # a RowStatus: ok | unscored | error
    verdict: dict[str, Any] | None = None
    raw: str | None = None
    note: Note | None = None  # why there is no verdict
    cached: bool = False
    reasked: int = 0  # re-asks this outcome took (0 or 1)

    def __post_init__(self) -> None:
        self.raw = kept_reply(self.raw)


class Usage:
    """A run's judge counters in this process: the run's totals
    (``judge_calls``, ``cache_hits``, tokens) and each model's
    (:mod:`core.usage`), added together under one lock."""

    TOTALS = ("judge_calls", "cache_hits", "prompt_tokens", "completion_tokens")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self._counts: dict[str, int] = {}

    def add(self, model: str = "", **counts: int) -> None:
        """``counts`` are per-model fields (``core.usage.FIELDS``)."""
        with self.lock:
            for field_name, value in counts.items():
                name = usage.key(model, field_name)
                self._counts[name] = self._counts.get(name, 0) + value
            totals = {
                "judge_calls": counts.get("calls", 0),
                "cache_hits": counts.get("cached", 0),
                "prompt_tokens": counts.get("prompt_tokens", 0),
                "completion_tokens": counts.get("completion_tokens", 0),
            }
            for name, value in totals.items():
                self._counts[name] = self._counts.get(name, 0) + value

    def counters(self) -> dict[str, int]:
        """Every counter: the totals, then ``judge_usage|model|field``."""
        with self.lock:
            found = {name: self._counts.get(name, 0) for name in self.TOTALS}
            found.update(self._counts)
            return found

    def by_model(self) -> dict[str, dict[str, int]]:
        return usage.split(self.counters())[1]


class StopCheck:
    """Asks ``should_stop`` at most every ``interval_s`` (it hits the
    database). ``should_stop`` returns whether the run was cancelled, or
    raises a ``Cancelled`` of its own (``LeaseLost``): that exception is
    what every later check raises.

    Callers go on with the last answer while one thread asks, unless that
    answer is older than ``fresh_s``: a process that was stopped or starved
    for that long may have lost its chunk meanwhile, so its calls wait for
    the new answer instead of going out on the old one."""

    def __init__(
        self,
        should_stop: Callable[[], bool] | None = None,
        interval_s: float = 0.5,
        fresh_s: float = 2.0,
    ):
        self.should_stop = should_stop
        self.interval_s, self.fresh_s = interval_s, fresh_s
        self.checked_at = 0.0  # the first call asks
        self.stopped: Cancelled | None = None
        self.lock = threading.Lock()

    def _due(self) -> bool:
        return self.stopped is None and monotonic() - self.checked_at >= self.interval_s

    def _stale(self) -> bool:
        return self.stopped is None and monotonic() - self.checked_at >= self.fresh_s

    def _ask(self) -> None:
        if self.should_stop is None:  # check and acheck never ask then
            return
        try:
            stop = self.should_stop()
        except Cancelled as exc:
            self.stopped = exc
        else:
            self.stopped = Cancelled() if stop else None

    def _raise(self) -> None:
        if self.stopped is not None:
            raise type(self.stopped)(*self.stopped.args)

    def check(self) -> None:
        """One thread asks; the others go on with the last answer instead of
        queueing behind it: the question is a database read (and the chunk's
        heartbeat, a write that may wait for other writers), and 64 judge
        threads waiting on it measured as most of their time."""
        if self.should_stop is None:
            return
        if self._due() and self.lock.acquire(blocking=self._stale()):
            try:
                if self._due():
                    self._ask()
                    self.checked_at = monotonic()
            finally:
                self.lock.release()
        self._raise()

    async def acheck(self) -> None:
        """:meth:`check` for a call on the judge loop: the question is asked
        on another thread, so the loop's other calls never wait on the
        database; until it is answered they go on with the last answer
        (unless it is stale: then they wait for this one)."""
        if self.should_stop is None:
            return
        while self._stale() and self.lock.locked():
            await asyncio.sleep(0.01)  # another call is asking: its answer is due
        if self._due() and self.lock.acquire(blocking=False):
            try:
                if self._due():
                    await asyncio.to_thread(self._ask)
                    self.checked_at = monotonic()
            finally:
                self.lock.release()
        self._raise()


def settled(
    futures: Mapping[int, Future[_T]], within: float | None = None
) -> dict[int, _T]:
    """The outcomes of calls that end (each waits for its reply or its
    deadline; a call not yet sent stops at its check and is left out). With
    ``within`` seconds, the calls still under way after them are cut."""
    outcomes: dict[int, _T] = {}
    until = None if within is None else monotonic() + within
    for index, future in futures.items():
        left = None if until is None else max(until - monotonic(), 0.0)
        try:
            outcomes[index] = future.result(timeout=left)
        except TimeoutError:  # (concurrent.futures.TimeoutError since 3.11)
            future.cancel()  # past the grace: cut, its tokens never known
        except Exception:  # Cancelled (never sent), or a call that broke
            continue
    return outcomes


def cache_entry(
    item: Prompted, reply: Mapping[str, Any], parsed: dict[str, Any]
) -> dict[str, Any]:
    """What the judge cache keeps of a verdict (``store/judge_cache.py``)."""
    return {
        "prompt_version": item.prompt_version,
        "reply": reply["text"],
        "parsed": parsed,
        "prompt_tokens": reply["prompt_tokens"],
        "completion_tokens": reply["completion_tokens"],
    }
