"""Workspaces and who may do what with a run (``storage.workspaces``).

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
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from sqlalchemy import select, update

from store import deletion
from store.database import Repository
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


class WorkspaceQueries(Repository):
    """Workspaces and the runs they hold."""

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

    def delete_workspace(self, workspace: Workspace, upload_folder: str | Path) -> None:
        """The workspace and every run in it (``store/deletion.py``)."""
        deletion.delete_workspace(self.engine, workspace, upload_folder)
