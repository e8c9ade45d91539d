"""The scripted judge's shared, thread-safe state: its knobs (latency,
outage, drip, rate limits), and what tests check about the load and the
prompts it saw."""

from __future__ import annotations

import threading
import time
from collections import Counter

from testing import judge_wire
from testing.judge_limits import RateLimits


class JudgeState:
    """Shared, thread-safe counters and knobs of one server."""

    def __init__(
        self,
        latency: float = 0.0,
        timeout_sleep: float = 3.0,
        protocols: tuple[str, ...] = (),
    ):
        self.latency = latency
        # protocol texts besides the built-in ones (testing/judge_forms.py)
        self.protocols = protocols
        self.timeout_sleep = timeout_sleep
        self.drip_s = 0.2  # seconds between bytes of a [[fault=drip]] reply
        self.outage_status: int | None = None  # e.g. 503 for every request
        self.calls = 0
        self.attempts: Counter[str] = Counter()
        self.lock = threading.Lock()
        # What tests check about the load and the prompts the server saw.
        self.in_flight = 0
        self.max_in_flight = 0
        self.in_flight_of: Counter[str] = Counter()  # per model, now and at most
        self.max_in_flight_of: Counter[str] = Counter()
        self.connections = 0  # opened by clients, over the server's life
        self.max_prompt_chars = 0
        self.models: Counter[str] = Counter()
        # time.time() when the first call came and the latest one was
        # answered (bench/handoff.py: compared with the run's timestamps)
        self.first_call_at: float | None = None
        self.last_call_at: float | None = None
        self.reported = judge_wire.Reported()  # usage sent, per model
        self.record_to = None  # a binary file: every request body, one a line
        # requests and tokens per minute, as OpenAI enforces them (None: none)
        self.limits: RateLimits | None = None

    @property
    def rate_limited(self) -> int:
        """Requests answered 429 by the rate limits (never counted in ``calls``)."""
        return self.limits.rejected if self.limits else 0

    @property
    def admitted(self) -> int:
        """Requests the rate limits let through (all of them without limits:
        see ``calls``)."""
        return self.limits.admitted if self.limits else self.calls

    def record(self, body: bytes) -> None:
        if self.record_to is not None:
            with self.lock:
                self.record_to.write(body + b"\n")

    def enter(self, model: str, prompt: str) -> None:
        now = time.time()
        with self.lock:
            self.first_call_at = self.first_call_at or now
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self.in_flight_of[model] += 1
            self.max_in_flight_of[model] = max(
                self.max_in_flight_of[model], self.in_flight_of[model]
            )
            self.max_prompt_chars = max(self.max_prompt_chars, len(prompt))
            self.models[model] += 1

    def leave(self, model: str = "") -> None:
        now = time.time()
        with self.lock:
            self.last_call_at = now  # its reply is on its way
            self.in_flight -= 1
            self.in_flight_of[model] -= 1

    def count(self, key: str) -> int:
        with self.lock:
            self.calls += 1
            self.attempts[key] += 1
            return self.attempts[key]
