"""``web/presentation/charts.py``: every figure carries plotly's
``plotly_white`` template, written in once a process (``_plain``), and is
the figure plotly gives when the template is set on each figure, as it was
(~10 ms a figure of plotly validating and copying the template)."""

from __future__ import annotations

import pytest

from web.presentation import chart_style, charts

POINTS = [
    {"k": 1, "mean": 50.0, "n": 3, "in_average": True, "ci_low": 40.0, "ci_high": 60.0},
    {"k": 2, "mean": 90.0, "n": 1, "in_average": False},
]
VALUES = {
    "A": {"mean": 0.25, "ci_low": 0.05, "ci_high": 0.7, "n": 4},
    "B": {"mean": -0.1, "ci_low": -0.3, "ci_high": 0.2, "n": 4},
}
BUILT = {
    "curve": lambda: charts.curve_figure(
        {"A": POINTS, "B": POINTS},
        ["A", "B"],
        {"title": "AL", "x": "k", "y": "AL", "left_out": "hollow"},
    ),
    "radar": lambda: charts.radar_figure(
        {"A": {"x": 1.0, "y": 2.0}, "B": {"x": 2.0, "y": 1.0}},
        ["A", "B"],
        [("x", "X"), ("y", "Y")],
        "Radar",
    ),
    "bars": lambda: charts.bars_with_ci(VALUES, ["A", "B"], "Bars", "mean"),
    "forest": lambda: charts.forest_plot(VALUES, ["A", "B"], "Forest", "Δ"),
    "grouped": lambda: charts.grouped_bars(
        {"A": {"g": 1.0, "h": 2.0}, "B": {"g": 3.0}}, ["A", "B"], [("g", "G")], "G"
    ),
    "heatmap": lambda: charts.heatmap(
        {"A": {"c": 0.5}, "B": {"c": 0.25}}, ["A", "B"], ["c"], "Heat"
    ),
    "box": lambda: charts.box_plot(
        {"A": [1.0, 2.0, 3.0], "B": [2.0, 5.0]}, ["A", "B"], "Box", "s", {"A": 2.5}
    ),
}


@pytest.mark.parametrize("name", BUILT)
def test_a_figure_is_plotly_s_with_the_template_set_on_it(name, monkeypatch):
    found = BUILT[name]()
    assert found["layout"]["template"]["layout"]  # the template, not {}
    # as it was: the template named in every figure's layout, for plotly
    named = {**chart_style.LAYOUT, "template": chart_style.TEMPLATE}
    monkeypatch.setattr(charts, "LAYOUT", named)
    assert found == BUILT[name]()
