"""Pace the requests to one judge endpoint and model under its rate limits
(issue 49), instead of sending ``JUDGE_CONCURRENCY`` at once and retrying
the 429s: providers count every 429 against the account, and a stampede
of retries is what makes calls fail.

Limits come from the provider's headers (``x-ratelimit-limit-requests``
and ``-tokens``, per minute, on every reply) or, where a server sends
none, from ``JUDGE_RPM``/``JUDGE_TPM``. Providers also hold a minute's
limit to 1/60 in any second, so requests go out evenly spaced: one every
``60 / (rpm * margin)`` seconds, and no faster than the tokens they
reserve (their prompt, estimated and corrected by the usage replies
report, plus ``max_tokens``) allow. A 429 halves the pace and holds every
request until its ``retry-after`` (multiplicative decrease); each success
gives a little back (additive increase). Until the first reply says what
the limits are, at most ``EARLY`` requests go.

Everything here runs on the process's one judge loop (``loop.py``): one
:class:`Pace` per endpoint and model, shared by every chunk, no lock.

>>> pace = Pace(rpm=600, clock=lambda: 0.0)
>>> pace.interval(tokens=0)  # 10 a second, at a 95% margin
0.10526315789473684
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections import deque
from collections.abc import Callable, Mapping
from time import monotonic
from typing import Any

log = logging.getLogger(__name__)

MAX_HOLD_S = 120.0  # the longest retry-after obeyed (a day would stall the run)
# requests sent before a reply states the limits: few enough for any
# limit's second (a stampede of JUDGE_CONCURRENCY was 14 of 50 refused),
# enough that a slow judge's first reply holds up nothing else
EARLY = 8
# the longest a request waits for the first reply before going unpaced (the
# early requests end by the judge's deadline; this is its default)
FIRST_REPLY_S = 240.0
MARGIN = 0.95  # of a limit used: network jitter bunches requests on arrival
DECREASE, INCREASE, FLOOR = 0.75, 0.05, 0.05  # of the pace, per 429 / success
HEADERS = (
    "x-ratelimit-limit-requests",
    "x-ratelimit-limit-tokens",
    "retry-after",
    "retry-after-ms",
)
_PACES: dict[tuple[str, str], Pace] = {}


def pace_for(url: str, model: str, rpm: int | None, tpm: int | None) -> Pace:
    """The process's pace of one endpoint and model."""
    key = (url, model)
    if key not in _PACES:
        _PACES[key] = Pace(rpm, tpm)
    return _PACES[key]


