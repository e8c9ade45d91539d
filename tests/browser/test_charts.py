"""Charts of a run with MAX_METHODS (32) methods, in Chromium at 390 and
1440 px: each method has its own (colour, dash, marker) in every chart of
the run, the SVG/PNG downloads draw the same series, and a click on a
legend entry (Plotly's, or the list that replaces it on a phone) hides the
method's series."""

from __future__ import annotations

import json
from contextlib import closing

import pytest

from config import DEFAULTS
from tests.browser_support import (
    LANGS,
    Tabs,
    load,
    open_fold,
    served_sample,
)

pytestmark = pytest.mark.browser
METHODS = [f"M{index:02d}" for index in range(DEFAULTS["MAX_METHODS"])]
# the charts with one series per method
LINES = ("al_curve", "nal_curve", "radar")
BARS = ("quality_components",)


def many_methods(path):
    """Three sessions of three rounds; the methods' scores apart, so every
    chart has each method's series."""
    with path.open("w", encoding="utf-8") as out:
        for session in range(3):
            rounds = [
                {
                    "round": k,
                    "user_message": f"question {k} of session {session}",
                    "responses": {
                        method: f"reply {k} by {method} [[al={40 + i + 5 * k}]]"
                        for i, method in enumerate(METHODS)
                    },
                }
                for k in (1, 2, 3)
            ]
            session_line = {
                "session_id": f"s{session}",
                "user_profile": "a student who likes chess",
                "user_personality": "curious",
                "rounds": rounds,
            }
            out.write(json.dumps(session_line) + "\n")
    return path


@pytest.fixture(scope="module")
def tabs(browser):
    """One tab per width, each test loading the dashboard afresh in it (a
    new context would cost a renderer process, ~1 s of CPU)."""
    with closing(Tabs(browser, accept_downloads=True)) as made:
        yield made


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("charts")
    data = many_methods(tmp_path / "methods32.jsonl")
    with served_sample(tmp_path, data, suites=["alignment", "quality"]) as served:
        yield served


# Each method's series of a drawn chart: {name: (colour, dash, marker)},
# read from the Plotly graph div as drawn (a bar's pattern is its dash).
STYLES = """(plot) => Object.fromEntries(plot.data.filter((t) => t.name && t.showlegend !== false)
  .map((t) => [t.name, t.type === 'bar'
    ? [t.marker.color, (t.marker.pattern || {}).shape || '', '']
    : [t.line.color, t.line.dash || 'solid', [].concat(t.marker.symbol)[0]]]))"""


def styles(page, chart: str) -> dict:
    found = page.locator(f"#chart-{chart}").evaluate(STYLES)
    return {name: tuple(style) for name, style in found.items()}


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("viewport", ["phone", "desktop"])
def test_32_methods_each_keep_one_style_in_every_chart_and_download(
    site, tabs, viewport, lang
):
    page = load(tabs(viewport), site.url(f"/r/{site.token}", lang))
    open_fold(page, "panel-alignment")
    open_fold(page, "panel-quality")
    seen = {}
    for chart in LINES + BARS:
        found = styles(page, chart)
        assert list(found) == METHODS, chart  # every method, the file's order
        assert len(set(found.values())) == len(METHODS), chart
        seen[chart] = found
    for chart in LINES[1:]:  # a method looks the same in every line chart
        assert seen[chart] == seen[LINES[0]]
    colours = {name: style[0] for name, style in seen["al_curve"].items()}
    assert {n: s[0] for n, s in seen["quality_components"].items()} == colours

    open_fold(page, "panel-alignment")  # (it closed as the other opened)
    # the download draws the chart's own series (captured as it is asked
    # for), and its SVG file holds one stroke per method
    page.evaluate(
        """() => { const real = window.Plotly.downloadImage;
          window.Plotly.downloadImage = (figure, options) => {
            window.captured = { data: figure.data, height: options.height };
            return real(figure, options); }; }"""
    )
    with page.expect_download() as download:
        page.click("button[data-chart=al_curve][data-format=svg]")
    captured = page.evaluate("() => window.captured")
    drawn = {
        t["name"]: (
            t["line"]["color"],
            t["line"].get("dash"),
            t["marker"]["symbol"][0],
        )
        for t in captured["data"]
        if t.get("name") and t.get("showlegend") is not False
    }
    assert drawn == seen["al_curve"]
    svg = download.value.path().read_text(encoding="utf-8")
    assert all(f">{method}<" in svg for method in METHODS)  # the legend's entries
    assert captured["height"] >= 24 * len(METHODS)  # room for one line each


@pytest.mark.parametrize("viewport", ["phone", "desktop"])
def test_a_click_on_a_legend_entry_hides_its_method(site, tabs, viewport):
    page = load(tabs(viewport), site.url(f"/r/{site.token}", "en"))
    open_fold(page, "panel-alignment")
    plot = page.locator("#chart-al_curve")
    hidden = """(plot) => plot.data.filter((t) => t.visible === 'legendonly')
                  .map((t) => t.name || t.legendgroup)"""
    assert plot.evaluate(hidden) == []
    # a chart narrower than 560 px lists its legend below it (HTML that
    # wraps): each entry a toggle, as an entry of Plotly's own legend is
    listed = page.locator("figure:has(#chart-al_curve) .chart-legend button")
    if listed.count():
        entry = listed.filter(has_text="M03")
    else:
        entry = plot.locator(".legend .traces", has_text="M03")
    entry.click()
    # the line and its CI band, no other method
    page.wait_for_function(
        "() => document.getElementById('chart-al_curve').data.some((t) => t.visible === 'legendonly')"
    )
    assert set(plot.evaluate(hidden)) == {"M03"}
    if listed.count():
        assert entry.get_attribute("aria-pressed") == "false"
        entry.click()  # and back
        page.wait_for_function(
            "() => !document.getElementById('chart-al_curve').data.some((t) => t.visible === 'legendonly')"
        )
