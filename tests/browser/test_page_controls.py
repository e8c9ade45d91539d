"""The pages' own controls in Chromium: chart image downloads, sortable and
filterable tables, the copy-link button, the scroll position kept across
reloads, the translated file picker and problem list, and the dashboard's
folds (one click away, in the address, by keyboard) and charts drawn as they
come into view."""

from __future__ import annotations

import json
from contextlib import closing
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser_support import (
    VIEWPORTS,
    Tabs,
    fold_ids,
    load,
    open_fold,
    open_page,
    translated,
)
from web.views import assets

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def site(sample_site):
    return sample_site


@pytest.fixture(scope="module")
def tabs(browser):
    """One tab per width for the tests whose controls act in the page only
    and leave nothing a new document keeps (no storage, permission or
    address fragment): each loads the page afresh in it (a new context
    would cost a renderer process, ~1 s of CPU)."""
    with closing(Tabs(browser)) as made:
        yield made


@pytest.mark.parametrize("fmt", ["svg", "png"])
def test_chart_downloads_are_made_in_the_browser(browser, site, fmt):
    page = open_page(browser, site.pages("ko")["dashboard"], accept_downloads=True)
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    try:
        button = page.locator(f"button[data-chart=al_curve][data-format={fmt}]")
        assert button.inner_text() == fmt.upper()
        assert "AL(k)" in button.get_attribute("aria-label")
        with page.expect_download() as download:
            button.click()
        assert download.value.suggested_filename.endswith(f"-al_curve.{fmt}")
        body = Path(download.value.path()).read_bytes()
        assert body.startswith(b"<svg" if fmt == "svg" else b"\x89PNG")
        if fmt == "svg":  # the image carries the title the page shows above it
            heading = page.inner_text("#chart-title-al_curve")
            assert heading.split()[0] in body.decode("utf-8")
        assert [url for url in requested if not url.startswith("blob:")] == []
    finally:
        page.context.close()


def column_values(page, table: str, index: int) -> list[str]:
    return page.eval_on_selector_all(
        f"{table} >> tbody tr:not([hidden])",
        f"rows => rows.map(r => r.cells[{index}].textContent.trim())",
    )


def test_panel_tables_sort_by_header_and_filter(tabs, site):
    page = load(tabs("desktop"), site.pages("en")["dashboard"])
    open_fold(page, "panel-simulation")
    table = "[data-testid=panel-simulation] table.panel-table >> nth=1"
    welch = page.locator(table)
    header = welch.locator("thead th").nth(3)  # t
    assert header.locator("button.sort-button").count() == 1
    header.locator("button").click()
    assert header.get_attribute("aria-sort") == "ascending"
    shown = column_values(page, table, 3)
    numbers = [float(v.replace("\u2212", "-")) for v in shown if v != "—"]
    assert numbers == sorted(numbers) and len(numbers) > 5
    assert column_values(page, table, 3)[-1] == "—"  # blanks last
    header.locator("button").click()
    assert header.get_attribute("aria-sort") == "descending"
    assert column_values(page, table, 3)[0] != "—"

    open_fold(page, "panel-roleplay")
    almp = "[data-testid=panel-roleplay] table[data-filterable]"
    box = page.locator("[data-testid=panel-roleplay] .table-filter input")
    box.fill("ps-zh-001")
    shown = column_values(page, almp, 1)
    assert shown == ["ps-zh-001"] * 3
    box.fill("no such session")
    assert page.locator(f"{almp} tr.empty-row").inner_text() == (
        "No row matches the filter."
    )
    box.fill("")
    assert len(column_values(page, almp, 1)) == 27


