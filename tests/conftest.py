"""Shared fixtures, after Flask's tutorial: ``app``, ``client``, ``runner``."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
import redis
from sqlalchemy import create_engine, text

import config
from store.storage import Storage
from testing import schedule
from testing.judge_server import ScriptedJudge
from tests import schema_support, services
from tests.pipeline_support import (
    FAST_JUDGE,
    GENEROUS_RATE_LIMITS,
    Embedded,
    Redis,
    RedisDeployment,
    base_config,
)
from tests.worker_support import create_test_app, stop_worker

# The fast loop (`make test-fast`): units, contracts and doctests, no servers.
# A test is an integration test, and left to `make check`, when it needs a
# service or a browser, is marked slow, asks (through any fixture) for one of
# the fixtures below, which build apps, workers, judges or databases, or sits
# in a module that starts them itself (a scripted judge, an HTTP server, a
# subprocess, an app through create_test_app, a run through pipeline_support).
INTEGRATION_MARKERS = ("slow", "browser", "redis", "postgres")
INTEGRATION_FIXTURES = frozenset(
    {
        "app_factory",
        "embedded_app",
        "worker_process_app",
        "deployment",
        "web_app",
        "redis_deployment",
        "judge_server",
        "browser",
        "sample_site",
        "evaluated_copy",
        "postgres_url",
    }
)
INTEGRATION_NAMES = (
    "ScriptedJudge",
    "make_server",
    "subprocess",
    "create_test_app",
    "create_app",
    "evaluate",
    "submit",
    "wait_for",
    "harness",
    "upload",
    "wait_final",
)


def is_integration(item: pytest.Item) -> bool:
    if any(item.get_closest_marker(name) for name in INTEGRATION_MARKERS):
        return True
    if INTEGRATION_FIXTURES.intersection(getattr(item, "fixturenames", ())):
        return True
    module = getattr(item, "module", None)
    return module is not None and any(
        hasattr(module, name) for name in INTEGRATION_NAMES
    )


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--record-durations",
        metavar="PATH",
        help="write each test module's time (setup, call, teardown) as JSON "
        "for the workers' order (testing/schedule.py; `make durations`)",
    )


def pytest_configure(config: pytest.Config) -> None:
    path = config.getoption("--record-durations")
    # on the controller only: it sees every worker's reports
    if path and not hasattr(config, "workerinput"):
        config.pluginmanager.register(DurationRecorder(Path(path)))


def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> None:
    for item in items:
        if is_integration(item):
            item.add_marker(pytest.mark.integration)
    worker = getattr(config, "workerinput", None)
    # every worker sorts its (identical) collection the same way, so the
    # controller sees one collection; work stealing splits it in blocks
    if worker is not None and config.getoption("dist") == "worksteal":
        order = schedule.balanced_order(
            [item.nodeid for item in items],
            worker["workercount"],
            schedule.load_durations(),
        )
        position = {nodeid: index for index, nodeid in enumerate(order)}
        items.sort(key=lambda item: position[item.nodeid])


class DurationRecorder:
    """Sums each module's test phases as the controller receives them."""

    def __init__(self, path: Path):
        self.path = path
        self.seconds: dict[str, float] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        module = schedule.module_of(report.nodeid)
        self.seconds[module] = self.seconds.get(module, 0.0) + report.duration

    def pytest_sessionfinish(self) -> None:
        schedule.write_durations(self.seconds, self.path)


@pytest.fixture(scope="session", autouse=True)
def _schema_template_folder(tmp_path_factory):
    """The tests' schema template lives in pytest's temporary folder."""
    schema_support.folder = tmp_path_factory.mktemp("schema")


def app_settings(tmp_path, **overrides) -> dict:
    """``app_factory``'s settings: temporary storage under ``tmp_path``."""
    return {
        "TESTING": True,
        "INSTANCE_PATH": str(tmp_path / "instance"),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'test.sqlite3'}",
        "UPLOAD_FOLDER": str(tmp_path / "uploads"),
        "RESULTS_FOLDER": str(tmp_path / "results"),
        "SECRET_KEY": "test",
        "REDIS_URL": None,
        "JUDGE_API_URL": None,
        "JUDGE_MODEL": None,
        # the Celery worker in this process (tests/worker_support.py);
        # tests/pipeline/worker/test_worker_process.py runs the supervised child
        "EMBEDDED_WORKER": "none",
        **GENEROUS_RATE_LIMITS,
        **overrides,
    }


@pytest.fixture
def app_factory(tmp_path):
    """Build apps on temporary storage; every one is shut down afterwards."""
    made = []

    def make(**overrides):
        app = create_test_app(app_settings(tmp_path, **overrides))
        made.append(app)
        return app

    yield make
    for app in made:
        shut_down(app)


