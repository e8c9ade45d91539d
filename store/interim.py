"""Claims for results before a run ends (``storage.runs``; the work
is in ``pipeline/worker/interim.py``). Each claim is a compare-and-set on
``runs.interim_at``, so one worker does each piece of work however many
ask at the same time."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import case, distinct, func, select, update

from core.status import ACTIVE_RUN, RunStatus
from store.database import Repository
from store.leases import lock_in_flight
from store.models import ResultRow, Run, utcnow
from store.sql import claim_each

if TYPE_CHECKING:
    from metrics.suite import Suite

_ACTIVE = [status.value for status in ACTIVE_RUN]


class InterimQueries(Repository):
    """Claims on a run's interim and final aggregation."""

    def claim_interim(self, run_id: str, computed_before: datetime) -> bool:
        """Whether this caller should aggregate the active run's rows so far
        (none did since ``computed_before``). The first provisional results
        wait as long after the run started: a run that ends sooner shows its
        final ones, and a worker does not aggregate it twice within seconds."""
        last = func.coalesce(Run.interim_at, Run.started_at, Run.created_at)
        query = (
            update(Run)
            .where(Run.id == run_id, Run.status.in_(_ACTIVE), last < computed_before)
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
        """The finalize claim's holder is alive (``pipeline/worker/execution.py``)."""
        query = (
            update(Run)
            .where(Run.id == run_id, Run.finalizing_at.is_not(None))
            .values(finalizing_at=utcnow())
        )
        with self.engine.begin() as conn:
            conn.execute(query)

    def cancel_run(self, run_id: str) -> bool:
        """Cancel the run; False when it is no longer active. Its chunks in
        flight are locked first (``store.leases.lock_in_flight``): a fenced
        write of theirs under way lands before the cancel, and none lands
        after it, so the summary of the stored rows is all of them.
        ``interim_at`` is cleared: a worker summarizes them
        (``claim_cancelled``)."""
        cancel = (
            update(Run)
            .where(Run.id == run_id, Run.status.in_(_ACTIVE))
            .values(
                status=RunStatus.CANCELLED.value, finished_at=utcnow(), interim_at=None
            )
        )
        with self.engine.begin() as conn:
            lock_in_flight(conn, run_id)
            return conn.execute(cancel).rowcount == 1

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

    def stored_cover(self, run_id: str, suites: Sequence[Suite]) -> dict[str, Any]:
        """What the run's stored rows cover, for a cancelled run's page:
        ``responses`` (distinct session, round and method with a row of a
        round), the sessions with rows of every one of ``suites``
        (``complete``) and of some only (``partial``), and ``by_suite``: the
        sessions with rows of each. A chunk stores each suite's rows of its
        sessions in one transaction, so a suite covers a session whole or
        not at all."""
        from store.suite_rows import metric_filter  # with the suites' readers

        of_run = ResultRow.run_id == run_id
        responses = (
            select(ResultRow.session_id, ResultRow.round, ResultRow.method)
            .where(of_run, ResultRow.round > 0)
            .distinct()
            .subquery()
        )
        flags = [
            func.max(case((metric_filter(suite.metrics), 1), else_=0)).label(f"s{at}")
            for at, suite in enumerate(suites)
        ]
        per_session = (
            select(*flags).where(of_run).group_by(ResultRow.session_id).subquery()
        )
        columns = [per_session.c[f"s{at}"] for at in range(len(suites))]
        every = sum(columns[1:], start=columns[0]) == len(suites)  # (one at least)
        cover = select(
            func.count(),
            func.coalesce(func.sum(case((every, 1), else_=0)), 0),
            *(func.coalesce(func.sum(column), 0) for column in columns),
        ).select_from(per_session)
        with self.engine.connect() as conn:
            found = conn.execute(select(func.count()).select_from(responses))
            stored_responses = found.scalar_one()
            sessions, complete, *each = conn.execute(cover).one()
        return {
            "responses": int(stored_responses),
            "complete": int(complete),
            "partial": int(sessions) - int(complete),
            "by_suite": {
                suite.name: int(n) for suite, n in zip(suites, each, strict=True)
            },
        }
