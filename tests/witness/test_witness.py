"""The witness (issue 56): generated edge-case runs go through the code a
worker runs with the scripted judge, and every number they publish must
equal what the plan and the plain reference implementation say."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from testing.judge_server import ScriptedJudge
from tests.witness import checks, harness, plans
from tests.worker_support import stop_worker


@pytest.fixture(scope="module")
def witness_app(tmp_path_factory):
    folder = tmp_path_factory.mktemp("witness")
    app = harness.make_app(folder)
    with ScriptedJudge() as judge:
        yield app, judge, folder
    stop_worker(app)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(plan=plans.plans())
def test_a_generated_run_says_what_the_plan_implies(witness_app, plan):
    app, judge, folder = witness_app
    outcome = harness.run_in_worker(app, judge, plan, folder)
    checks.rows_agree(plan, outcome.document)
    checks.status_agrees(plan, outcome.document)
    checks.counts_agree(plan, outcome.document)
    checks.usage_agrees(plan, outcome)
    checks.aggregates_agree(plan, outcome.document)