def shut_down(app) -> None:
    stop_embedded(app)
    if app.extensions["storage"].ready:
        app.extensions["storage"].engine.dispose()


class EvaluatedRuns:
    """Runs evaluated once a session, each test given its own copy.

    Evaluating the sample costs seconds of CPU; a test that reads or changes
    one finished run gets a copy of the database and folders the evaluation
    left (``app_factory``'s layout), so nothing a test changes reaches
    another. The copies keep the run's id and tokens, so the pages and
    figures this process keeps per run are emptied for each test: no page
    built for another test's copy is served."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.made: dict[str, str] = {}

    def copy(self, name: str, into: Path, evaluate: Callable[..., str]) -> str:
        """The run id ``evaluate(make)`` returns, ``make(**settings)`` its
        ``app_factory``, with its storage copied into the folder ``into``
        (an ``app_factory`` app opens it)."""
        source = self.folder / name
        if name not in self.made:
            source.mkdir()
            made = []

            def make(**settings: Any) -> Any:
                made.append(create_test_app(app_settings(source, **settings)))
                return made[-1]

            try:
                self.made[name] = evaluate(make)
            finally:
                for app in made:
                    shut_down(app)
        into.mkdir(parents=True, exist_ok=True)
        with (
            closing(sqlite3.connect(source / "test.sqlite3")) as stored,
            closing(sqlite3.connect(into / "test.sqlite3")) as copied,
        ):
            stored.backup(copied)  # a consistent copy, WAL or not
        for folder in ("uploads", "results"):
            if (source / folder).exists():
                shutil.copytree(source / folder, into / folder, dirs_exist_ok=True)
        return self.made[name]


@pytest.fixture(scope="session")
def evaluated_runs(tmp_path_factory):
    return EvaluatedRuns(tmp_path_factory.mktemp("evaluated"))


@pytest.fixture
def evaluated_copy(evaluated_runs, tmp_path, monkeypatch):
    """``copy(name, evaluate)``: the run id of a once-evaluated run, copied
    into this test's ``app_factory`` storage; the per-process page caches
    start empty (EvaluatedRuns)."""
    from web.presentation import panels
    from web.presentation.single_flight import SingleFlight
    from web.views import compare, final_pages, pages

    monkeypatch.setattr(final_pages, "PAGES", SingleFlight(size=64, previous=False))
    parts = SingleFlight()
    monkeypatch.setattr(pages, "RESULT_PARTS", parts)
    monkeypatch.setattr(compare, "RESULT_PARTS", parts)
    monkeypatch.setattr(panels, "BUILT", SingleFlight(64))

    def copy(name: str, evaluate: Callable[..., str]) -> str:
        return evaluated_runs.copy(name, tmp_path, evaluate)

    return copy


def stop_embedded(app) -> None:
    """Cancel what is still running so the worker's warm shutdown is quick and
    no thread outlives the test."""
    storage = app.extensions["storage"]
    for run in storage.runs.unfinished_runs() if storage.ready else ():
        storage.runs.set_status(run.id, "cancelled")
    app.extensions["watchdog"].stop()
    stop_worker(app)
    app.extensions["judge_pool"].shutdown()


@pytest.fixture
def app(app_factory):
    return app_factory()


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


@pytest.fixture
def sqlite_storage(tmp_path):
    url = f"sqlite:///{tmp_path / 'store.sqlite3'}"
    schema_support.prepare(url)  # the schema directly: tests/store/test_migrations.py
    storage = Storage(url)
    storage.upgrade()  # at the head already: what the product's start finds
    return storage


@pytest.fixture
def postgres_url():
    """A URL to a throwaway PostgreSQL schema (dropped afterwards)."""
    services.require("PostgreSQL", "127.0.0.1", 5432)
    url, schema = services.postgres_schema_url()
    admin = create_engine(url)
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    yield f"{url}?options=-csearch_path%3D{schema}"
    with admin.begin() as conn:
        conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
    admin.dispose()


@pytest.fixture
def sqlite_url(tmp_path):
    return f"sqlite:///{tmp_path / 'store.sqlite3'}"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def any_database_url(request):
    """An empty database on each supported engine."""
    return request.getfixturevalue(f"{request.param}_url")


@pytest.fixture
def postgres_storage(postgres_url):
    schema_support.prepare(postgres_url)
    storage = Storage(postgres_url)
    storage.upgrade()  # at the head already
    yield storage
    storage.engine.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def any_storage(request):
    """The storage layer on both supported databases."""
    return request.getfixturevalue(f"{request.param}_storage")


@pytest.fixture
def judge_server():
    # far past FAST_JUDGE's 2 s timeout: [[fault=timeout]] times out even on
    # a machine so busy that the client's timer fires seconds late (at 3 s,
    # beside two busy CPU loops, a reply once came in before it fired)
    with ScriptedJudge(timeout_sleep=12.0) as server:
        yield server


@pytest.fixture
def embedded_app(tmp_path):
    app = create_test_app(
        {
            **base_config(tmp_path),
            "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
            "REDIS_URL": None,
        }
    )
    yield app
    stop_embedded(app)


@pytest.fixture
def worker_process_app(tmp_path):
    """The embedded default: evaluation in a supervised worker process."""
    app = create_test_app(
        {
            **base_config(tmp_path),
            "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
            "REDIS_URL": None,
            "EMBEDDED_WORKER": "process",
        }
    )
    yield app
    stop_embedded(app)


@pytest.fixture
def deployment_env():
    """Extra worker environment; a test module overrides this fixture."""
    return {}


@pytest.fixture
def redis_deployment(tmp_path, deployment_env):
    """Web side in this process; one worker process; Redis db 15; a PG schema."""
    services.require("Redis", "127.0.0.1", 6379)
    services.require("PostgreSQL", "127.0.0.1", 5432)
    with redis.Redis.from_url(services.REDIS_URL) as client:
        client.flushdb()
    url, schema = services.postgres_schema_url()
    admin = create_engine(url)
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    env = {
        "REDIS_URL": services.REDIS_URL,
        "DATABASE_URL": f"{url}?options=-csearch_path%3D{schema}",
        "UPLOAD_FOLDER": str(tmp_path / "uploads"),
        "SECRET_KEY": "test",
        "CELERY_VISIBILITY_TIMEOUT_S": "5",
        **{name: str(value) for name, value in FAST_JUDGE.items()},
        **deployment_env,
    }
    app = create_test_app({**base_config(tmp_path), **config.from_environ(env)})
    # what `flask db upgrade` does, directly (tests/schema_support.py)
    schema_support.prepare(env["DATABASE_URL"])
    deployment = RedisDeployment(app, env, tmp_path / "worker.log")
    deployment.start_worker()
    yield deployment
    deployment.stop_all()
    app.extensions["storage"].engine.dispose()
    with admin.begin() as conn:
        conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
    admin.dispose()


@pytest.fixture(
    params=[
        "embedded",
        pytest.param("redis", marks=[pytest.mark.redis, pytest.mark.postgres]),
    ]
)
def deployment(request, tmp_path, deployment_env):
    """The drills' two modes: the embedded default's supervised Celery
    worker on the local broker, and a Celery worker on Redis."""
    if request.param == "redis":
        yield Redis(request.getfixturevalue("redis_deployment"))
        return
    settings = {
        **base_config(tmp_path),
        **FAST_JUDGE,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "REDIS_URL": None,
        "EMBEDDED_WORKER": "process",
        **config.from_environ(deployment_env),
    }
    app = create_test_app(settings)
    yield Embedded(app)
    stop_worker(app)
    app.extensions["storage"].engine.dispose()


@pytest.fixture(
    params=[
        "embedded",
        pytest.param("redis", marks=[pytest.mark.redis, pytest.mark.postgres]),
    ]
)
def web_app(request):
    """The two deployment modes the product ships: embedded (no Redis, the
    supervised worker process on the local broker) and team mode (a Celery
    worker on Redis, PostgreSQL). The tests' in-process worker
    (``embedded_app``, tests/worker_support.py) runs the same Celery worker
    and serves the other tests; it is not a third mode to repeat these in."""
    if request.param == "embedded":
        return request.getfixturevalue("worker_process_app")
    return request.getfixturevalue("redis_deployment").app


@pytest.fixture(scope="module")
def browser():
    """Debian chromium through Playwright, one per test module (each test
    works in its own context or a module's tab), see
    ``tests/browser_support.py``: a failure under CI when it is missing.

    Not one per test process, though a launch costs ~1.2 s of CPU: while
    Playwright's sync API is started, its event loop is the thread's running
    loop, and every later test of the process that calls ``asyncio.run``
    (the judge client's, the keeper's) failed with "cannot be called from a
    running event loop" (fresh-clone CI of 5a289dc). A module's browser
    tests run together, so the loop ends with them."""
    from tests.browser_support import chromium

    with chromium() as launched:
        yield launched


@pytest.fixture(scope="session")
def sample_site(tmp_path_factory):
    """sample_data.jsonl evaluated by every suite and served, once per test
    process: the layout and control tests in tests/browser only read it."""
    from tests.browser_support import served_sample

    with served_sample(tmp_path_factory.mktemp("sample")) as served:
        yield served
