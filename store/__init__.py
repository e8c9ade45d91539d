"""The results of record: models, the storage repository, uploads on disk and
the schema migrations (Alembic through Flask-Migrate).

SQLite under ``instance/`` by default, PostgreSQL when ``DATABASE_URL`` says
so. ``flask --app app db upgrade`` creates or upgrades the schema; the
embedded default runs the upgrade itself when the storage is first used.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from store.storage import Storage


class LazyStorage:
    """The app's :class:`store.storage.Storage`, built on first use.

    SQLAlchemy takes a quarter of a second to import; commands that never
    touch the database (``flask validate``, ``--help``) do not pay for it.
    Every attribute is the real storage's.
    """

    def __init__(self, url: str, auto_upgrade: bool):
        self.url = url
        self.auto_upgrade = auto_upgrade
        self._storage: Storage | None = None
        self._lock = threading.Lock()

    @property
    def ready(self) -> bool:
        """Whether the storage has been made (a command may never need it)."""
        return self._storage is not None

    def get(self) -> Storage:
        with self._lock:
            if self._storage is None:
                from store.storage import Storage

                storage = Storage(self.url)
                if self.auto_upgrade:
                    storage.upgrade()
                self._storage = storage
            return self._storage

    def __getattr__(self, name: str):
        return getattr(self.get(), name)


def init_app(app) -> LazyStorage:
    """``app.extensions["storage"]`` and the ``flask db`` commands."""
    from store import migrate

    storage = LazyStorage(app.config["DATABASE_URL"], app.config["DB_AUTO_UPGRADE"])
    app.extensions["storage"] = storage
    migrate.init_app(app, storage)
    return storage
