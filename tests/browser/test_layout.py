"""The pages hold on a phone and a desktop in English, Chinese and Korean:
no sideways page scroll, no text box over another, chart legends clear of
the tick labels, and nothing on a page that points at another site."""

from __future__ import annotations

import pytest

from tests.browser_support import (
    LANGS,
    VIEWPORTS,
    fold_ids,
    open_fold,
    open_page,
    served_sample,
)

pytestmark = pytest.mark.browser

# Every box in the session-level grid whose text must stay clear of the others.
SCORE_BOXES = """() => [...document.querySelectorAll(
    '[data-testid=session-metrics] :is(.score-label, .score-value, .score-status, .score-note)')]
  .map((el) => { const r = el.getBoundingClientRect();
                 const own = el.closest('.response').getBoundingClientRect();
                 return {text: el.textContent.trim(), left: r.left, right: r.right,
                         top: r.top, bottom: r.bottom, response_right: own.right}; })"""

# URLs a page refers to or loads from, resolved against the page.
REFERENCES = """() => {
  const refs = [];
  for (const [selector, attribute] of [["a[href]", "href"], ["form", "action"],
      ["iframe", "src"], ["script[src]", "src"], ["link[href]", "href"],
      ["img[src]", "src"], ["[formaction]", "formaction"]]) {
    for (const el of document.querySelectorAll(selector)) {
      const value = el.getAttribute(attribute);
      if (value !== null) refs.push(new URL(value, location.href).origin);
    }
  }
  return refs;
}"""

# Pairs (legend, tick label) that overlap, per chart.
LEGEND_OVER_TICKS = """() => {
  const hits = [];
  for (const plot of document.querySelectorAll('.plot')) {
    const legend = plot.querySelector('g.legend');
    if (!legend) continue;
    const l = legend.getBoundingClientRect();
    for (const tick of plot.querySelectorAll('.xtick text, .ytick text, .g-xtitle, .g-ytitle')) {
      const t = tick.getBoundingClientRect();
      if (t.width && l.left < t.right && t.left < l.right && l.top < t.bottom && t.top < l.bottom)
        hits.push(plot.id + ': ' + tick.textContent);
    }
  }
  return hits;
}"""


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    with served_sample(tmp_path_factory.mktemp("layout")) as served:
        yield served


def overlaps(boxes: list[dict], slack: float = 0.5) -> list[tuple[str, str]]:
    found = []
    for index, a in enumerate(boxes):
        for b in boxes[index + 1 :]:
            if (
                a["left"] + slack < b["right"]
                and b["left"] + slack < a["right"]
                and a["top"] + slack < b["bottom"]
                and b["top"] + slack < a["bottom"]
            ):
                found.append((a["text"], b["text"]))
    return found


@pytest.mark.parametrize("viewport", VIEWPORTS)
@pytest.mark.parametrize("lang", LANGS)
def test_no_page_scrolls_sideways(browser, site, lang, viewport):
    for name, url in site.pages(lang).items():
        page = open_page(browser, url, VIEWPORTS[viewport])
        try:
            # as loaded, then with each of the dashboard's folds open
            for fold in ["", *fold_ids(page)]:
                if fold:
                    open_fold(page, fold)
                width, inner = page.evaluate(
                    "[document.documentElement.scrollWidth, window.innerWidth]"
                )
                assert width <= inner, f"{name} {fold} in {lang} is {width} px wide"
            assert page.locator("html").get_attribute("lang") == lang
        finally:
            page.context.close()


@pytest.mark.parametrize("lang", LANGS)
def test_panel_tables_fit_their_card_on_a_desktop(browser, site, lang):
    """At 1440 px every panel table (the pairwise suite's nine-column
    length-controlled table too) fits its card without scrolling inside it:
    headings wrap between words. Failed before (issue 58 brief item 5): the
    length-controlled table was 1534 px wide in a 1098 px box."""
    page = open_page(browser, site.pages(lang)["dashboard"], VIEWPORTS["desktop"])
    try:
        for fold in fold_ids(page):
            shown = open_fold(page, fold)
            for wrap in shown.locator(".table-wrap:has(> .panel-table)").all():
                scrolled, box = wrap.evaluate(
                    "(el) => [el.scrollWidth, el.clientWidth]"
                )
                assert scrolled <= box, f"{fold} in {lang}: {scrolled} > {box} px"
    finally:
        page.context.close()


@pytest.mark.parametrize("viewport", VIEWPORTS)
@pytest.mark.parametrize("lang", ["en", "ko"])
def test_session_metric_grid_text_never_overlaps(browser, site, lang, viewport):
    page = open_page(browser, site.pages(lang)["session"], VIEWPORTS[viewport])
    try:
        boxes = page.evaluate(SCORE_BOXES)
        assert len(boxes) > 50  # every method's session-level rows
        assert overlaps(boxes) == []
        # inside the method's own box (on a phone the methods sit side by
        # side in a row that scrolls sideways: a box may be off-screen)
        assert all(box["right"] <= box["response_right"] + 0.5 for box in boxes)
    finally:
        page.context.close()


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_chart_legends_stay_clear_of_ticks_and_titles_are_whole(
    browser, site, viewport
):
    page = open_page(browser, site.pages("zh")["dashboard"], VIEWPORTS[viewport])
    try:
        for fold in fold_ids(page):  # the charts of one fold are shown at a time
            shown = open_fold(page, fold)
            assert page.evaluate(LEGEND_OVER_TICKS) == [], fold
            for title in shown.locator(".chart-title").all():
                box = title.evaluate("(el) => [el.scrollWidth, el.clientWidth]")
                assert box[0] <= box[1], title.inner_text()  # wrapped, not cut
        assert page.locator(".plot svg.main-svg").count() >= 10
        assert page.locator(".plot .gtitle").count() == 0  # no title inside SVG
    finally:
        page.context.close()


@pytest.mark.parametrize("lang", LANGS)
def test_pages_point_at_no_other_site(browser, site, lang):
    requested: list[str] = []
    for name, url in site.pages(lang).items():
        page = open_page(browser, url)
        page.on("request", lambda request: requested.append(request.url))
        try:
            page.reload()
            page.wait_for_load_state("networkidle")
            origins = set(page.evaluate(REFERENCES))
            assert origins <= {site.base}, f"{name}: {origins}"
            assert page.locator("iframe").count() == 0
        finally:
            page.context.close()
    assert requested and all(url.startswith(site.base + "/") for url in requested)


def test_plotly_modebar_offers_no_cloud_or_share_control(browser, site):
    page = open_page(browser, site.pages("en")["dashboard"])
    try:
        for fold in fold_ids(page):  # every chart drawn
            open_fold(page, fold)
        assert page.locator(".plot").count() >= 10
        assert (
            page.locator(".plot svg.main-svg").count() >= page.locator(".plot").count()
        )
        assert page.locator(".modebar, .modebar-btn").count() == 0
        markup = page.inner_html("main")
        for word in ("Chart Studio", "Share chart", "sendDataToCloud", "plot.ly"):
            assert word not in markup
        # Our own buttons replace the modebar's image download.
        assert (
            page.locator("button[data-download]").count()
            == 2 * page.locator(".plot").count()
        )
    finally:
        page.context.close()
