"""Shared fixtures, after Flask's tutorial: ``app``, ``client``, ``runner``."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine, text

from app import create_app
from storage import Storage
from tests import services


@pytest.fixture
def app(tmp_path):
    app = create_app(
        {
            "TESTING": True,
            "INSTANCE_PATH": str(tmp_path / "instance"),
            "DATABASE_URL": f"sqlite:///{tmp_path / 'test.sqlite3'}",
            "UPLOAD_FOLDER": str(tmp_path / "uploads"),
            "RESULTS_FOLDER": str(tmp_path / "results"),
            "SECRET_KEY": "test",
            "REDIS_URL": None,
            "JUDGE_API_URL": None,
            "JUDGE_MODEL": None,
        }
    )
    yield app
    app.extensions["embedded_worker"].stop()


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


@pytest.fixture
def sqlite_storage(tmp_path):
    storage = Storage(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    storage.create_all()
    return storage


@pytest.fixture
def postgres_storage():
    services.require("PostgreSQL", "127.0.0.1", 5432)
    url, schema = services.postgres_schema_url()
    admin = create_engine(url)
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    storage = Storage(url, connect_args={"options": f"-csearch_path={schema}"})
    storage.create_all()
    yield storage
    storage.engine.dispose()
    with admin.begin() as conn:
        conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
    admin.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def any_storage(request):
    """The storage layer on both supported databases."""
    return request.getfixturevalue(f"{request.param}_storage")
