"""Claims for results before a run ends (``storage.runs``; the work
is in ``pipeline/interim.py``). Each claim is a compare-and-set on
``runs.interim_at``, so one worker does each piece of work however many
ask at the same time."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import distinct, func, select, update

from core.status import ACTIVE_RUN, RunStatus
from store.database import Repository
from store.models import ResultRow, Run, utcnow
from store.sql import claim_each

_ACTIVE = [status.value for status in ACTIVE_RUN]


class InterimQueries(Repository):
    """Claims on a run's interim and final aggregation."""

    def claim_interim(self, run_id: str, computed_before: datetime) -> bool:
        """Whether this caller should aggregate the active run's rows so far
        (none did since ``computed_before``)."""
        query = (
            update(Run)
            .where(
                Run.id == run_id,
                Run.status.in_(_ACTIVE),
                Run.interim_at.is_(None) | (Run.interim_at < computed_before),
            )
            .values(interim_at=utcnow())
        )
        with self.engine.begin() as conn:
            return conn.execute(query).rowcount == 1

    def claim_finalize(self, run_id: str, stale_before: datetime) -> bool:
        """Whether this caller aggregates the active run now: nobody claimed
        it, or the claim is older than ``stale_before`` (its worker died)."""
        query = (
            update(Run)
            .where(
                Run.id == run_id,
                Run.status.in_(_ACTIVE),
                Run.finalizing_at.is_(None) | (Run.finalizing_at < stale_before),
            )
            .values(finalizing_at=utcnow())
        )
        with self.engine.begin() as conn:
            return conn.execute(query).rowcount == 1

    def beat_finalize(self, run_id: str) -> None:
        """The finalize claim's holder is alive (``pipeline/execution.py``)."""
        query = (
            update(Run)
            .where(Run.id == run_id, Run.finalizing_at.is_not(None))
            .values(finalizing_at=utcnow())
        )
        with self.engine.begin() as conn:
            conn.execute(query)

    def claim_cancelled(self) -> list[str]:
        """Cancelled runs whose stored rows nobody summarized yet (a cancel
        clears ``interim_at``), each claimed once."""
        waiting = (Run.status == RunStatus.CANCELLED.value) & Run.interim_at.is_(None)
        with self.engine.begin() as conn:
            return claim_each(conn, Run.id, waiting, interim_at=utcnow())

    def count_scored_sessions(self, run_id: str) -> int:
        """Sessions with rows stored (chunks store whole sessions)."""
        query = select(func.count(distinct(ResultRow.session_id))).where(
            ResultRow.run_id == run_id
        )
        with self.engine.connect() as conn:
            return conn.execute(query).scalar_one()
