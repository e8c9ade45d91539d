"""What a comparison across runs reads besides rows (mixed into ``Storage``):
which sessions and which (session, round) items a run holds."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.engine import Engine

from store.models import ResultRow, RunSession


class ComparisonQueries:
    """``Storage`` provides ``engine``."""

    engine: Engine

    def session_ids(self, run_id: str) -> set[str]:
        """Every session of the run's upload (its session index)."""
        query = select(RunSession.session_id).where(RunSession.run_id == run_id)
        with self.engine.connect() as conn:
            return set(conn.scalars(query))

    def round_keys(self, run_id: str) -> set[tuple[str, int]]:
        """(session, round) of the run's round-level rows (session-level rows
        are stored with round 0 and left out)."""
        query = (
            select(ResultRow.session_id, ResultRow.round)
            .where(ResultRow.run_id == run_id, ResultRow.round > 0)
            .distinct()
        )
        with self.engine.connect() as conn:
            return {(session_id, round_) for session_id, round_ in conn.execute(query)}
