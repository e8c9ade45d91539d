"""What a comparison across runs reads besides rows, and the stored
comparisons (``storage.comparisons``).

A comparison is asked for once (``request_comparison`` inserts it in state
``computing``), handed to a worker by the dispatcher that hands out chunks
(``claim_comparisons``), computed there and written back
(``finish_comparison``). Deleting a run deletes the stored
comparisons that read it (``store/deletion.py``); a newer comparison of the
same runs (after a rename or a retry) replaces the older one.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, delete, insert, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from core.status import ComparisonState
from store.database import Repository
from store.models import ComparisonRun, ResultRow, RunSession, StoredComparison, utcnow
from store.sql import claim_each


class ComparisonQueries(Repository):
    """Stored comparisons of runs and the reads they need."""

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

    def stored_comparison(self, key: str) -> StoredComparison | None:
        query = select(StoredComparison).where(StoredComparison.key == key)
        with self.engine.connect() as conn:
            found = conn.execute(query).first()
        return None if found is None else StoredComparison(**found._mapping)

    def request_comparison(
        self, key: str, runs_digest: str, run_ids: list[str]
    ) -> bool:
        """Insert the comparison ``computing``, not yet sent; False when it
        already exists (another request asked first)."""
        links = [
            {"comparison_key": key, "run_id": run_id, "position": position}
            for position, run_id in enumerate(run_ids)
        ]
        try:
            with self.engine.begin() as conn:
                older = StoredComparison.runs_digest == runs_digest
                _drop(conn, older & (StoredComparison.key != key))
                conn.execute(
                    insert(StoredComparison).values(
                        key=key,
                        runs_digest=runs_digest,
                        requested_at=utcnow(),
                        state=ComparisonState.COMPUTING.value,
                    )
                )
                conn.execute(insert(ComparisonRun), links)
        except IntegrityError:
            return False
        return True

    def claim_comparisons(self, sent_before: datetime) -> list[str]:
        """The comparisons to hand to a worker now: never sent, or sent
        before ``sent_before`` and still computing (their worker died). Each
        is claimed once however many dispatchers ask at the same time."""
        waiting = (StoredComparison.state == ComparisonState.COMPUTING.value) & (
            StoredComparison.sent_at.is_(None)
            | (StoredComparison.sent_at < sent_before)
        )
        with self.engine.begin() as conn:
            return claim_each(conn, StoredComparison.key, waiting, sent_at=utcnow())

    def comparison_run_ids(self, key: str) -> list[str]:
        """The runs a stored comparison reads, the baseline first."""
        query = (
            select(ComparisonRun.run_id)
            .where(ComparisonRun.comparison_key == key)
            .order_by(ComparisonRun.position)
        )
        with self.engine.connect() as conn:
            return list(conn.scalars(query))

    def finish_comparison(
        self,
        key: str,
        document: dict[str, Any] | None = None,
        failure: dict[str, Any] | None = None,
    ) -> None:
        """Store the result (or why there is none); nothing when the
        comparison was deleted meanwhile (one of its runs was)."""
        state = ComparisonState.FAILED if failure else ComparisonState.DONE
        query = (
            update(StoredComparison)
            .where(StoredComparison.key == key)
            .values(
                state=state.value,
                document=document,
                failure=failure,
                finished_at=utcnow(),
            )
        )
        with self.engine.begin() as conn:
            conn.execute(query)


def delete_comparisons_of(conn: Connection, run_id: str) -> None:
    """The stored comparisons that read the run (inside its deletion)."""
    reading = select(ComparisonRun.comparison_key).where(ComparisonRun.run_id == run_id)
    _drop(conn, StoredComparison.key.in_(reading))


def _drop(conn: Connection, which: ColumnElement[bool]) -> None:
    """Delete comparisons and their run links (explicitly: a SQLite
    connection may not enforce the foreign keys)."""
    keys = list(conn.scalars(select(StoredComparison.key).where(which)))
    if keys:
        conn.execute(
            delete(ComparisonRun).where(ComparisonRun.comparison_key.in_(keys))
        )
        conn.execute(delete(StoredComparison).where(StoredComparison.key.in_(keys)))
