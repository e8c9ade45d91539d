"""Workspaces and who may do what with a run (mixed into ``Storage``).

Two kinds of links. A *view* token (a run's ``token``, a workspace's
``token``) shows; a *manage* token changes: cancel, retry, rename, tag,
comment, delete. Each is 24 random bytes (192 bits), drawn independently, so
one never reveals the other. A run made before manage tokens existed has
none: its one token keeps every right it had (it could cancel and retry) and
may also delete, since nobody else could.

Lookups answer ``Access(item, can_manage)``, so a page or an endpoint asks
one question and the rule lives here.
"""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from sqlalchemy import select, update
from sqlalchemy.engine import Engine
from sqlalchemy.orm import sessionmaker

from store.models import Run, Workspace

Item = TypeVar("Item", Run, Workspace)
EDITABLE_RUN_FIELDS = ("name", "tags", "comment")


def new_token() -> str:
    """Tokens: 24 random bytes (192 bits), URL-safe, never sequential."""
    return secrets.token_urlsafe(24)


@dataclass(frozen=True)
class Access(Generic[Item]):
    item: Item
    can_manage: bool


class WorkspaceQueries:
    """``Storage`` provides ``engine``, ``session`` and ``_insert``."""

    engine: Engine
    session: sessionmaker
    _insert: Callable[..., Any]  # the dialect's INSERT with ON CONFLICT

    def create_workspace(self, name: str = "") -> Workspace:
        workspace = Workspace(
            id=uuid.uuid4().hex, token=new_token(), manage_token=new_token(), name=name
        )
        with self.session.begin() as db:
            db.add(workspace)
        return workspace

    def rename_workspace(self, workspace_id: str, name: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(
                update(Workspace).where(Workspace.id == workspace_id).values(name=name)
            )

    def get_workspace(self, workspace_id: str) -> Workspace | None:
        with self.session() as db:
            return db.get(Workspace, workspace_id)

    def find_workspace(self, token: str) -> Access[Workspace] | None:
        query = select(Workspace).where(
            (Workspace.token == token) | (Workspace.manage_token == token)
        )
        with self.session() as db:
            found = db.scalars(query).first()
        if found is None:
            return None
        return Access(found, found.manage_token == token)

    def workspace_runs(self, workspace_id: str) -> list[Run]:
        query = (
            select(Run)
            .where(Run.workspace_id == workspace_id)
            .order_by(Run.created_at.desc())
        )
        with self.session() as db:
            return list(db.scalars(query))

    def find_run(self, token: str) -> Access[Run] | None:
        """The run a view or manage token opens, and whether it may change it."""
        query = select(Run).where((Run.token == token) | (Run.manage_token == token))
        with self.session() as db:
            found = db.scalars(query).first()
        if found is None:
            return None
        legacy = found.manage_token is None  # an earlier release's run
        return Access(found, legacy or found.manage_token == token)

    def update_run_fields(self, run_id: str, **fields) -> None:
        """Rename, tag or comment a run (only ``EDITABLE_RUN_FIELDS``)."""
        unknown = set(fields) - set(EDITABLE_RUN_FIELDS)
        if unknown:
            raise ValueError(f"not editable: {sorted(unknown)}")
        if fields:
            with self.engine.begin() as conn:
                conn.execute(update(Run).where(Run.id == run_id).values(**fields))
