"""A chunk's share of its run's judge call cap (``MAX_JUDGE_CALLS_PER_RUN``)
and of its workspace's daily cap (``WORKSPACE_DAILY_JUDGE_CALLS``).

Each request to the judge takes one call before it goes out. Reserving
calls one at a time in the database serialised every worker on the run's
row (PostgreSQL holds the row lock until the commit): 10,000 calls at c = 32
took 2.3x the ideal time instead of 1.4x (the judge threads of a chunk wait
on the run's row, which progress reports lock too). So a chunk reserves
calls a block at a time, smaller as the cap nears (a sixty-fourth of what is
left, at most ``BLOCK``, at least one), and gives back what it did not use
when it ends:
the cap is never passed, and a run whose judge keeps failing stops at it
(the last calls before the cap are reserved one by one).

>>> class Store:
...     reserved = 0
...     def reserve_calls(self, run_id, cap, wanted, daily):
...         size = wanted if self.reserved + wanted <= cap else (1 if self.reserved < cap else 0)
...         self.reserved += size
...         return size, cap - self.reserved, None if size else "budget_exhausted"
...     def release_calls(self, run_id, unused, daily):
...         self.reserved -= unused
>>> store = Store()
>>> allowance = CallAllowance(store, "r", cap=3)
>>> [allowance() for _ in range(4)], store.reserved, allowance.refusal
([True, True, True, False], 3, 'budget_exhausted')
>>> allowance.take_held()  # nothing held: the next call asks the store
False
"""

from __future__ import annotations

import threading
from typing import Protocol

from core.caps import RUN_CAP, Daily
from core.status import StorageUnavailable

BLOCK = 64


class Ledger(Protocol):
    """The budget ledger (``store/budget.py``; a test's fake above)."""

    def reserve_calls(
        self, run_id: str, cap: int, wanted: int, daily: Daily | None = None
    ) -> tuple[int, int, str | None]: ...

    def release_calls(
        self, run_id: str, unused: int, daily: Daily | None = None
    ) -> None: ...


class CallAllowance:
    """``allowance() -> bool``: one call of the caps (thread-safe); when
    False, ``refusal`` is the note of the cap that refused. Call
    :meth:`release` when the chunk ends."""

    def __init__(
        self,
        ledger: Ledger,
        run_id: str,
        cap: int,
        workspace_id: str | None = None,
        daily_cap: int | None = None,
    ):
        self.ledger, self.run_id, self.cap = ledger, run_id, cap
        self.workspace_id, self.daily_cap = workspace_id, daily_cap
        self.held = 0
        self.held_day: Daily | None = None  # the day the held calls count on
        self.next_block = BLOCK  # one call is tried when a block no longer fits
        self.refusal = RUN_CAP
        self.lock = threading.Lock()

    def __call__(self) -> bool:
        with self.lock:
            if self.held == 0:
                self._reserve()
            if self.held == 0:
                return False
            self.held -= 1
            return True

    def take_held(self) -> bool:
        """One call from the block already held, without the database;
        False when none is held (then call the allowance itself)."""
        with self.lock:
            if self.held == 0:
                return False
            self.held -= 1
            return True

    def _reserve(self) -> None:
        day = Daily.today(self.workspace_id, self.daily_cap)
        try:
            granted, left, refusal = self.ledger.reserve_calls(
                self.run_id, self.cap, self.next_block, day
            )
        except Exception as exc:  # the database's failure, not the suite's
            raise StorageUnavailable.of(exc) from exc
        self.held, self.held_day = granted, day
        self.refusal = refusal or self.refusal
        self.next_block = max(1, min(BLOCK, left // 64))

    def release(self) -> None:
        with self.lock:
            unused, self.held = self.held, 0
        self.ledger.release_calls(self.run_id, unused, self.held_day)
