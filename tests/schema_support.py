"""The tests' SQLite databases start with the schema already in place.

The product creates or upgrades its schema at start (``store.migrate``, 27
Alembic revisions). Run for every test that makes an app or a storage, those
revisions cost 0.35-1 s each time on this machine, most of it SQLite's commit
after each DDL statement. Here the schema the models describe is created once
per test process (``create_all``, stamped at the head, as ``flask db stamp``
would) and copied, a millisecond, wherever a test's app or storage will open a
new SQLite file. The product's start-up still runs and finds the head.

The migrations themselves are tested once per database in
tests/store/test_migrations.py: the upgrade from the first release's schema with its
rows intact, and that the migrated schema equals the models (alembic's
``compare_metadata`` finds no difference), on SQLite and PostgreSQL.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
import threading
from pathlib import Path

_lock = threading.Lock()
_template: Path | None = None
# where the template is made: pytest's temporary folder of the session
# (tests/conftest.py sets it; pytest removes old ones), else a folder of its
# own removed at exit
folder: Path | None = None


def create_schema(url: str) -> None:
    """The models' tables in an empty database, stamped at the head (what
    the migrations would build; a database with tables is left alone)."""
    from alembic import command
    from sqlalchemy import create_engine, inspect

    import store.storage  # noqa: F401  (every repository's models on Base.metadata)
    from store import migrate
    from store.models import Base

    engine = create_engine(url)
    try:
        with engine.begin() as connection:
            if inspect(connection).get_table_names():
                return
            Base.metadata.create_all(connection)
            command.stamp(migrate.alembic_config(connection), "head")
    finally:
        engine.dispose()


def _build_template() -> Path:
    where = folder
    if where is None:
        where = Path(tempfile.mkdtemp(prefix="schema-template-"))
        atexit.register(shutil.rmtree, where, ignore_errors=True)
    path = where / "schema.sqlite3"
    create_schema(f"sqlite:///{path}")
    return path


def template() -> Path:
    """The per-process SQLite file with the models' schema at the head."""
    global _template
    with _lock:
        if _template is None:
            _template = _build_template()
        return _template


def sqlite_file(url: str) -> Path | None:
    """The file of a ``sqlite:///`` URL (None: another database, or memory)."""
    prefix = "sqlite:///"
    if not url.startswith(prefix):
        return None
    path = url.removeprefix(prefix).split("?", 1)[0]
    return Path(path) if path and path != ":memory:" else None


def prepare(url: str) -> None:
    """Give a new database the schema at the head: a new SQLite file is a
    copy of the template, an empty PostgreSQL schema gets ``create_all``
    (0.4 s against 1.4 s for the migrations); an existing SQLite file, a
    database with tables, SQLite in memory or in a missing folder are left
    as they are."""
    if url.startswith("postgresql"):
        create_schema(url)
        return
    path = sqlite_file(url)
    if path is None or path.exists() or not path.parent.is_dir():
        return  # a folder that is missing stays missing: the product says so
    shutil.copyfile(template(), path)


def prepare_for_app(settings: dict) -> None:
    """What ``create_test_app`` does before the app starts: a new database
    the app would upgrade at start (SQLite by default, any with
    ``DB_AUTO_UPGRADE=True``; config.py's rule) gets the schema directly. An
    app told not to upgrade finds the database as the product would."""
    url = settings.get("DATABASE_URL")
    auto = settings.get("DB_AUTO_UPGRADE")
    if auto is None and url:
        auto = url.startswith("sqlite")
    if url and auto:
        prepare(url)
