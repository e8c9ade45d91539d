"""The judge budget's counters (``storage.budget``): calls are reserved
before they go out, against the run's cap and, when the operator sets
``WORKSPACE_DAILY_JUDGE_CALLS``, against its workspace's count of the day
(UTC). Each is one guarded ``UPDATE`` (``... WHERE reserved + n <= cap``),
so workers on every machine share the counts and none can pass a cap. The
run's row is locked before the workspace's, always, so reservations cannot
deadlock; a block the workspace cannot take is rolled back from the run.
"""

from __future__ import annotations

from sqlalchemy import select, update
from sqlalchemy.engine import Connection

from core.caps import DAILY_CAP, RUN_CAP, Daily
from store.database import Repository
from store.models import Run, WorkspaceCalls


class BudgetQueries(Repository):
    """The workspace's judge-call ledger: reservations against caps."""

    def reserve_calls(
        self, run_id: str, cap: int, wanted: int, daily: Daily | None = None
    ) -> tuple[int, int, str | None]:
        """Take up to ``wanted`` judge calls before they go out: ``(granted,
        calls left after, the note of the cap that refused or None)``. When
        ``wanted`` no longer fits, one call is tried."""
        refused = RUN_CAP
        for size in dict.fromkeys((wanted, 1)):
            with self.engine.connect() as conn, conn.begin() as transaction:
                reserved = conn.execute(
                    update(Run)
                    .where(Run.id == run_id, Run.calls_reserved + size <= cap)
                    .values(calls_reserved=Run.calls_reserved + size)
                    .returning(Run.calls_reserved)
                ).scalar()
                if reserved is None:
                    refused = RUN_CAP
                    continue
                left = cap - reserved
                if daily is not None:
                    used = self._reserve_daily(conn, daily, size)
                    if used is None:
                        transaction.rollback()
                        refused = DAILY_CAP
                        continue
                    left = min(left, daily.cap - used)
                return size, left, None
        return 0, 0, refused

    def _reserve_daily(self, conn: Connection, daily: Daily, size: int) -> int | None:
        conn.execute(
            self._insert(WorkspaceCalls)
            .values(workspace_id=daily.workspace_id, day=daily.day, reserved=0)
            .on_conflict_do_nothing(index_elements=["workspace_id", "day"])
        )
        counted = WorkspaceCalls.reserved
        return conn.execute(
            update(WorkspaceCalls)
            .where(
                WorkspaceCalls.workspace_id == daily.workspace_id,
                WorkspaceCalls.day == daily.day,
                counted + size <= daily.cap,
            )
            .values(reserved=counted + size)
            .returning(counted)
        ).scalar()

    def release_calls(
        self, run_id: str, unused: int, daily: Daily | None = None
    ) -> None:
        """Give back reserved calls that never went out (a chunk's rest), to
        the run and to the workspace's day they were taken from."""
        if not unused:
            return
        with self.engine.begin() as conn:
            conn.execute(
                update(Run)
                .where(Run.id == run_id)
                .values(calls_reserved=Run.calls_reserved - unused)
            )
            if daily is not None:
                conn.execute(
                    update(WorkspaceCalls)
                    .where(
                        WorkspaceCalls.workspace_id == daily.workspace_id,
                        WorkspaceCalls.day == daily.day,
                    )
                    .values(reserved=WorkspaceCalls.reserved - unused)
                )

    def workspace_calls(self, daily: Daily) -> int:
        """The calls the workspace's runs reserved on the day."""
        query = select(WorkspaceCalls.reserved).where(
            WorkspaceCalls.workspace_id == daily.workspace_id,
            WorkspaceCalls.day == daily.day,
        )
        with self.engine.connect() as conn:
            return conn.execute(query).scalar() or 0

    def calls_reserved_by_chain(self, run_id: str) -> int:
        """Judge calls reserved by the run, the run it retried and every
        retry of either (one upload's budget, however often it is retried)."""
        with self.engine.connect() as conn:
            root = run_id
            while parent := conn.execute(
                select(Run.retry_of).where(Run.id == root)
            ).scalar():
                root = parent
            total, frontier = 0, [root]
            seen = set(frontier)
            total += (
                conn.execute(select(Run.calls_reserved).where(Run.id == root)).scalar()
                or 0
            )
            while frontier:
                found = conn.execute(
                    select(Run.id, Run.calls_reserved).where(Run.retry_of.in_(frontier))
                ).all()
                frontier = [rid for rid, _ in found if rid not in seen]
                seen.update(frontier)
                total += sum(n for rid, n in found if rid in frontier)
            return total
