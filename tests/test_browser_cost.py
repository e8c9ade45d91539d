"""The cost the upload page shows before a run, in Chromium (issue 49): the
ceiling at first, then, once the workspace has a run of the judge, the
expected cost, within 10% of what the next run records; the batch choice
says when no batch price is set."""

from __future__ import annotations

import re
import threading

import pytest
from werkzeug.serving import make_server

from testing.judge_server import ScriptedJudge
from tests import crafted
from tests.pipeline_support import FAST_JUDGE
from tests.test_browser import upload

pytestmark = pytest.mark.browser
PRICE = {"input": 2.5, "output": 10.0}


@pytest.fixture
def site(app_factory):
    with ScriptedJudge() as judge:
        app = app_factory(JUDGE_API_URL=judge.url, JUDGE_MODEL="scripted",
                          JUDGE_PRICES={"scripted": PRICE}, **FAST_JUDGE)  # fmt: skip
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
