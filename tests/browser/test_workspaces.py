"""Workspaces through the pages in Chromium: the first upload from the home
page makes a workspace the browser remembers (listed again after a reload),
the second joins it; the workspace page lists both runs, renames one,
compares them (judge agreement of two judge models), and deletes one."""

from __future__ import annotations

import threading

import pytest
from werkzeug.serving import make_server

from pipeline.worker import execution
from testing.judge_server import ScriptedJudge
from tests import crafted
from tests.browser.test_flow import ARTIFACTS
from tests.browser_support import VIEWPORTS, open_fold

pytestmark = pytest.mark.browser
JUDGES = ["scripted", "scripted+10"]


@pytest.fixture
def site(app_factory):
    with ScriptedJudge() as judge:
        app = app_factory(
            JUDGE_API_URL=judge.url, JUDGE_MODEL="scripted", JUDGE_MODELS=JUDGES
        )
        server = make_server("127.0.0.1", 0, app, threaded=True)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        yield f"http://127.0.0.1:{server.server_port}"
        server.shutdown()


def upload_alignment(page, site: str, path, model: str) -> None:
    """Alignment only, judged by ``model``; waits for the dashboard."""
    page.goto(site + "/")
    for box in page.locator("input[name=suites]").all():
        box.set_checked(box.get_attribute("value") == "alignment")
    page.select_option("#judge-model", model)
    page.set_input_files("#file", str(path))
    page.wait_for_selector("#check-result p.ok")
    page.click("#submit")
    page.wait_for_selector("[data-testid=run-status]")


def test_workspace_list_rename_compare_delete_and_remembered_home(
    site, browser, tmp_path
):
    base = site
    path = crafted.write(tmp_path / "logs.jsonl", crafted.alignment_sessions())
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(60_000)
    try:
        upload_alignment(page, base, path, JUDGES[0])
        page.goto(base + "/")
        remembered = page.locator("[data-testid=remembered-workspace]")
        assert remembered.count() == 1
        # the next upload joins the remembered workspace
        assert page.locator("#workspace-select").input_value() != ""
        upload_alignment(page, base, path, JUDGES[1])

        page.goto(base + "/")
        page.reload()
        assert page.locator("[data-testid=remembered-workspace]").count() == 1
        page.click("[data-testid=remembered-workspace]")
        rows = page.locator("[data-testid=workspace-run]")
        assert rows.count() == 2
        # a column per suite's lead metric, each method's value, sortable
        # by the run's best value (web/presentation/run_list.py)
        header = page.locator("[data-testid=lead-column]")
        assert header.count() == 1 and header.get_attribute("data-metric") == "al_avg"
        cells = page.locator("[data-testid=lead-cell]")
        assert cells.first.locator(".lead-line").count() == 2  # Base, Ours
        assert cells.first.locator(".lead-line.best").count() == 1
        for order in ("ascending", "descending"):
            header.locator("button").click()
            assert header.get_attribute("aria-sort") == order
            best = [
                float(v)
                for v in cells.evaluate_all("cs => cs.map((c) => c.dataset.sortValue)")
            ]
            assert len(set(best)) == 2 and best == sorted(
                best, reverse=order == "descending"
            )
        for width, height in VIEWPORTS.values():  # the table fits its card
            page.set_viewport_size({"width": width, "height": height})
            table = page.locator("[data-testid=workspace-runs]")
            wide, room = table.evaluate(
                "t => [t.scrollWidth, t.parentElement.clientWidth]"
            )
            assert wide <= room, (width, wide, room)

        first = page.locator("[data-testid=manage-run]").nth(1)  # the older run
        first.locator("summary").click()
        first.locator("input[name=name]").fill("judge A")
        first.locator("[data-testid=edit-run] button").click()
        page.wait_for_selector("[data-testid=workspace-run] >> text=judge A")

        for box in page.locator("[data-testid=workspace-run] input[name=run]").all():
            box.check()
        page.click("[data-testid=compare-selected]")
        page.wait_for_selector("[data-testid=comparison-table]")
        assert "judge A/Ours" in page.inner_text("[data-testid=comparison-table]")
        open_fold(page, "agreement")  # folded as the page loads (issue 61)
        assert "judge A · scripted" in page.inner_text("[data-testid=agreement-table]")
        alpha = page.locator("[data-testid=agreement-krippendorff_alpha]").first
        assert alpha.inner_text() not in ("", "—")
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "compare-en.png"), full_page=True)

        page.go_back()
        page.wait_for_selector("[data-testid=workspace-runs]")
        doomed = page.locator("[data-testid=manage-run]").first
        doomed.locator("summary").click()
        doomed.locator("[data-testid=confirm-delete]").check()
        doomed.locator("[data-testid=delete-run]").click()
        page.wait_for_selector("[data-testid=workspace-runs]")
        assert page.locator("[data-testid=workspace-run]").count() == 1
        assert "judge A" in page.inner_text("[data-testid=workspace-runs]")
    finally:
        context.close()


def test_a_cancelled_runs_reasons_stay_in_the_browser(
    app_factory, browser, tmp_path, judge_server, monkeypatch
):
    """Issue 56: the rows table of a run cancelled before any row was stored
    said "Nothing to show." (static/tables.js wrote it over every empty
    table, the server's reason too; the empty workspace's as well)."""
    from tests.browser_support import open_fold, translated
    from tests.pipeline.worker.test_interim import cancel_after, judged_run, summarized

    app, _space, run, ctx, chunks = judged_run(app_factory, tmp_path, judge_server)
    cancel_after(monkeypatch, app, run, "alignment")
    execution.evaluate_chunk(ctx, run.id, chunks[0])
    summarized(ctx, run)
    empty = app.extensions["storage"].workspaces.create_workspace("empty")
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}"
    width, height = VIEWPORTS["phone"]
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    try:
        for lang in ("en", "zh", "ko"):
            page.goto(f"{base}/r/{run.token}?lang={lang}")
            rows = open_fold(page, "rows").locator("tr.empty-row")
            said = "The run was cancelled before any result row was stored."
            assert rows.inner_text() == translated(lang, said)
            page.goto(f"{base}/w/{empty.token}?lang={lang}")
            nothing = page.locator("[data-testid=workspace-runs] tr.empty-row")
            assert nothing.inner_text() == translated(
                lang, "No runs in this workspace yet."
            )
    finally:
        context.close()
        server.shutdown()
