"""Labelling in Chromium at 390 px with the keyboard only, as two annotators;
the labels reach the judge audit with the figures the ``krippendorff``
package and scipy give on the same labels."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest
from werkzeug.serving import make_server

from testing.judge_server import ScriptedJudge
from tests.browser_support import VIEWPORTS
from tests.pipeline_support import evaluate

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"


@pytest.fixture
def served(app_factory):
    with ScriptedJudge() as judge:
        app = app_factory(JUDGE_API_URL=judge.url, JUDGE_MODEL="scripted")
        document = evaluate(
            app, ROOT / "sample_data.jsonl", judge, suites=["alignment"]
        )
        run = app.extensions["storage"].runs.get_run(document["run"]["id"])
        server = make_server("127.0.0.1", 0, app, threaded=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        yield app, run, f"http://127.0.0.1:{server.server_port}"
        server.shutdown()


def label_ten(browser, url: str, name: str, keys: list[tuple[str, str]]) -> None:
    """The annotator opens their own link: their name is in it, shown, and
    there is nothing to type but the labels."""
    width, height = VIEWPORTS["phone"]
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.goto(url)
    page.wait_for_selector("[data-testid=annotator-shown]")
    assert page.text_content("[data-testid=annotator-shown]") == name
    for done, (digit, answer) in enumerate(keys):
        page.wait_for_selector(f"text={done} / 10")
        page.locator("#response").click()  # keys act on the page, not a field
        page.keyboard.press(digit)
        page.keyboard.press(answer)
        page.keyboard.press("Enter")
    page.wait_for_selector("[data-testid=label-finished]")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"labelling-done-{name}.png"))
    context.close()


def test_two_annotators_label_ten_items_with_the_keyboard(served, browser):
    import krippendorff
    from scipy import stats

    app, run, site = served
    client = app.test_client()
    made = client.post(
        f"/api/v1/runs/{run.manage_token}/annotations", json={"size": 10, "per_item": 2}
    ).get_json()
    links = {
        name: client.post(
            f"/api/v1/runs/{run.manage_token}/annotators", json={"name": name}
        ).get_json()["token"]
        for name in ("ann", "bob")
    }
    label_ten(
        browser,
        f"{site}/a/{links['ann']}?lang=en",
        "ann",
        [(str(i), "y" if i % 2 else "n") for i in range(9)] + [("m", "y")],
    )
    label_ten(
        browser,
        f"{site}/a/{links['bob']}?lang=en",
        "bob",
        [(str(1 + (i + 3) % 9), "y" if i % 3 else "n") for i in range(10)],
    )

    storage = app.extensions["storage"]
    queue = storage.annotations.queue_by_token(made["token"])
    labels = storage.annotations.labels_of(queue.id)
    assert len(labels) == 20 and {label.annotator for label in labels} == {"ann", "bob"}
    given = {(label.annotator, label.item): label.al for label in labels}
    # a digit is its tens (0 is 0), M is 100: the keys the page shows
    ann = sorted(al for (who, _), al in given.items() if who == "ann")
    assert ann == [*(10 * digit for digit in range(9)), 100]
    items = sorted({label.item for label in labels})
    data = np.array([[given[(a, i)] for i in items] for a in ("ann", "bob")], float)
    alpha = krippendorff.alpha(data, level_of_measurement="interval")
    judged = storage.annotations.judged_values(run.id, queue.items)["scripted"]
    human = [np.mean([given[("ann", i)], given[("bob", i)]]) for i in items]
    rho = stats.spearmanr(
        [judged[tuple(queue.items[i])][0] for i in items], human
    ).statistic

    from web.views.annotation_pages import service

    with app.test_request_context():
        found = service().agreement(run, queue)
    assert found["n_items"] == 10 and found["alpha_al"]["n"] == 10
    assert found["alpha_al"]["value"] == pytest.approx(alpha)
    assert found["judges"]["scripted"]["al_spearman"]["value"] == pytest.approx(rho)
    assert found["judges"]["scripted"]["n"] == 10
    page = client.get(f"/r/{run.token}?lang=en").get_data(as_text=True)
    assert "20 labels of 10 items by 2 annotators." in page
