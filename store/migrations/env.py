"""Alembic environment: the connection comes from the caller (``store.migrate``)
or, under ``flask db``, from the app's storage engine."""

from __future__ import annotations

from typing import TYPE_CHECKING

from alembic import context

from store.models import Base

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection


def run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        render_as_batch=True,  # SQLite alters tables by copying them
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def main() -> None:
    connection = context.config.attributes.get("connection")
    if connection is not None:
        run(connection)
        return
    from flask import current_app

    engine = current_app.extensions["storage"].engine
    if context.is_offline_mode():  # ``flask db upgrade --sql``: print the SQL
        context.configure(
            url=engine.url, target_metadata=Base.metadata, literal_binds=True
        )
        with context.begin_transaction():
            context.run_migrations()
        return
    with engine.begin() as connection:
        run(connection)


main()
