"""A run's session index: each session's position and its byte span in the
upload, so a page or a chunk reads one session without reading the file."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import select

from store.database import Repository
from store.models import RunSession
from store.sql import count_of_run


class SessionQueries(Repository):
    """The session index of runs."""

    def record_sessions(
        self, run_id: str, spans: Iterable[tuple[int, str, int, int]]
    ) -> None:
        entries = [
            {"run_id": run_id, "position": p, "session_id": s, "start": a, "end": b}
            for p, s, a, b in spans
        ]
        if entries:
            stmt = self._insert(RunSession).on_conflict_do_nothing(
                index_elements=["run_id", "session_id"]
            )
            with self.session.begin() as db:
                db.execute(stmt, entries)

    def sessions_page(self, run_id: str, offset: int, limit: int) -> list[str]:
        query = (
            select(RunSession.session_id)
            .where(RunSession.run_id == run_id)
            .order_by(RunSession.position)
            .offset(offset)
            .limit(limit)
        )
        with self.session() as db:
            return list(db.scalars(query))

    def count_sessions(self, run_id: str) -> int:
        return count_of_run(self.session, RunSession, run_id)

    def session_span(self, run_id: str, session_id: str) -> tuple[int, int] | None:
        query = select(RunSession.start, RunSession.end).where(
            RunSession.run_id == run_id, RunSession.session_id == session_id
        )
        with self.session() as db:
            found = db.execute(query).first()
        if not found:
            return None
        start, end = found
        return start, end
