"""What a judge call gives back: its outcome for the row, the tokens it used,
and the check that stops a cancelled run's calls."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from time import monotonic

from core import usage
from core.status import Cancelled
from metrics.notes import Note

STORED_REPLY_CHARS = 20_000  # of a raw reply kept as evidence on the row


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
    verdict: dict | None = None
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

    def __init__(self):
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
    """Asks ``should_stop`` at most every ``interval_s`` (it hits the database)."""

    def __init__(self, should_stop=None, interval_s: float = 0.5):
        self.should_stop = should_stop
        self.interval_s = interval_s
        self.checked_at = 0.0
        self.stopped = False
        self.lock = threading.Lock()

    def _due(self) -> bool:
        return not self.stopped and monotonic() - self.checked_at >= self.interval_s

    def check(self) -> None:
        """One thread asks; the others go on with the last answer instead of
        queueing behind it: the question is a database read (and the chunk's
        heartbeat, a write that may wait for other writers), and 64 judge
        threads waiting on it measured as most of their time."""
        if self.should_stop is None:
            return
        if self._due() and self.lock.acquire(blocking=False):
            try:
                if self._due():
                    self.checked_at = monotonic()
                    self.stopped = bool(self.should_stop())
            finally:
                self.lock.release()
        if self.stopped:
            raise Cancelled

    async def acheck(self) -> None:
        """:meth:`check` for a call on the judge loop: the question is asked
        on another thread, so the loop's other calls never wait on the
        database; until it is answered they go on with the last answer."""
        if self.should_stop is None:
            return
        if self._due() and self.lock.acquire(blocking=False):
            try:
                if self._due():
                    self.checked_at = monotonic()
                    stop = await asyncio.to_thread(self.should_stop)
                    self.stopped = bool(stop)
            finally:
                self.lock.release()
        if self.stopped:
            raise Cancelled