class Pace:
    def __init__(
        self,
        rpm: int | None = None,
        tpm: int | None = None,
        clock: Callable[[], float] = monotonic,
    ) -> None:
        self.rpm, self.tpm = rpm, tpm  # per minute; None: not known (yet)
        self.configured = (rpm, tpm)  # JUDGE_RPM/TPM: for replies without headers
        self.known = rpm is not None or tpm is not None
        self.clock = clock
        self.share = 1.0  # of the limits paced at (lowered by 429s)
        self.next_at = 0.0  # when the next request may go
        self.held_until = 0.0  # a 429's retry-after
        self.token_scale = 1.0  # reported prompt tokens / our estimate
        self._early = 0  # requests out before any reply: the others wait
        # set by the first reply (or failure) and by an early request that
        # ended unsent: a waiter looks again
        self._turn = asyncio.Event()
        self._sent: deque[tuple[float, int]] = deque()  # the last second's
        self._waiters: dict[object, float] = {}  # requests waiting: since when
        self.refused_at: float | None = None  # the last 429

    def interval(self, tokens: int) -> float:
        """Seconds between requests of ``tokens`` reserved, at the pace."""
        gaps = [0.0]
        if self.rpm:
            gaps.append(60.0 / (self.rpm * MARGIN * self.share))
        if self.tpm:
            gaps.append(60.0 * tokens / (self.tpm * MARGIN * self.share))
        return max(gaps)

    async def admit(
        self, prompt_tokens: int, max_tokens: int, first_reply_s: float = FIRST_REPLY_S
    ) -> float:
        """Wait until this request may go: evenly spaced at the pace, and
        never more than the margin of a second's share in the last second
        of requests that went (a busy loop sends late, and late requests
        must not go out bunched). Returns the seconds it waited on the
        limits (the wait for the first reply, which says them, is not one,
        and ends after ``first_reply_s`` whatever happened to those)."""
        tokens = int(prompt_tokens * self.token_scale) + max_tokens
        waiter = object()
        self._waiters[waiter] = started = self.clock()
        try:
            if not self.known and await self._early_turn(first_reply_s):
                self._sent.append((self.clock(), tokens))  # counted once known
                return 0.0  # one of the first: a reply says the limits
            started = self.clock()
            while (wait := self._wait_s(tokens)) > 0:
                await asyncio.sleep(wait)
        finally:
            del self._waiters[waiter]
        now = self.clock()
        self.next_at = now + self.interval(tokens)
        self._sent.append((now, tokens))
        return now - started

    async def _early_turn(self, first_reply_s: float) -> bool:
        """Before a reply said the limits: True when this request is one of
        the first ``EARLY``, False once a reply came (or the wait for one
        ran out: then nothing is known to be limited)."""
        loop = asyncio.get_running_loop()
        ends = loop.time() + first_reply_s
        while not self.known:
            if self._early < EARLY:
                self._early += 1
                return True
            self._turn.clear()
            try:
                await asyncio.wait_for(self._turn.wait(), ends - loop.time())
            except TimeoutError:
                log.warning("no first reply from the judge in %.0f s", first_reply_s)
                return False
        return False

    def unsent(self) -> None:
        """An admitted request ended before it was sent (its run cancelled,
        its budget refused, a database error): before the limits are known
        its early slot goes to a waiting request, which would otherwise wait
        for a reply that will never come."""
        if not self.known and self._early:
            self._early -= 1
            self._turn.set()

    def holding(self) -> dict[str, Any] | None:
        """The requests waiting for their turn now, for a run that stopped
        moving (``pipeline/stalls.py``): how many, the longest wait, the
        limits, and whether the judge refused one as over its limit (429)
        within that wait. None when none waits."""
        if not self._waiters:
            return None
        now = self.clock()
        oldest = now - min(tuple(self._waiters.values()))
        refused = self.refused_at is not None and now - self.refused_at <= oldest
        return {
            "waiting": len(self._waiters),
            "wait_s": oldest,
            "rpm": self.rpm,
            "tpm": self.tpm,
            "refused": refused,
        }

    def _wait_s(self, tokens: int) -> float:
        """Seconds until a request of ``tokens`` may go (0: now)."""
        now = self.clock()
        while self._sent and self._sent[0][0] <= now - 1.0:
            self._sent.popleft()
        waits = [self.next_at - now, self.held_until - now]
        if self.rpm and len(self._sent) >= self.rpm * MARGIN * self.share / 60:
            waits.append(self._sent[0][0] + 1.0 - now)
        # the last second's tokens, summed only under a token limit: a judge
        # that says none (most, on loopback all) paid a sum over every
        # request of the last second at each admit
        if (
            self.tpm
            and self._sent
            and sum(spent for _, spent in self._sent) + tokens
            > self.tpm * MARGIN * self.share / 60
        ):
            waits.append(self._sent[0][0] + 1.0 - now)
        return max(0.0, *waits)

    def observe(
        self,
        status: int | None,
        headers: Mapping[str, str],
        estimated: int = 0,
        reported: int = 0,
    ) -> None:
        """What a reply says: the limits, a 429's wait, the usage. A
        request that got no reply (``status`` None) ends the wait for the
        first reply too: then nothing is known to be limited."""
        try:
            if status is not None:
                self._learn(headers)
        finally:  # whatever a reply said, nobody waits on it any longer
            self.known = True  # a reply came (or none will): the others may go
            self._turn.set()
        if status == 429:
            self.refused_at = self.clock()
            self.share = max(FLOOR, self.share * DECREASE)
            wait = retry_after_s(headers)
            if wait is not None:
                self.held_until = max(self.held_until, self.clock() + wait)
        elif status == 200:
            self.share = min(1.0, self.share + INCREASE)
            if estimated and reported:  # a running mean of the ratio
                self.token_scale += 0.2 * (reported / estimated - self.token_scale)

    def _learn(self, headers: Mapping[str, str]) -> None:
        """Each reply says the limits as they are now; a reply without a
        header leaves that limit to the configured one (or none)."""
        said = [_number(headers.get(name), name) for name in HEADERS[:2]]
        self.rpm, self.tpm = (
            int(value) if value else default
            for value, default in zip(said, self.configured, strict=True)
        )


def holding() -> dict[tuple[str, str], dict[str, Any]]:
    """Per endpoint and model of this process, the requests its pace holds
    back now (``Pace.holding``)."""
    found = {key: pace.holding() for key, pace in list(_PACES.items())}
    return {key: held for key, held in found.items() if held is not None}


def retry_after_s(headers: Mapping[str, str]) -> float | None:
    """``retry-after-ms`` (exact) or ``retry-after`` (seconds).

    >>> retry_after_s({"retry-after-ms": "250", "retry-after": "1"})
    0.25
    >>> retry_after_s({"retry-after": "2"}), retry_after_s({})
    (2.0, None)
    """
    exact = _number(headers.get("retry-after-ms"), "retry-after-ms")
    seconds = (
        exact / 1000.0
        if exact is not None
        else _number(headers.get("retry-after"), "retry-after")
    )
    return None if seconds is None else min(seconds, MAX_HOLD_S)


def _number(value: str | None, name: str = "") -> float | None:
    """A provider's number as sent: None when absent, and, with a log line,
    when it is not a finite non-negative number (``inf`` once stopped a
    worker's judge: its int() raised before anybody waiting was told).

    >>> _number("90000"), _number(None), _number("inf"), _number("-5")
    (90000.0, None, None, None)
    """
    if value is None:
        return None
    try:
        found = float(value)
    except (TypeError, ValueError):
        found = math.nan
    if not math.isfinite(found) or found < 0:
        log.warning("ignored the judge's %s header: %.40r", name or "limit", value)
        return None
    return found
