"""Shared by the layout and control tests in Chromium: the browser, and the
app serving sample_data.jsonl already evaluated with the scripted judge.

Under ``CI`` a missing Chromium is a failure, never a skip (as in
tests/browser/test_flow.py)."""

from __future__ import annotations

import os
import shutil
import threading
from contextlib import contextmanager
from pathlib import Path

import pytest
from babel.messages.pofile import read_po
from werkzeug.serving import make_server

from metrics import registry
from testing.judge_server import ScriptedJudge
from tests.conftest import stop_embedded
from tests.pipeline_support import base_config, evaluate
from tests.worker_support import create_test_app

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
LANGS = ("en", "zh", "ko")
VIEWPORTS = {"phone": (390, 844), "desktop": (1440, 900)}
SESSION = "ps-ko-001"  # Korean text, every suite's session-level rows


def translated(lang: str, msgid: str) -> str:
    if lang == "en":
        return msgid
    with (ROOT / "locales" / lang / "LC_MESSAGES" / "messages.po").open("rb") as po:
        return read_po(po)[msgid].string


@contextmanager
def chromium():
    if not shutil.which(CHROMIUM):
        if os.environ.get("CI"):
            pytest.fail("Debian chromium is required under CI")
        pytest.skip("chromium is not installed")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_ARGS
        )
        try:
            yield browser
        finally:
            browser.close()


class Site:
    """The served app: ``url(path, lang)`` and the evaluated run's pages."""

    def __init__(self, base: str, token: str):
        self.base, self.token = base, token

    def url(self, path: str, lang: str | None = None) -> str:
        joiner = "&" if "?" in path else "?"
        return self.base + path + (f"{joiner}lang={lang}" if lang else "")

    def pages(self, lang: str) -> dict[str, str]:
        return {
            "upload": self.url("/", lang),
            "dashboard": self.url(f"/r/{self.token}", lang),
            "session": self.url(f"/r/{self.token}/session?id={SESSION}", lang),
        }


@contextmanager
def served_sample(
    tmp_path: Path,
    data: Path = ROOT / "sample_data.jsonl",
    suites: list[str] | None = None,
    database_url: str | None = None,
    **options,
):
    """sample_data.jsonl (or ``data``) evaluated by every suite (or
    ``suites``; ``options``: the run's, e.g. ``protocol="characterbench"``),
    then served on a port (SQLite, or ``database_url``)."""
    with ScriptedJudge() as judge:
        app = create_test_app(
            {
                **base_config(tmp_path),
                "DATABASE_URL": database_url or f"sqlite:///{tmp_path / 'db.sqlite3'}",
                "REDIS_URL": None,
                "JUDGE_API_URL": judge.url,
                "JUDGE_MODEL": "scripted",
            }
        )
        try:
            # every suite, the opt-in ones (pairwise) included: their charts
            # go through the same layout checks
            every = suites or [suite.name for suite in registry.suites()]
            document = evaluate(app, data, judge, suites=every, **options)
            run = app.extensions["storage"].runs.get_run(document["run"]["id"])
            server = make_server("127.0.0.1", 0, app, threaded=True)
            thread = threading.Thread(target=server.serve_forever, daemon=True)
            thread.start()
            try:
                yield Site(f"http://127.0.0.1:{server.server_port}", run.token)
            finally:
                server.shutdown()
        finally:
            stop_embedded(app)
            app.extensions["storage"].engine.dispose()


# The charts a page draws as it loads (static/dashboard.js): those of an
# open fold, from the view to a screen below it; the others as they come near.
DRAWN_ON_LOAD = """() => [...document.querySelectorAll('.plot')].filter((plot) => {
  const box = plot.getBoundingClientRect();
  return !plot.closest('details:not([open])') && box.bottom > 0 && box.top < 2 * innerHeight;
}).map((plot) => plot.id)"""


def open_page(browser, url: str, viewport=VIEWPORTS["desktop"], **context):
    """A new context at ``viewport``; returns the page once ``url`` is
    loaded (see ``load``)."""
    return load(tab(browser, viewport, **context), url)


def tab(browser, viewport=VIEWPORTS["desktop"], **context):
    """A blank page in a new context at ``viewport``."""
    width, height = viewport
    ctx = browser.new_context(viewport={"width": width, "height": height}, **context)
    page = ctx.new_page()
    page.set_default_timeout(30_000)
    return page


class Tabs:
    """``tabs(viewport)``: one tab per width, made on first use, for checks
    that load page after page (see ``load``); ``close()`` closes them."""

    def __init__(self, browser, **context):
        self.browser, self.context, self.made = browser, context, {}

    def __call__(self, viewport: str):
        if viewport not in self.made:
            self.made[viewport] = tab(self.browser, VIEWPORTS[viewport], **self.context)
        return self.made[viewport]

    def close(self) -> None:
        for page in self.made.values():
            page.context.close()


def load(page, url: str):
    """``url`` in ``page``; returns the page once loaded (on the dashboard:
    once the charts it draws on load are drawn). Read-only checks may load
    page after page in one tab: a new context costs Chromium a renderer
    process, ~1 s of CPU against ~0.2 s for a page of ours in a tab."""
    page.goto(url)
    for plot in page.evaluate(DRAWN_ON_LOAD):  # (polled in the page, the CSP refuses)
        page.locator(f"#{plot} svg.main-svg").first.wait_for()
    # The favicon is asked for after the load: a context closed with it in
    # flight drops the connection while the test server streams the file.
    page.wait_for_load_state("networkidle")
    return page


def fold_ids(page) -> list[str]:
    """The dashboard's folds (templates/_fold.html), in page order."""
    return page.eval_on_selector_all(
        "details[data-fold]", "(all) => all.map((f) => f.id)"
    )


def open_fold(page, fold_id: str):
    """Open a fold of the dashboard as a reader does, a click on its heading
    (which closes the one open before), and scroll through it until every
    chart in it is drawn; returns the fold."""
    from playwright.sync_api import expect

    fold = page.locator(f"details#{fold_id}")
    if not fold.evaluate("(el) => el.open"):
        page.locator(f"details#{fold_id} > summary").click()
    expect(fold).to_have_js_property("open", True)
    for plot in fold.locator(".plot").all():
        plot.scroll_into_view_if_needed()
        plot.locator("svg.main-svg").first.wait_for()
    return fold
