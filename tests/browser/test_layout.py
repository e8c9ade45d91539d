"""The pages hold on a phone and a desktop in English, Chinese and Korean:
no sideways page scroll, no text box over another, chart legends clear of
the tick labels, and nothing on a page that points at another site.

Each page is walked once per language and width (loaded, then each of the
dashboard's folds opened in turn, which draws every chart), in one tab per
width, and each test reads what it checks from that walk, as it read it
from its own walk before (18 page loads instead of 37, and the charts drawn
in 6 walks instead of 12)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from tests.browser_support import (
    LANGS,
    VIEWPORTS,
    fold_ids,
    load,
    open_fold,
    tab,
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


# What the checks read of a page as shown, ``foldId`` (if any) open: the
# page's width against the view's, the open fold's panel tables and chart
# titles (their full width against their box).
SHOWN = """(foldId) => {
  const fold = foldId ? document.getElementById(foldId) : null;
  const within = (selector) => (fold ? [...fold.querySelectorAll(selector)] : []);
  return {
    width: [document.documentElement.scrollWidth, window.innerWidth],
    tables: within('.table-wrap:has(> .panel-table)').map((el) => [el.scrollWidth, el.clientWidth]),
    titles: within('.chart-title').map((el) => [el.innerText, el.scrollWidth, el.clientWidth]),
  };
}"""

# Counted once every fold was opened (every chart drawn).
DRAWN = {
    "plots": ".plot",
    "svg": ".plot svg.main-svg",
    "svg_titles": ".plot .gtitle",
    "modebar": ".modebar, .modebar-btn",
    "downloads": "button[data-download]",
}


@dataclass
class Walk:
    """A page as a reader goes through it: as loaded, then (the dashboard)
    with each fold opened in turn, the one before closing."""

    lang: str | None
    references: set[str]  # the origins, as loaded
    iframes: int
    score_boxes: list[dict]
    shown: list[tuple[str, dict]]  # ("", SHOWN) as loaded, then (fold, SHOWN)
    legend_hits: list[tuple[str, list[str]]]  # (fold, LEGEND_OVER_TICKS)
    drawn: dict[str, int]
    markup: str  # <main>'s, every fold opened
    requested: list[str]  # every URL the page asked for, from the first


class Tab:
    """One page per width that walks every page of ours in turn: each
    walk a new document (a new context would cost a renderer process)."""

    def __init__(self, browser, viewport):
        self.page = tab(browser, viewport)
        self.requested: list[str] = []
        self.page.on("request", lambda request: self.requested.append(request.url))

    def walk(self, url: str) -> Walk:
        self.requested.clear()
        page = load(self.page, url)
        references = set(page.evaluate(REFERENCES))
        iframes = page.locator("iframe").count()
        boxes = page.evaluate(SCORE_BOXES)
        shown, legend_hits = [("", page.evaluate(SHOWN, None))], []
        for fold in fold_ids(page):
            open_fold(page, fold)
            shown.append((fold, page.evaluate(SHOWN, fold)))
            legend_hits.append((fold, page.evaluate(LEGEND_OVER_TICKS)))
        drawn = {name: page.locator(css).count() for name, css in DRAWN.items()}
        lang = page.locator("html").get_attribute("lang")
        markup = page.inner_html("main")
        return Walk(
            lang,
            references,
            iframes,
            boxes,
            shown,
            legend_hits,
            drawn,
            markup,
            list(self.requested),
        )


@pytest.fixture(scope="module")
def site(sample_site):
    return sample_site


@pytest.fixture(scope="module")
def walked(browser, site):
    """``walked(page, lang, viewport)``: the page's walk, made when a test
    first asks for it."""
    done: dict[tuple[str, str, str], Walk] = {}
    tabs: dict[str, Tab] = {}

    def walked_page(name: str, lang: str, viewport: str = "desktop") -> Walk:
        if (name, lang, viewport) not in done:
            if viewport not in tabs:
                tabs[viewport] = Tab(browser, VIEWPORTS[viewport])
            walk = tabs[viewport].walk(site.pages(lang)[name])
            done[name, lang, viewport] = walk
        return done[name, lang, viewport]

    yield walked_page
    for each in tabs.values():
        each.page.context.close()


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
def test_no_page_scrolls_sideways(walked, site, lang, viewport):
    for name in site.pages(lang):
        shown = walked(name, lang, viewport)
        # as loaded, then with each of the dashboard's folds open
        for fold, state in shown.shown:
            width, inner = state["width"]
            assert width <= inner, f"{name} {fold} in {lang} is {width} px wide"
        assert shown.lang == lang


@pytest.mark.parametrize("lang", LANGS)
def test_panel_tables_fit_their_card_on_a_desktop(walked, lang):
    """At 1440 px every panel table (the pairwise suite's nine-column
    length-controlled table too) fits its card without scrolling inside it:
    headings wrap between words. Failed before (issue 58 brief item 5): the
    length-controlled table was 1534 px wide in a 1098 px box."""
    shown = walked("dashboard", lang, "desktop").shown
    assert len(shown) > 1  # every fold opened
    for fold, state in shown:
        for scrolled, box in state["tables"]:
            assert scrolled <= box, f"{fold} in {lang}: {scrolled} > {box} px"


@pytest.mark.parametrize("viewport", VIEWPORTS)
@pytest.mark.parametrize("lang", ["en", "ko"])
def test_session_metric_grid_text_never_overlaps(walked, lang, viewport):
    boxes = walked("session", lang, viewport).score_boxes
    assert len(boxes) > 50  # every method's session-level rows
    assert overlaps(boxes) == []
    # inside the method's own box (on a phone the methods sit side by
    # side in a row that scrolls sideways: a box may be off-screen)
    assert all(box["right"] <= box["response_right"] + 0.5 for box in boxes)


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_chart_legends_stay_clear_of_ticks_and_titles_are_whole(walked, viewport):
    shown = walked("dashboard", "zh", viewport)
    for fold, hits in shown.legend_hits:  # the charts of one fold at a time
        assert hits == [], fold
    for _fold, state in shown.shown:
        for title, scrolled, box in state["titles"]:
            assert scrolled <= box, title  # wrapped, not cut
    assert shown.drawn["svg"] >= 10
    assert shown.drawn["svg_titles"] == 0  # no title inside SVG


@pytest.mark.parametrize("lang", LANGS)
def test_pages_point_at_no_other_site(walked, site, lang):
    requested: list[str] = []
    for name in site.pages(lang):
        shown = walked(name, lang)
        assert shown.references <= {site.base}, f"{name}: {shown.references}"
        assert shown.iframes == 0
        requested += shown.requested
    assert requested and all(url.startswith(site.base + "/") for url in requested)


def test_plotly_modebar_offers_no_cloud_or_share_control(walked):
    shown = walked("dashboard", "en")  # every chart drawn
    assert shown.drawn["plots"] >= 10
    assert shown.drawn["svg"] >= shown.drawn["plots"]
    assert shown.drawn["modebar"] == 0
    for word in ("Chart Studio", "Share chart", "sendDataToCloud", "plot.ly"):
        assert word not in shown.markup
    # Our own buttons replace the modebar's image download.
    assert shown.drawn["downloads"] == 2 * shown.drawn["plots"]
