"""Rate limits the scripted judge enforces the way OpenAI does (issue 49).

* Requests per minute (``rpm``) and tokens per minute (``tpm``), each over a
  sliding minute and, finer, over a sliding second: ``rpm / 60`` requests and
  ``tpm / 60`` tokens in any second (OpenAI: "rate limits can be applied over
  shorter periods - for example, 1 request per second for a 60 RPM limit").
* A request's tokens are its prompt, estimated as the usage the server
  reports (``judge_wire.prompt_tokens``), plus its ``max_tokens`` (or
  ``max_completion_tokens``): OpenAI reserves the reply's allowance against
  TPM before the reply exists.
* Every reply states the limits as OpenAI does:
  ``x-ratelimit-{limit,remaining,reset}-{requests,tokens}``, limit per
  minute, remaining of the sliding minute, reset: the time the limit's rate
  takes to give back what the minute used (``120ms``, ``1.5s``, ``6m0s``;
  OpenAI's example: 60 RPM with 1 used resets in "1s". Until the minute is
  clear instead, it said ~60 s once requests flowed, and a client that
  waits for the reset after a 429 waited a minute each time). Like OpenAI, they do not state the sliding
  second: a client learns the pace from ``limit / 60`` and each 429's wait.
* Over a limit: 429 with OpenAI's error body (``type`` ``requests`` or
  ``tokens``, ``code`` ``rate_limit_exceeded``), ``retry-after`` (whole
  seconds, rounded up, as HTTP has it) and ``retry-after-ms`` (exact): the
  time until that request would be admitted.
* A rejected request consumes nothing by default (so the windows' arithmetic
  stays exact and the figures compare with issue 49's measurements).
  ``count_rejected=True`` counts it as a request (not its tokens: none were
  processed), as OpenAI's help says "unsuccessful requests contribute to
  your per-minute limit".
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from testing import judge_wire

SECOND = 1.0
MINUTE = 60.0
KINDS = ("requests", "tokens")


def request_tokens(body: dict) -> int:
    """What a request reserves against TPM: its prompt plus its allowance."""
    allowance = body.get("max_tokens") or body.get("max_completion_tokens") or 0
    return judge_wire.prompt_tokens(body) + int(allowance)


def duration(seconds: float) -> str:
    """A wait the way OpenAI writes it (Go's duration format): ``120ms``,
    ``1.5s``, ``6m0s``.

    >>> [duration(s) for s in (0, 0.12, 1.0, 17.25, 360.0)]
    ['0s', '120ms', '1s', '17.25s', '6m0s']
    """
    millis = max(round(seconds * 1000), 0)
    if millis == 0:
        return "0s"
    if millis < 1000:
        return f"{millis}ms"
    minutes, millis = divmod(millis, 60_000)
    text = f"{millis / 1000:.3f}".rstrip("0").rstrip(".") + "s"
    return f"{minutes}m{text}" if minutes else text


class Window:
    """The requests one sliding span holds, each as (time, tokens), with the
    span's capacities (None: that kind is not limited)."""

    def __init__(self, span: float, requests: float | None, tokens: float | None):
        self.span = span
        self.capacity = {"requests": requests, "tokens": tokens}
        self.entries: deque[tuple[float, int]] = deque()
        self.used = {"requests": 0, "tokens": 0}

    def prune(self, now: float) -> None:
        while self.entries and self.entries[0][0] <= now - self.span:
            _, tokens = self.entries.popleft()
            self.used["requests"] -= 1
            self.used["tokens"] -= tokens

    def add(self, now: float, tokens: int) -> None:
        self.entries.append((now, tokens))
        self.used["requests"] += 1
        self.used["tokens"] += tokens

    def wait(self, now: float, kind: str, need: int) -> float:
        """Seconds until ``need`` more of ``kind`` fit (0: now; inf: never,
        more than the span holds). Call ``prune(now)`` first."""
        capacity = self.capacity[kind]
        if capacity is None:
            return 0.0
        if need > capacity:
            return math.inf
        excess = self.used[kind] + need - capacity
        for at, tokens in self.entries:  # the oldest leave first
            if excess <= 0:
                break
            excess -= 1 if kind == "requests" else tokens
            if excess <= 0:
                return at + self.span - now
        return 0.0


@dataclass
class Verdict:
    """One request's answer from the limits: the headers every reply
    carries, and the 429's body when it was not admitted."""

    headers: dict[str, str]
    error: dict | None = None


class RateLimits:
    """The limits of one server (thread-safe); ``clock`` is injectable so
    tests move the window without sleeping."""

    def __init__(
        self,
        rpm: int | None = None,
        tpm: int | None = None,
        count_rejected: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.per_minute = {"requests": rpm, "tokens": tpm}
        per_second = {k: v / 60 if v else None for k, v in self.per_minute.items()}
        self.second = Window(SECOND, per_second["requests"], per_second["tokens"])
        self.minute = Window(MINUTE, rpm, tpm)
        self.count_rejected = count_rejected
        self.clock = clock
        self.lock = threading.Lock()
        self.admitted = 0  # requests let through
        self.rejected = 0  # requests answered 429

    def admit(self, tokens: int) -> Verdict:
        """Admit one request of ``tokens`` now, or say why not and for how long."""
        with self.lock:
            now = self.clock()
            for window in (self.second, self.minute):
                window.prune(now)
            kind, window, wait = self._binding(now, tokens)
            if kind is None:
                self.admitted += 1
                self._add(now, tokens)
                return Verdict(self._headers(now))
            self.rejected += 1
            if self.count_rejected:
                self._add(now, 0)
            return Verdict(
                {**self._headers(now), **_retry_after(wait)},
                _error(kind, window, tokens, wait),
            )

    def _binding(self, now: float, tokens: int) -> tuple[str | None, Window, float]:
        """The kind and window that make this request wait longest, and how
        long (no kind: it is admitted now)."""
        found: tuple[str | None, Window, float] = (None, self.second, 0.0)
        for window in (self.second, self.minute):
            for kind in KINDS:
                wait = window.wait(now, kind, 1 if kind == "requests" else tokens)
                if wait > found[2]:
                    found = (kind, window, wait)
        return found

    def _add(self, now: float, tokens: int) -> None:
        self.second.add(now, tokens)
        self.minute.add(now, tokens)

    def _headers(self, now: float) -> dict[str, str]:
        headers = {}
        for kind, limit in self.per_minute.items():
            if not limit:
                continue
            used = self.minute.used[kind]
            headers[f"x-ratelimit-limit-{kind}"] = str(limit)
            headers[f"x-ratelimit-remaining-{kind}"] = str(max(limit - used, 0))
            # the used part given back at the limit's rate (OpenAI's example)
            headers[f"x-ratelimit-reset-{kind}"] = duration(used * MINUTE / limit)
        return headers


def _retry_after(wait: float) -> dict[str, str]:
    if math.isinf(wait):  # larger than any window: waiting will not help
        return {}
    return {
        "retry-after": str(max(math.ceil(wait), 1)),
        "retry-after-ms": str(max(math.ceil(wait * 1000), 1)),
    }


def _error(kind: str, window: Window, requested: int, wait: float) -> dict:
    """OpenAI's 429 body, naming the window that binds."""
    short = {"requests": "RPM", "tokens": "TPM"}[kind]
    where = f"{kind} per min ({short})" + (" in any second" * (window.span == SECOND))
    limit = window.capacity[kind]
    asked = 1 if kind == "requests" else requested
    if math.isinf(wait):
        message = (
            f"Request too large for scripted on {where}: "
            f"Limit {limit:g}, Requested {asked}."
        )
    else:
        message = (
            f"Rate limit reached for scripted on {where}: "
            f"Limit {limit:g}, Used {window.used[kind]}, Requested {asked}. "
            f"Please try again in {duration(wait)}."
        )
    return {
        "error": {
            "message": message,
            "type": kind,
            "param": None,
            "code": "rate_limit_exceeded",
        }
    }
