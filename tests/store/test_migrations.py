"""Schema changes without data loss: a database created by the first release
is upgraded to the head with every row intact, on SQLite and PostgreSQL, and
the migrations build exactly the schema the models describe."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import create_engine, inspect, text

from store import migrate
from store.models import Base
from store.storage import Storage
from tests.legacy import release1_models as release1

NOW = datetime(2026, 11, 21, 5, 30, tzinfo=UTC)


def release1_database(url: str) -> None:
    """What the first release left behind: ``create_all`` and a finished run."""
    engine = create_engine(url)
    release1.Base.metadata.create_all(engine)
    with engine.begin() as conn:
        conn.execute(
            release1.Run.__table__.insert(),
            [
                {
                    "id": "r1",
                    "token": "t" * 32,
                    "status": "done",
                    "created_at": NOW,
                    "file_name": "对话日志.jsonl",
                    "file_sha256": "0" * 64,
                    "upload_id": "u1",
                    "sessions": 1,
                    "rounds": 2,
                    "methods": ["Base", "Ours"],
                    "suites": ["alignment"],
                    # bookkeeping as earlier releases kept it, among the settings
                    "options": {
                        "samples": 1,
                        "chunks": 1,
                        "call_cap": 9,
                        "reuse_key": "f" * 64,
                        "reused_from": "r0",
                        "reused_rows": 4,
                        "retry_of": "t0",
                    },
                    "done": 4,
                    "total": 4,
                    "judge_calls": 8,
                    "cache_hits": 0,
                    "prompt_tokens": 10,
                    "completion_tokens": 5,
                    "aggregates": {"summary": {"Ours": {"al_avg": 75.0}}},
                }
            ],
        )
        conn.execute(
            release1.ResultRow.__table__.insert(),
            [
                {
                    "run_id": "r1",
                    "session_id": "s1",
                    "round": k,
                    "method": m,
                    "metric": "al",
                    "sample": 0,
                    "value": 70.0 + k,
                    "status": "ok",
                    "note": None,
                    "detail": {"reasoning": "따뜻하다"},
                }
                for k in (1, 2)
                for m in ("Base", "Ours")
            ],
        )
        conn.execute(
            release1.RunChunk.__table__.insert(),
            [{"run_id": "r1", "chunk": 0, "items": 4}],
        )
        conn.execute(
            release1.RunSession.__table__.insert(),
            [
                {
                    "run_id": "r1",
                    "position": 0,
                    "session_id": "s1",
                    "start": 0,
                    "end": 99,
                }
            ],
        )
        conn.execute(
            release1.JudgeCacheEntry.__table__.insert(),
            [
                {
                    "key": "k" * 64,
                    "prompt_version": "alignment_v1",
                    "reply": "\\boxed{80}",
                    "parsed": {"score": 80.0},
                    "prompt_tokens": 3,
                    "completion_tokens": 1,
                    "created_at": NOW,
                }
            ],
        )
    engine.dispose()


def test_a_first_release_database_upgrades_with_rows_intact(any_database_url):
    release1_database(any_database_url)
    storage = Storage(any_database_url)
    assert migrate.stored_revision(storage.engine) is None  # no alembic_version yet
    storage.upgrade()
    assert migrate.stored_revision(storage.engine) == migrate.newest_revision()
    run = storage.runs.get_run_by_token("t" * 32)
    assert (run.file_name, run.status, run.judge_calls) == ("对话日志.jsonl", "done", 8)
    assert run.aggregates["summary"]["Ours"]["al_avg"] == 75.0
    # 0019: the options hold the settings alone, the bookkeeping has columns
    assert run.options == {"samples": 1}
    assert (
        run.chunks_planned,
        run.call_cap,
        run.reuse_key,
        run.reused_from,
        run.reused_rows,
    ) == (1, 9, "f" * 64, "r0", 4)
    rows = storage.rows.rows("r1")
    assert [(r.round, r.method, r.value) for r in rows] == [
        (1, "Base", 71.0),
        (1, "Ours", 71.0),
        (2, "Base", 72.0),
        (2, "Ours", 72.0),
    ]
    assert rows[0].detail == {"reasoning": "따뜻하다"}
    assert storage.chunks.finished_chunks("r1") == {0}
    assert storage.chunks.session_span("r1", "s1") == (0, 99)
    assert storage.judge_cache.cache_get(["k" * 64])["k" * 64].parsed == {"score": 80.0}
    indexes = {index["name"] for index in inspect(storage.engine).get_indexes("runs")}
    assert "ix_runs_status" in indexes
    storage.upgrade()  # a second start changes nothing
    assert len(storage.rows.rows("r1")) == 4
    storage.engine.dispose()


def test_migrations_build_exactly_the_models(any_database_url):
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    storage = Storage(any_database_url)
    storage.upgrade()
    with storage.engine.connect() as conn:
        differences = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    assert differences == []
    storage.engine.dispose()


def test_the_head_is_known_without_alembic():
    from alembic.script import ScriptDirectory

    script = ScriptDirectory.from_config(migrate.alembic_config())
    assert migrate.newest_revision() == script.get_current_head()


def test_flask_db_upgrade_creates_the_schema(app_factory, tmp_path):
    url = f"sqlite:///{tmp_path / 'fresh.sqlite3'}"
    app = app_factory(DATABASE_URL=url, DB_AUTO_UPGRADE=False)
    runner = app.test_cli_runner()
    result = runner.invoke(args=["db", "upgrade"])
    assert result.exit_code == 0, result.output
    engine = create_engine(url)
    assert migrate.stored_revision(engine) == migrate.newest_revision()
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM runs")).scalar() == 0


@pytest.mark.parametrize("auto", [True, False])
def test_start_up_upgrades_only_when_configured(app_factory, tmp_path, auto):
    url = f"sqlite:///{tmp_path / f'auto-{auto}.sqlite3'}"
    app = app_factory(DATABASE_URL=url, DB_AUTO_UPGRADE=auto)
    storage = app.extensions["storage"]
    assert not storage.ready  # made on first use
    storage.get()
    assert inspect(create_engine(url)).has_table("runs") is auto
    storage.upgrade()  # what `flask db upgrade` would do before serving


def test_processes_starting_on_a_new_database_upgrade_it_one_at_a_time(
    tmp_path, monkeypatch
):
    """A command and the worker it starts make their storage at once: one
    upgrades the new database while the other waits at the instance's lock,
    then finds the head (two upgrades at once raced: SQLite runs the DDL
    outside a transaction)."""
    import fcntl
    import threading

    import store

    url = f"sqlite:///{tmp_path / 'new.sqlite3'}"
    first, second = (store.LazyStorage(url, True, tmp_path / "l") for _ in range(2))
    other = threading.Thread(target=second.get)
    at_lock, upgrades = threading.Event(), []
    real_flock, real_upgrade = fcntl.flock, migrate.upgrade

    def flock(descriptor, operation):
        if threading.current_thread() is other:
            at_lock.set()
        real_flock(descriptor, operation)

    def upgrade(engine, revision="head"):
        upgrades.append(threading.current_thread().name)
        other.start()  # the other process starts while this one upgrades
        assert at_lock.wait(60), "the other never waited for the lock"
        real_upgrade(engine, revision)

    monkeypatch.setattr(store.fcntl, "flock", flock)
    monkeypatch.setattr(migrate, "upgrade", upgrade)
    first.get()
    other.join()
    assert upgrades == [threading.current_thread().name]  # the other found the head
    assert migrate.stored_revision(second.engine) == migrate.newest_revision()


def _described(url: str) -> dict:
    """Every table's columns (type, nullability, default), indexes, unique
    constraints and foreign keys, as the database reports them."""
    engine = create_engine(url)
    found = inspect(engine)
    described = {
        table: {
            # in any order: a migration appends a column the model may
            # declare in the middle, and the product names every column
            "columns": sorted(
                (c["name"], str(c["type"]), c["nullable"], c.get("default"))
                for c in found.get_columns(table)
            ),
            "indexes": sorted(
                (i["name"], tuple(i["column_names"]), bool(i["unique"]))
                for i in found.get_indexes(table)
            ),
            "unique": sorted(
                tuple(u["column_names"]) for u in found.get_unique_constraints(table)
            ),
            "foreign_keys": sorted(
                (tuple(f["constrained_columns"]), f["referred_table"])
                for f in found.get_foreign_keys(table)
            ),
        }
        for table in sorted(found.get_table_names())
    }
    with engine.connect() as conn:
        described["alembic_version"] = conn.execute(
            text("SELECT version_num FROM alembic_version")
        ).all()
    engine.dispose()
    return described


def test_the_tests_schema_is_the_migrated_one(tmp_path):
    """The tests skip the migrations (tests/schema_support.py: the models'
    tables, stamped at the head); what they start from is what the
    migrations build, default values and indexes included."""
    from tests import schema_support

    migrated = f"sqlite:///{tmp_path / 'migrated.sqlite3'}"
    engine = create_engine(migrated)
    migrate.upgrade(engine)
    engine.dispose()
    direct = f"sqlite:///{tmp_path / 'direct.sqlite3'}"
    schema_support.prepare(direct)
    assert _described(direct) == _described(migrated)
