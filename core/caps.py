"""The judge budget's vocabulary: the notes of the two caps that refuse a
call, and the workspace day a daily cap counts on (``store/budget.py`` keeps
the counters). Pure, so the run service reads it without loading SQL.

>>> Daily.today(None, 100) is None, Daily.today("w", 0) is None
(True, True)
>>> len(Daily.today("w", 100).day)
10
"""

from __future__ import annotations

from dataclasses import dataclass

from core.clock import utcnow

RUN_CAP = "budget_exhausted"  # the note of a call the run's cap refused
DAILY_CAP = "workspace_budget_exhausted"  # ... its workspace's daily cap


@dataclass(frozen=True)
class Daily:
    """A workspace's daily cap, on the day (``YYYY-MM-DD``, UTC) it counts."""

    workspace_id: str
    day: str
    cap: int

    @classmethod
    def today(cls, workspace_id: str | None, cap: int | None) -> Daily | None:
        if not workspace_id or not cap:
            return None
        return cls(workspace_id, utcnow().date().isoformat(), cap)
