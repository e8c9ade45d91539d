"""Runs: made at submit, read by every page, moved through their states.

A run's ``token`` opens it for viewing and its ``manage_token`` for
changing it (``store/workspaces.py`` says why there are two); its claims
before it ends are in ``store/interim.py``.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import func, select, update

from core.status import ACTIVE_RUN, RunStatus
from store.database import Repository
from store.deletion import Deleted, delete_run
from store.models import Run, utcnow
from store.progress import add_to_run
from store.workspaces import EDITABLE_RUN_FIELDS, Access, new_token

UNFINISHED = tuple(ACTIVE_RUN)


class RunQueries(Repository):
    """Making, finding, changing and deleting runs."""

    def create_run(self, **fields: Any) -> Run:
        """A new run with its view ``token`` and its ``manage_token``."""
        fields.setdefault("manage_token", new_token())
        run = Run(id=uuid.uuid4().hex, token=new_token(), **fields)
        with self.session.begin() as db:
            db.add(run)
        return run

    def get_run(self, run_id: str) -> Run | None:
        with self.session() as db:
            return db.get(Run, run_id)

    def run_state(self, run_id: str) -> tuple[str, int, int] | None:
        """(status, done, total): what a poll of a run's progress reads, in
        one small query (the whole run through the ORM cost ~10x its CPU)."""
        query = select(Run.status, Run.done, Run.total).where(Run.id == run_id)
        with self.engine.connect() as conn:
            found = conn.execute(query).first()
        return None if found is None else (found[0], found[1], found[2])

    def get_run_by_token(self, token: str) -> Run | None:
        with self.session() as db:
            return db.scalars(select(Run).where(Run.token == token)).first()

    def active_retries(self, run_id: str) -> int:
        """Retries of a run that are still queued or running."""
        query = select(func.count()).where(
            Run.retry_of == run_id, Run.status.in_(UNFINISHED)
        )
        with self.engine.connect() as conn:
            return conn.execute(query).scalar_one()

    def unfinished_runs(self, created_before: datetime | None = None) -> list[Run]:
        query = select(Run).where(Run.status.in_(UNFINISHED))
        if created_before is not None:
            query = query.where(Run.created_at < created_before)
        with self.session() as db:
            return list(db.scalars(query.order_by(Run.created_at)))

    def set_stall(self, run_id: str, stall: dict[str, Any]) -> None:
        """Record why a running run stopped moving (``pipeline/stalls.py``);
        its next move clears it (``store.progress.add_to_run``)."""
        running = (Run.id == run_id) & (Run.status == RunStatus.RUNNING.value)
        with self.session.begin() as db:
            db.execute(update(Run).where(running).values(stall=stall))

    def set_status(self, run_id: str, status: str, **fields: Any) -> None:
        if status not in UNFINISHED:
            fields.setdefault("finished_at", utcnow())
        with self.session.begin() as db:
            db.execute(
                update(Run).where(Run.id == run_id).values(status=status, **fields)
            )

    def add_counters(self, run_id: str, **increments: int) -> None:
        """Atomic ``SET x = x + n`` so concurrent workers never lose an update
        (judge counters per model included, ``store/progress.py``)."""
        with self.engine.begin() as conn:
            add_to_run(conn, run_id, **increments)

    def update_run(self, run_id: str, **fields: Any) -> None:
        """Bookkeeping a worker writes (``update_run_fields`` is the user's)."""
        with self.session.begin() as db:
            db.execute(update(Run).where(Run.id == run_id).values(**fields))

    def find_run(self, token: str) -> Access[Run] | None:
        """The run a view or manage token opens, and whether it may change it."""
        query = select(Run).where((Run.token == token) | (Run.manage_token == token))
        with self.session() as db:
            found = db.scalars(query).first()
        if found is None:
            return None
        legacy = found.manage_token is None  # an earlier release's run
        return Access(found, legacy or found.manage_token == token)

    def update_run_fields(self, run_id: str, **fields: Any) -> None:
        """Rename, tag or comment a run (only ``EDITABLE_RUN_FIELDS``)."""
        unknown = set(fields) - set(EDITABLE_RUN_FIELDS)
        if unknown:
            raise ValueError(f"not editable: {sorted(unknown)}")
        if fields:
            with self.engine.begin() as conn:
                conn.execute(update(Run).where(Run.id == run_id).values(**fields))

    def delete_run(self, run: Deleted, upload_folder: str | Path) -> None:
        """The run and all it owns (``store/deletion.py``)."""
        delete_run(self.engine, run, upload_folder)
