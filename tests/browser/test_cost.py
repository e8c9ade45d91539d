"""The cost the upload page shows before a run, in Chromium (issue 49): the
ceiling at first, then, once the workspace has a run of the judge, the
expected cost, within 10% of what the next run records; the batch choice
says when no batch price is set."""

from __future__ import annotations

import io
import re
import threading

import pytest
from werkzeug.serving import make_server

from testing.judge_server import ScriptedJudge
from tests import crafted
from tests.browser.test_flow import upload
from tests.pipeline_support import FAST_JUDGE

pytestmark = pytest.mark.browser
PRICE = {"input": 2.5, "output": 10.0}


@pytest.fixture
def site(app_factory):
    with ScriptedJudge() as judge:
        app = app_factory(
            JUDGE_API_URL=judge.url,
            JUDGE_MODEL="scripted",
            JUDGE_PRICES={"scripted": PRICE},
            **FAST_JUDGE,
        )
        server = make_server("127.0.0.1", 0, app, threaded=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        yield app, f"http://127.0.0.1:{server.server_port}"
        server.shutdown()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(60_000)
    yield page
    context.close()


def dollars(text: str) -> list[float]:
    return [float(found) for found in re.findall(r"US\$ ?([0-9]+(?:\.[0-9]+)?)", text)]


def test_the_upload_page_expects_the_cost_the_run_records(site, page, tmp_path):
    app, base = site
    path = crafted.write(tmp_path / "cost.jsonl", crafted.alignment_sessions())
    upload(page, base, path)  # the first run: the browser's new workspace
    page.wait_for_selector("[data-testid=run-status]", timeout=200_000)
    run = (
        app.extensions["storage"]
        .runs.find_run(page.url.split("/r/")[1].split("?")[0])
        .item
    )
    document = app.extensions["runs"].results_document(run)
    assert document["run"]["status"] == "done"
    spent = document["judge_usage"]["scripted"]["cost_usd"]
    page.goto(base + "/")
    page.set_input_files("#file", str(path))
    page.wait_for_selector("#check-result p.ok")
    estimate = page.locator("[data-testid=estimate]")
    expected, ceiling = dollars(estimate.inner_text())
    assert abs(expected - spent) <= 0.10 * spent < ceiling
    page.check("[data-testid=batch-choice]")
    assert "batch" in estimate.inner_text() and not dollars(estimate.inner_text())


BATCH_PRICE = {
    **PRICE,
    "cached_input": 1.25,
    "batch_input": 1.25,
    "batch_output": 5.0,
    "batch_cached_input": 0.625,
}


@pytest.fixture
def batch_site(app_factory):
    with ScriptedJudge() as judge:
        app = app_factory(
            JUDGE_API_URL=judge.url,
            JUDGE_MODEL="scripted",
            JUDGE_PRICES={"scripted": BATCH_PRICE},
            **FAST_JUDGE,
        )
        server = make_server("127.0.0.1", 0, app, threaded=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        yield app, f"http://127.0.0.1:{server.server_port}"
        server.shutdown()


def estimated(text: str) -> tuple[int, int]:
    """Judge calls and prompt tokens of the estimate's first sentence."""
    found = re.search(r"([0-9,]+) judge calls, about ([0-9,]+) prompt tokens", text)
    assert found, text
    return int(found[1].replace(",", "")), int(found[2].replace(",", ""))


def test_the_page_estimates_the_chosen_protocol_and_a_batch_without_the_online_cache(
    batch_site, page, tmp_path
):
    """Issue 56: after an online run whose prompts the provider's cache
    served in part, the batch forecast counts no cache savings (no batch run
    measured any) and says so; ALOE asks half the calls of the default
    protocol, and no earlier run of it gives an expected cost."""
    from testing import datagen

    app, base = batch_site
    path = datagen.write_file(tmp_path / "long.jsonl", 30_000, 16, seed=1)
    upload(page, base, path)  # online, into the browser's new workspace
    page.wait_for_selector("[data-testid=run-status]", timeout=200_000)
    token = page.url.split("/r/")[1].split("?")[0]
    run = app.extensions["storage"].runs.find_run(token).item
    used = app.extensions["runs"].results_document(run)["judge_usage"]["scripted"]
    assert used["cached_share"] > 0.3
    page.goto(base + "/")
    page.set_input_files("#file", str(path))
    page.wait_for_selector("#check-result p.ok")
    estimate = page.locator("[data-testid=estimate]")
    online = estimate.inner_text()
    assert "of them sent online" in online
    calls, tokens = estimated(online)
    page.check("[data-testid=batch-choice]")
    batch = estimate.inner_text()
    assert "counting no prompt-cache savings: none of them was sent in batch" in batch
    expected, _ceiling = dollars(batch)
    per_call = used["completion_tokens"] / used["calls"]
    uncached = (tokens * 1.25 + calls * per_call * 5.0) / 1e6  # batch prices
    assert abs(expected - uncached) <= 0.01 * uncached
    page.select_option("[data-testid=protocol-select]", "aloe")
    page.wait_for_function(
        "() => document.querySelector('[data-testid=estimate]').textContent"
        ".includes('no earlier run of this judge with this protocol')"
    )
    # the server's figures for the suites the page checks (test_budget.py:
    # they are the calls a run makes)
    client = app.test_client()

    def server_calls(**fields) -> int:
        body = {"file": (io.BytesIO(path.read_bytes()), "long.jsonl"), **fields}
        found = client.post("/api/v1/validate", data=body).get_json()
        return found["judge_calls"]["estimate"]

    assert calls == server_calls()
    assert estimated(estimate.inner_text())[0] == server_calls(protocol="aloe") < calls