@pytest.mark.parametrize("lang", ["ko", "zh"])
def test_copy_link_copies_the_absolute_url_without_the_readers_language(
    browser, site, lang
):
    """A teammate opening the link reads the page in their own language (and
    gets no language cookie from it): the copied link names none."""
    page = open_page(
        browser,
        site.pages(lang)["session"],
        permissions=["clipboard-read", "clipboard-write"],
    )
    try:
        page.click("[data-testid=copy-link]")
        status = page.locator(".copy-status")  # set once the clipboard answers
        expect(status).to_have_text(translated(lang, "Link copied"))
        copied = page.evaluate("navigator.clipboard.readText()")
        assert copied == f"{site.base}/r/{site.token}/session?id=ps-ko-001"
    finally:
        page.context.close()


def test_copy_link_without_clipboard_shows_the_url_selected(tabs, site):
    page = load(tabs("desktop"), site.pages("zh")["dashboard"])
    page.evaluate("Object.defineProperty(navigator, 'clipboard', {value: undefined})")
    page.click("[data-testid=copy-link]")
    field = page.locator("#share-url")
    assert field.is_visible()
    assert field.input_value() == f"{site.base}/r/{site.token}"
    selected = page.evaluate(
        "document.getSelection().toString() || "
        "[document.activeElement.selectionStart,"
        " document.activeElement.selectionEnd].join()"
    )
    assert selected in (field.input_value(), f"0,{len(field.input_value())}")


def test_scroll_position_survives_the_baseline_select_and_pager(browser, site):
    page = open_page(browser, site.pages("en")["dashboard"], VIEWPORTS["phone"])
    try:
        open_fold(page, "comparison")
        page.locator("#baseline").scroll_into_view_if_needed()
        page.evaluate("window.scrollBy(0, -200)")
        before = page.evaluate("window.scrollY")
        with page.expect_navigation():
            page.select_option("#baseline", "Ours")
        page.wait_for_load_state("load")
        assert "baseline=Ours" in page.url
        assert page.locator("details#comparison").evaluate("(el) => el.open")
        assert abs(page.evaluate("window.scrollY") - before) < 40

        open_fold(page, "rows")
        pager = page.locator("#rows .pager a").first
        pager.scroll_into_view_if_needed()
        before = page.evaluate("window.scrollY")
        with page.expect_navigation():
            pager.click()
        page.wait_for_load_state("load")
        assert "page=2" in page.url
        assert page.locator("details#rows").evaluate("(el) => el.open")
        assert abs(page.evaluate("window.scrollY") - before) < 40
    finally:
        page.context.close()


@pytest.mark.parametrize("lang", ["zh", "ko"])
def test_file_picker_and_line_labels_are_translated(browser, site, lang, tmp_path):
    page = open_page(browser, site.pages(lang)["upload"], VIEWPORTS["phone"])
    try:
        picker = page.locator("label[for=file]")
        assert translated(lang, "Choose a file") in picker.inner_text()
        assert translated(lang, "No file chosen") in picker.inner_text()
        box = page.locator("#file").bounding_box()  # the browser's own text:
        assert box["width"] <= 1 and box["height"] <= 1  # visually hidden
        page.focus("#file")  # still reachable from the keyboard
        assert page.evaluate("document.activeElement.id") == "file"

        bad = tmp_path / "bad.jsonl"
        bad.write_text('{"session_id": "a"}\n[1]\n', encoding="utf-8")
        page.set_input_files("#file", str(bad))
        assert page.inner_text("#chosen-file") == "bad.jsonl"
        page.wait_for_selector("#check-result .problems .where")
        client_labels = page.eval_on_selector_all(
            "#check-result .where", "els => els.map(e => e.textContent)"
        )
        server_label = translated(lang, "line %(line)s") % {"line": 2}
        assert server_label in client_labels
        strings = json.loads(page.text_content("#i18n"))
        assert strings["line"] == translated(lang, "line %(line)s") % {"line": "{line}"}
    finally:
        page.context.close()


