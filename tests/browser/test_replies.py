"""The replies grid in Chromium (issue 48): a panel's scores side by side,
filters and order applied by the server, and a judge's score opening the
exact prompt and raw reply in a dialog, escaped, at 390 and 1440 px."""

from __future__ import annotations

import json
import threading
from contextlib import closing
from pathlib import Path

import pytest
from werkzeug.serving import make_server

from testing.judge_server import ScriptedJudge
from tests.browser_support import LANGS, VIEWPORTS, Tabs, tab
from tests.conftest import app_settings, stop_embedded
from tests.pipeline_support import evaluate
from tests.worker_support import create_test_app

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
MARKUP = '<img src=x onerror="window.hacked=1"><b>bold</b>'
PANEL = ["scripted", "scripted+10"]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The sample with markup in one reply, judged by a panel of two; one
    run for the module (its tests only read it)."""
    tmp_path = tmp_path_factory.mktemp("replies")
    lines = (ROOT / "sample_data.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["rounds"][0]["responses"]["Base"]["text"] += " " + MARKUP
    path = tmp_path / "replies.jsonl"
    path.write_text("\n".join([json.dumps(first), *lines[1:3]]) + "\n", "utf-8")
    with ScriptedJudge() as judge:
        app = create_test_app(
            app_settings(
                tmp_path,
                JUDGE_API_URL=judge.url,
                JUDGE_MODEL="scripted",
                JUDGE_MODELS=PANEL,
            )
        )
        try:
            document = evaluate(
                app, path, judge, suites=["alignment", "quality"], judge_models=PANEL
            )
            run = app.extensions["storage"].runs.get_run(document["run"]["id"])
            server = make_server("127.0.0.1", 0, app, threaded=True)
            threading.Thread(target=server.serve_forever, daemon=True).start()
            yield run, first["session_id"], f"http://127.0.0.1:{server.server_port}"
            server.shutdown()
        finally:
            stop_embedded(app)
            app.extensions["storage"].engine.dispose()


@pytest.fixture(scope="module")
def tabs(browser):
    """One tab per width for the tests that only read the grid (a new
    context would cost a renderer process, ~1 s of CPU)."""
    with closing(Tabs(browser)) as made:
        yield made


def open_grid(page, url: str):
    page.goto(url)
    page.wait_for_selector("[data-testid=replies-grid]")
    return page


def shown_values(page, metric: str, judge: str) -> list[float]:
    return page.locator(
        f"[data-testid=grid-score][data-metric={metric}][data-judge='{judge}'] a"
    ).evaluate_all("(links) => links.map((a) => parseFloat(a.textContent))")


def test_the_grid_filters_sorts_and_opens_the_exchange(served, browser):
    run, session_id, base = served
    page = open_grid(tab(browser), f"{base}/r/{run.token}/replies?lang=en")
    lines = page.locator("[data-testid=grid-line]")
    total = lines.count()
    assert total > 2
    # a panel: each line shows both judges' al
    for judge in PANEL:
        assert len(shown_values(page, "al", judge)) == total
    # filters and order go through the server
    page.select_option("[data-testid=grid-method]", "Ours")
    page.select_option("[data-testid=grid-judge]", "scripted")
    page.select_option("[data-testid=grid-order]", "high")
    page.click("[data-testid=grid-filters] button[type=submit]")
    page.wait_for_url("**order=high**")
    methods = lines.evaluate_all("(rows) => rows.map((r) => r.dataset.method)")
    assert methods and set(methods) == {"Ours"}
    values = shown_values(page, "al", "scripted")
    assert values == sorted(values, reverse=True)

    # the markup in a reply is text, in the grid and in the judge's prompt
    page.goto(f"{base}/r/{run.token}/replies?session_id={session_id}&lang=en")
    line = page.locator("[data-testid=grid-line][data-round='1'][data-method=Base]")
    assert "<b>bold</b>" in line.locator(".grid-reply").inner_text()
    line.locator(
        "[data-testid=grid-score][data-metric=al][data-judge='scripted+10'] a"
    ).click()
    dialog = page.locator("[data-testid=exchange-dialog]")
    dialog.wait_for(state="visible")
    prompt = dialog.locator("[data-testid=exchange-prompt]").all_inner_texts()
    assert any(MARKUP in text for text in prompt), "the exact prompt, as text"
    assert dialog.locator("[data-testid=exchange-reply]").first.inner_text().strip()
    assert (
        "scripted+10"
        in dialog.locator("[data-testid=exchange-item] h3").first.inner_text()
    )
    assert page.evaluate("window.hacked") is None, "no markup ran"
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "replies-exchange-1440.png"))
    page.keyboard.press("Escape")
    dialog.wait_for(state="hidden")
    page.screenshot(path=str(ARTIFACTS / "replies-1440.png"), full_page=True)
    page.context.close()


@pytest.mark.parametrize("lang", LANGS)
def test_the_grid_fits_a_phone_and_a_desktop(served, tabs, lang):
    run, _session, base = served
    for name, viewport in VIEWPORTS.items():
        page = open_grid(tabs(name), f"{base}/r/{run.token}/replies?lang={lang}")
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= viewport[0], (name, width)
        card = page.locator("[data-testid=replies-grid]")
        inner = card.evaluate("(el) => [el.scrollWidth, el.clientWidth]")
        table = page.locator(".replies-table").evaluate(
            "(el) => el.getBoundingClientRect().width"
        )
        if name == "phone":
            assert table <= inner[1], "each reply is a card on a phone"
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"replies-{lang}-{viewport[0]}.png"))


def test_a_panel_s_grid_shows_the_length_once_and_the_file_s_order(served, tabs):
    """Issue 56: the response length is no judge's score (once per reply,
    no judge, no link), and "as in the file" keeps Base, RAG, Ours."""
    run, session_id, base = served
    page = open_grid(tabs("desktop"), f"{base}/r/{run.token}/replies?lang=en")
    lines = page.locator("[data-testid=grid-line]")
    lengths = page.locator("[data-testid=grid-score][data-metric=response_chars]")
    assert lengths.count() == lines.count() > 0
    assert lengths.locator("a").count() == 0
    assert set(
        lengths.evaluate_all("(cells) => cells.map((c) => c.dataset.judge)")
    ) == {""}
    first = lines.evaluate_all(
        "(rows) => rows.filter((r) => r.dataset.round === '1')"
        ".map((r) => [r.dataset.session, r.dataset.method])"
    )
    in_the_file = ["Base", "RAG", "Ours"]  # by name: Base, Ours, RAG
    assert [m for s, m in first if s == session_id] == run.methods == in_the_file
