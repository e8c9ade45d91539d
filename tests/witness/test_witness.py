"""The witness (issue 56): generated edge-case runs go through the code a
worker runs with the scripted judge, and every number they publish must
equal what the plan and the plain reference implementation say."""

from __future__ import annotations

import threading

import pytest
import requests
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from werkzeug.serving import make_server

from testing.judge_server import ScriptedJudge
from tests.conftest import stop_embedded
from tests.witness import checks, harness, labelled, plans
from tests.worker_support import create_test_app, stop_worker

GENERATED = settings(
    deadline=None,
    # a failing run is reported as generated: shrinking re-runs the pipeline
    # hundreds of times (more than five minutes on a busy machine)
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
IN_WORKER, OVER_HTTP = 200, 20  # runs a CI run generates


@pytest.fixture(scope="module")
def witness_app(tmp_path_factory):
    folder = tmp_path_factory.mktemp("witness")
    app = harness.make_app(folder)
    # 20 ms a reply: a cancel lands while calls are under way (their tokens
    # must still be counted), not only between chunks
    with ScriptedJudge(latency=0.02) as judge:
        yield app, judge, folder
    stop_worker(app)


# 50 runs a test: about 40-70 s idle, 230 s beside a busy CI (a loaded
# machine is slow, not wrong)
@pytest.mark.timeout(1500)
@pytest.mark.parametrize("protocol", plans.PROTOCOLS)
@settings(GENERATED, max_examples=IN_WORKER // len(plans.PROTOCOLS))
@given(data=st.data())
def test_a_generated_run_says_what_the_plan_implies(witness_app, protocol, data):
    """A quarter of the runs per built-in protocol (one test each, so the
    parts spread over the test workers)."""
    app, judge, folder = witness_app
    plan = data.draw(plans.plans(protocols=(protocol,)), label="plan")
    outcome = harness.run_in_worker(app, judge, plan, folder)
    checks.everything_agrees(plan, outcome)
    checks.downloads_agree(plan, outcome, *harness.downloads(app, outcome))
    checks.file_warnings_agree(plan, folder / f"{plan.nonce}.jsonl")
    if outcome.document["run"]["status"] == "cancelled":
        page = app.test_client().get(
            f"/r/{outcome.token}", headers={"Accept-Language": "en"}
        )
        checks.cancelled_page_agrees(plan, outcome, page.get_data(as_text=True))


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The app as a user starts it: served over HTTP, its supervised worker
    process, the scripted judge configured as its judge."""
    folder = tmp_path_factory.mktemp("served")
    with ScriptedJudge(batch_seconds=0.3) as judge:
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
                base_url = f"http://127.0.0.1:{server.server_port}"
                made = session.post(
                    f"{base_url}/api/v1/workspaces", json={}, timeout=60
                )
                workspace = made.json()
                # the runs so far, whose usage the expected cost reads
                history = harness.History()
                yield base_url, session, judge, folder, workspace, history
        finally:
            server.shutdown()
            stop_embedded(app)
            app.extensions["storage"].engine.dispose()


@pytest.mark.timeout(1500)
@settings(GENERATED, max_examples=OVER_HTTP)
@given(plan=plans.plans(), data=st.data())
def test_a_generated_run_served_over_http_says_what_the_plan_implies(
    served, plan, data
):
    base_url, session, judge, folder, workspace, history = served
    # one run in four through the Batch API, one in three with prompts the
    # provider's cache serves in part (an ALOE file keeps its own profiles)
    plan.batch = data.draw(st.sampled_from((False, False, False, True)), label="batch")
    plan.long_profile = plan.layout == "ours" and data.draw(
        st.sampled_from((False, False, True)), label="long profile"
    )
    outcome = harness.run_over_http(
        base_url, session, judge, plan, folder, workspace["manage_token"]
    )
    # in the workspace's history whatever the checks find (a failing
    # example is run again: the history must hold every run the app holds)
    history.append(outcome)
    checks.everything_agrees(plan, outcome)
    said = harness.estimate(base_url, session, plan, folder, workspace["manage_token"])
    checks.estimate_agrees(plan, said, history)
    page = session.get(
        f"{base_url}/r/{outcome.token}", headers={"Accept-Language": "en"}, timeout=60
    )
    checks.page_agrees(plan, outcome, page.text)
    checks.reasons_shown(page.text)
    grid = session.get(
        f"{base_url}/r/{outcome.token}/replies?metric=response_chars", timeout=60
    )
    checks.grid_agrees(plan, grid.text)
    listed = session.get(f"{base_url}/w/{workspace['token']}", timeout=60)
    checks.workspace_agrees(plan, outcome, listed.text)
    if outcome.document["run"]["status"] in ("done", "partial"):
        labelling = data.draw(labelled.labellings(plan), label="labels")
        if labelling.labels:  # people label the replies; the card is read
            page = labelled.label_run(base_url, session, outcome, plan, labelling)
            labelled.card_agrees(plan, labelling, page)