def test_the_dashboard_fits_four_screens_and_each_fold_is_one_click_away(tabs, site):
    """One fold open at a time (the first, as loaded); the navigation opens
    any other with one click, names it in the address and marks it."""
    page = load(tabs("desktop"), site.pages("en")["dashboard"])
    assert page.evaluate("document.documentElement.scrollHeight") <= 4 * 900
    folds = fold_ids(page)
    links = page.locator("[data-testid=section-nav] a")
    assert [link.get_attribute("href") for link in links.all()] == [
        f"#{fold}" for fold in folds
    ]
    assert len(folds) >= 10 and open_folds(page) == [folds[0]]
    assert "#" not in page.url  # the page as loaded keeps a bare address
    for index, fold in enumerate(folds):
        links.nth(index).click()
        # the fold opens on the hashchange event, which comes after
        expect(links.nth(index)).to_have_attribute("aria-current", "true")
        assert open_folds(page) == [fold]
        assert page.url.endswith(f"#{fold}")
        assert page.locator("[data-testid=section-nav] a[aria-current]").count() == 1
        top = page.locator(f"details#{fold}").evaluate(
            "(el) => el.getBoundingClientRect().top"
        )
        assert 0 <= top < 900 - 60  # its heading in view (at the top, or the page ends)
    page.go_back()  # the address's fold again
    expect(page.locator(f"details#{folds[-2]}")).to_have_js_property("open", True)
    assert open_folds(page) == [folds[-2]]


def test_a_link_opens_its_fold_and_the_keyboard_opens_and_closes_them(browser, site):
    page = open_page(
        browser, site.pages("en")["dashboard"] + "#rows", VIEWPORTS["phone"]
    )
    try:
        assert open_folds(page) == ["rows"]  # a teammate's link to the rows
        assert page.evaluate("window.scrollY") > 0
        page.focus("details#sessions > summary")
        page.keyboard.press("Enter")
        expect(page.locator("details#sessions")).to_have_js_property("open", True)
        # the address follows on the fold's toggle event, which comes after
        page.wait_for_function("() => location.hash === '#sessions'")
        assert open_folds(page) == ["sessions"]
        assert page.locator(".session-list a").first.is_visible()
        page.keyboard.press("Space")
        expect(page.locator("details#sessions")).to_have_js_property("open", False)
        page.wait_for_function("() => !location.hash")  # ci29 read it too early
        assert open_folds(page) == [] and "#" not in page.url
    finally:
        page.context.close()


def test_charts_are_drawn_as_they_come_into_view_with_every_trace_type(tabs, site):
    page = load(tabs("desktop"), site.pages("en")["dashboard"])
    problems: list[str] = []

    def console(message) -> None:
        if message.type == "error":
            problems.append(message.text)

    def failed(error) -> None:
        problems.append(str(error))

    page.on("console", console)
    page.on("pageerror", failed)
    try:
        assert page.locator("#chart-al_curve svg.main-svg").count() > 0
        assert page.locator("#panel-slots svg.main-svg").count() == 0  # a closed fold
        built = assets.CHARTS_JS.exists()
        bundle = (
            "/vendor/charts/" if built else f"/vendor/plotly-{assets.PLOTLY_VERSION}"
        )
        assert page.locator(f"script[src^='{bundle}']").count() == 1
        for fold in fold_ids(page):
            open_fold(page, fold)
        drawn = page.eval_on_selector_all(
            ".plot",
            "(plots) => plots.map((p) => p._fullData.map((t) => [t.type, !!t._module]))",
        )
        types = {kind for traces in drawn for kind, _ in traces}
        assert {"scatter", "scatterpolar", "bar", "heatmap", "box"} <= types
        assert all(known for traces in drawn for _, known in traces)
        assert problems == []
    finally:  # the tab serves the next test
        page.remove_listener("console", console)
        page.remove_listener("pageerror", failed)


def open_folds(page) -> list[str]:
    return page.eval_on_selector_all(
        "details[data-fold]", "(all) => all.filter((f) => f.open).map((f) => f.id)"
    )
