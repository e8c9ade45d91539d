"""Schema migrations: Alembic scripts in ``store/migrations``, run
programmatically (start-up, tests) or through Flask-Migrate's ``flask db``.

The first revision is the schema of the first release. A database that
release created has the tables but no ``alembic_version`` row; the first
revision then creates nothing, so ``upgrade`` brings it to the head with its
rows intact.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

if TYPE_CHECKING:
    import click
    from alembic.config import Config
    from flask import Flask
    from sqlalchemy.engine import Connection, Engine

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
# Revision files are named "<revision>_<slug>.py" with numbered revisions, so
# the head is known without loading Alembic (a test checks it agrees).
_REVISION_FILE = re.compile(r"^(\d{4})_\w+\.py$")


class _HasEngine(Protocol):
    """A storage (``Storage`` or ``LazyStorage``): its engine is all the
    migrations need."""

    @property
    def engine(self) -> Engine: ...


def alembic_config(connection: Connection | None = None) -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


def upgrade(engine: Engine, revision: str = "head") -> None:
    from alembic import command

    with engine.begin() as connection:
        command.upgrade(alembic_config(connection), revision)


def newest_revision() -> str:
    """The head revision, from the file names in ``migrations/versions``."""
    found = [
        match.group(1)
        for path in (MIGRATIONS / "versions").iterdir()
        if (match := _REVISION_FILE.match(path.name))
    ]
    return max(found)


def stored_revision(engine: Engine) -> str | None:
    """The revision recorded in the database (None: no schema or a database
    of the first release), read with plain SQL."""
    from sqlalchemy import inspect, text

    with engine.connect() as connection:
        if not inspect(connection).has_table("alembic_version"):
            return None
        found = connection.execute(
            text("SELECT version_num FROM alembic_version")
        ).scalar()
        # a text() query's result is untyped; the column is a string
        return cast("str | None", found)


def upgrade_if_needed(engine: Engine) -> bool:
    """Upgrade unless the database is already at the head (the usual start)."""
    if stored_revision(engine) == newest_revision():
        return False
    upgrade(engine)
    return True


def current_revision(engine: Engine) -> str | None:
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def head_revision() -> str:
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None
    return head


class _MigrateTarget:
    """What Flask-Migrate's ``db`` argument must offer: metadata and engine."""

    def __init__(self, storage: _HasEngine) -> None:
        from store.models import Base

        self.metadata = Base.metadata
        self.engine = storage.engine


def init_app(app: Flask, storage: _HasEngine) -> None:
    """``flask db ...`` (upgrade, downgrade, current, history, migrate ...),
    Flask-Migrate's commands, loaded when ``db`` is invoked."""
    import click

    class LazyMigrateGroup(click.Group):
        def _group(self) -> click.Group:
            from flask_migrate import Migrate
            from flask_migrate.cli import db

            if "migrate" not in app.extensions:
                Migrate(app, _MigrateTarget(storage), directory=str(MIGRATIONS))
                app.cli.commands["db"] = self  # Migrate re-registers its own
            # Flask-Migrate has no annotations: its ``db`` is a click group
            return cast(click.Group, db)

        def get_params(self, ctx: click.Context) -> list[click.Parameter]:
            # -d/--directory and -x/--x-arg
            return self._group().get_params(ctx)

        def invoke(self, ctx: click.Context) -> Any:
            self.callback = self._group().callback
            return super().invoke(ctx)

        def list_commands(self, ctx: click.Context) -> list[str]:
            return self._group().list_commands(ctx)

        def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
            return self._group().get_command(ctx, name)

    app.cli.add_command(
        LazyMigrateGroup("db", help="Database migrations (Flask-Migrate).")
    )
