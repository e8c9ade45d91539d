"""The witness (issue 56): generated edge-case runs go through the code a
worker runs with the scripted judge, and every number they publish must
equal what the plan and the plain reference implementation say."""

from __future__ import annotations

import threading

import pytest
import requests
from hypothesis import HealthCheck, given, settings
from werkzeug.serving import make_server

from testing.judge_server import ScriptedJudge
from tests.conftest import stop_embedded
from tests.witness import checks, harness, plans
from tests.worker_support import create_test_app, stop_worker

GENERATED = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
IN_WORKER, OVER_HTTP = 200, 20  # runs a CI run generates


@pytest.fixture(scope="module")
def witness_app(tmp_path_factory):
    folder = tmp_path_factory.mktemp("witness")
    app = harness.make_app(folder)
    with ScriptedJudge() as judge:
        yield app, judge, folder
    stop_worker(app)


@settings(GENERATED, max_examples=IN_WORKER)
@given(plan=plans.plans())
def test_a_generated_run_says_what_the_plan_implies(witness_app, plan):
    app, judge, folder = witness_app
    outcome = harness.run_in_worker(app, judge, plan, folder)
    checks.everything_agrees(plan, outcome)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The app as a user starts it: served over HTTP, its supervised worker
    process, the scripted judge configured as its judge."""
    folder = tmp_path_factory.mktemp("served")
    with ScriptedJudge() as judge:
        config = harness.settings(folder)
        config.update(
            EMBEDDED_WORKER="process", JUDGE_API_URL=judge.url, JUDGE_MODEL="judge-a"
        )
        app = create_test_app(config)
        server = make_server("127.0.0.1", 0, app, threaded=True)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            with requests.Session() as session:
                yield f"http://127.0.0.1:{server.server_port}", session, judge, folder
        finally:
            server.shutdown()
            stop_embedded(app)
            app.extensions["storage"].engine.dispose()


@settings(GENERATED, max_examples=OVER_HTTP)
@given(plan=plans.plans())
def test_a_generated_run_served_over_http_says_what_the_plan_implies(served, plan):
    base_url, session, judge, folder = served
    outcome = harness.run_over_http(base_url, session, judge, plan, folder)
    checks.everything_agrees(plan, outcome)
