"""Plotly figure builders from stored aggregates (no Flask).

Callers pass translated labels; figures come back as plain JSON-ready dicts
that templates embed with ``|tojson`` in a ``<script type="application/json">``
block, so nothing here is ever rendered as HTML.
"""

from __future__ import annotations

import json
from functools import lru_cache
from types import ModuleType
from typing import TYPE_CHECKING, Any

from web.presentation.chart_style import (
    AXIS,
    LAYOUT,
    RADAR_MARGIN,
    TEMPLATE,
    color,
    method_style,
    plain,
    rgba,
    title_layout,
    wrap,
)

if TYPE_CHECKING:
    from plotly.graph_objects import Figure

# plotly's Python package is imported by the builders (~0.5 s): pages that
# draw no chart, and every CLI command, never pay for it.


def _go() -> ModuleType:
    import plotly.graph_objects as go

    module: ModuleType = go  # plotly ships no types: its module is Any
    return module


def _plain(figure: Figure, title: object) -> dict[str, Any]:
    """JSON-ready figure plus ``title``: the raw text for the page heading
    (Jinja escapes it there; Plotly never sees it). Every chart is drawn
    with plotly's ``TEMPLATE``, written in as plotly writes it, built once a
    process (``LAYOUT`` names the empty template "none" meanwhile)."""
    found = json.loads(figure.to_json())
    found["layout"]["template"] = json.loads(_template_json())
    return {**found, "title": str(title)}


@lru_cache(maxsize=1)
def _template_json() -> str:
    """``TEMPLATE`` as plotly writes it into a figure's layout."""
    figure = _go().Figure(layout={"template": TEMPLATE})
    return json.dumps(json.loads(figure.to_json())["layout"]["template"])


def curve_figure(
    curves: dict[str, list[dict[str, Any]]],
    methods: list[str],
    labels: dict[str, Any],
) -> dict[str, Any] | None:
    """Mean per round with a shaded 95% CI band per method (where n > 1).
    A round left out of the curve's average (``in_average`` false: too few
    sessions) is drawn hollow, and the legend says so (``labels["left_out"]``).

    >>> points = [{"k": 1, "mean": 50.0, "n": 3, "in_average": True},
    ...           {"k": 2, "mean": 90.0, "n": 1, "in_average": False}]
    >>> found = curve_figure({"M": points}, ["M"],
    ...     {"title": "AL", "x": "k", "y": "AL", "left_out": "hollow: left out"})
    >>> found["data"][0]["marker"]["symbol"], found["data"][-1]["name"]
    (['circle', 'circle-open'], 'hollow: left out')
    """
    if not any(curves.get(method) for method in methods):
        return None
    go = _go()
    figure = go.Figure()
    left_out = False
    for index, method in enumerate(methods):
        points = curves.get(method) or []
        if not points:
            continue
        ks = [p["k"] for p in points]
        kept = [p.get("in_average", True) for p in points]
        left_out = left_out or not all(kept)
        banded = [p for p in points if p.get("ci_low") is not None]
        if banded:
            band_ks = [p["k"] for p in banded]
            figure.add_trace(
                go.Scatter(
                    x=band_ks + band_ks[::-1],
                    y=[p["ci_high"] for p in banded]
                    + [p["ci_low"] for p in banded][::-1],
                    fill="toself",
                    fillcolor=rgba(color(index), 0.15),
                    mode="lines",
                    line={"width": 0},
                    hoverinfo="skip",
                    showlegend=False,
                    legendgroup=method,
                )
            )
        style = method_style(index)
        figure.add_trace(
            go.Scatter(
                x=ks,
                y=[p["mean"] for p in points],
                mode="lines+markers",
                name=plain(method),
                legendgroup=method,
                line={"color": style["color"], "width": 2, "dash": style["dash"]},
                marker={
                    "color": style["color"],
                    "symbol": [
                        style["symbol"] if k else style["symbol"] + "-open"
                        for k in kept
                    ],
                    "size": [7 if k else 9 for k in kept],
                },
                # a band needs two points: a lone interval is an error bar
                error_y=_lone_interval(points) if len(banded) == 1 else None,
                customdata=[[p["n"]] for p in points],
                hovertemplate=f"%{{y:.2f}} (n=%{{customdata[0]}})<extra>{plain(method)}</extra>",
            )
        )
    if left_out and labels.get("left_out"):
        figure.add_trace(
            go.Scatter(
                x=[None],
                y=[None],
                mode="markers",
                marker={"symbol": "circle-open", "size": 9, "color": "#555"},
                name=plain(labels["left_out"]),
                hoverinfo="skip",
            )
        )
    figure.update_layout(
        title=title_layout(labels["title"]),
        xaxis={"title": {"text": wrap(labels["x"], AXIS)}, **_x_ticks(curves, labels)},
        yaxis={
            "title": {"text": wrap(labels["y"], AXIS)},
            "range": labels.get("range"),
        },
        **LAYOUT,
    )
    return _plain(figure, labels["title"])


def _lone_interval(points: list[dict[str, Any]]) -> dict[str, Any]:
    """The one point's interval as an error bar (the others have none).

    >>> _lone_interval([{"mean": 0.25, "ci_low": 0.05, "ci_high": 0.7}])["array"]
    [0.44999999999999996]
    """
    return {
        "type": "data",
        "symmetric": False,
        "array": [
            None if p.get("ci_high") is None else p["ci_high"] - p["mean"]
            for p in points
        ],
        "arrayminus": [
            None if p.get("ci_low") is None else p["mean"] - p["ci_low"] for p in points
        ],
        "thickness": 1.5,
        "width": 6,
    }


def _x_ticks(
    curves: dict[str, list[dict[str, Any]]], labels: dict[str, Any]
) -> dict[str, Any]:
    """A tick per round (AL(k)), or, for a sparse x such as the number of
    inter-turns (2, 5, 10, 30), a tick at each x a point has."""
    if not labels.get("x_at_points"):
        return {"dtick": 1}
    xs = sorted({p["k"] for points in curves.values() for p in points or []})
    return {"tickmode": "array", "tickvals": xs}


FILLED_RADARS = 4


def radar_figure(
    summary: dict[str, dict[str, Any]],
    methods: list[str],
    axes: list[tuple[str, str]],
    title: str,
    radial_range: tuple[float, float] | None = None,
) -> dict[str, Any] | None:
    """Per-dimension averages per method; ``axes`` = (metric id, label)."""
    if not any(
        summary.get(m, {}).get(metric) is not None
        for m in methods
        for metric, _ in axes
    ):
        return None
    go = _go()
    figure = go.Figure()
    drawn = [
        method
        for method in methods
        if any(summary.get(method, {}).get(metric) is not None for metric, _ in axes)
    ]
    # a few methods' areas read as shapes; many only hide each other
    filled = len(drawn) <= FILLED_RADARS
    for index, method in enumerate(methods):
        if method not in drawn:
            continue
        values = [summary.get(method, {}).get(metric) for metric, _ in axes]
        names = [plain(text) for _, text in axes]
        style = method_style(index)
        figure.add_trace(
            go.Scatterpolar(
                r=values + values[:1],
                theta=names + names[:1],
                name=plain(method),
                mode="lines+markers",
                line={"color": style["color"], "dash": style["dash"]},
                marker={"color": style["color"], "symbol": style["symbol"]},
                fill="toself" if filled else "none",
                fillcolor=rgba(style["color"], 0.1),
            )
        )
    # Angular labels are drawn outside the circle and push no margin: room
    # at the sides, and above the circle for the legend.
    layout = {**LAYOUT, "hovermode": "closest", "margin": RADAR_MARGIN}
    figure.update_layout(
        title=title_layout(title),
        polar={
            "radialaxis": {"range": list(radial_range) if radial_range else None},
            "domain": {"x": [0, 1], "y": [0, 0.88]},
        },
        **layout,
    )
    return _plain(figure, title)


def _finish(
    figure: Figure, title: str, y_title: str | None = None, **layout: Any
) -> dict[str, Any]:
    figure.update_layout(
        title=title_layout(title),
        yaxis={"title": {"text": wrap(y_title or "", AXIS)}},
        **{**LAYOUT, "hovermode": "closest", **layout},
    )
    return _plain(figure, title)


def bars_with_ci(
    values: dict[str, dict[str, Any]], methods: list[str], title: str, y_title: str
) -> dict[str, Any] | None:
    """One bar per method: ``values[method] = {"mean", "ci_low", "ci_high", "n"}``."""
    shown = [m for m in methods if values.get(m, {}).get("mean") is not None]
    if not shown:
        return None
    means = [values[m]["mean"] for m in shown]
    upper = [
        (values[m].get("ci_high") or values[m]["mean"]) - values[m]["mean"]
        for m in shown
    ]
    lower = [
        values[m]["mean"] - (values[m].get("ci_low") or values[m]["mean"])
        for m in shown
    ]
    go = _go()
    figure = go.Figure(
        go.Bar(
            x=[plain(m) for m in shown],
            y=means,
            marker={
                "color": [method_style(methods.index(m))["color"] for m in shown],
                "pattern": {
                    "shape": [method_style(methods.index(m))["pattern"] for m in shown]
                },
            },
            error_y={
                "type": "data",
                "array": upper,
                "arrayminus": lower,
                "visible": True,
            },
            customdata=[[values[m].get("n")] for m in shown],
            hovertemplate="%{x}: %{y:.3f} (n=%{customdata[0]})<extra></extra>",
        )
    )
    return _finish(figure, title, y_title)


def forest_plot(
    values: dict[str, dict[str, Any]], methods: list[str], title: str, x_title: str
) -> dict[str, Any] | None:
    """One point per method with its CI as a horizontal bar, and a line at 0
    (the baseline): ``values[method] = {"mean", "ci_low", "ci_high", "n"}``."""
    shown = [m for m in methods if values.get(m, {}).get("mean") is not None]
    if not shown:
        return None
    means = [values[m]["mean"] for m in shown]
    go = _go()
    figure = go.Figure(
        go.Scatter(
            x=means,
            y=[plain(m) for m in shown],
            mode="markers",
            marker={
                "size": 10,
                "color": [method_style(methods.index(m))["color"] for m in shown],
                "symbol": [method_style(methods.index(m))["symbol"] for m in shown],
            },
            error_x={
                "type": "data",
                "array": [
                    (values[m].get("ci_high") or mean) - mean
                    for m, mean in zip(shown, means, strict=True)
                ],
                "arrayminus": [
                    mean - (values[m].get("ci_low") or mean)
                    for m, mean in zip(shown, means, strict=True)
                ],
                "visible": True,
            },
            customdata=[[values[m].get("n")] for m in shown],
            hovertemplate="%{y}: %{x:.3f} (n=%{customdata[0]})<extra></extra>",
        )
    )
    figure.add_vline(x=0, line_dash="dot", line_color="#888")
    result = _finish(figure, title, showlegend=False)
    result["layout"]["xaxis"] = {
        **result["layout"].get("xaxis", {}),
        "title": {"text": wrap(x_title, AXIS)},
    }
    result["layout"]["yaxis"] = {
        **result["layout"].get("yaxis", {}),
        "title": {"text": ""},
        "autorange": "reversed",
    }
    return result


def grouped_bars(
    values: dict[str, dict[str, float]],
    methods: list[str],
    groups: list[tuple[str, str]],
    title: str,
    stacked: bool = False,
) -> dict[str, Any] | None:
    """``values[method][group] = number``; ``groups`` = (key, label). One
    trace per method (grouped) or per group (stacked by method)."""
    if not any(
        values.get(m, {}).get(key) is not None for m in methods for key, _ in groups
    ):
        return None
    go = _go()
    figure = go.Figure()
    if stacked:
        for index, (key, text) in enumerate(groups):
            figure.add_trace(
                go.Bar(
                    name=plain(text),
                    x=[plain(m) for m in methods],
                    y=[values.get(m, {}).get(key) for m in methods],
                    marker_color=color(index),
                )
            )
        return _finish(figure, title, barmode="stack")
    for index, method in enumerate(methods):
        style = method_style(index)
        figure.add_trace(
            go.Bar(
                name=plain(method),
                x=[plain(text) for _, text in groups],
                y=[values.get(method, {}).get(key) for key, _ in groups],
                marker={
                    "color": style["color"],
                    "pattern": {"shape": style["pattern"]},
                },
            )
        )
    return _finish(figure, title, barmode="group")


def heatmap(
    values: dict[str, dict[str, float]],
    methods: list[str],
    columns: list[str],
    title: str,
) -> dict[str, Any] | None:
    """Methods x columns (e.g. per-topic F1), numbers printed in the cells."""
    if not methods or not columns:
        return None
    z = [[values.get(m, {}).get(c) for c in columns] for m in methods]
    text = [["" if v is None else f"{v:.2f}" for v in row] for row in z]
    go = _go()
    figure = go.Figure(
        go.Heatmap(
            z=z,
            x=[plain(c) for c in columns],
            y=[plain(m) for m in methods],
            text=text,
            texttemplate="%{text}",
            zmin=0,
            zmax=1,
            colorscale="Blues",
        )
    )
    result = _finish(figure, title)
    # rows read top-down in the methods' order, like a table
    result["layout"]["yaxis"] = {
        **result["layout"].get("yaxis", {}),
        "autorange": "reversed",
    }
    return result


def box_plot(
    samples: dict[str, list[float]],
    methods: list[str],
    title: str,
    y_title: str,
    marks: dict[str, float] | None = None,
    mark_label: str = "",
) -> dict[str, Any] | None:
    """Distribution per method, with an optional marker per method (e.g. P95)."""
    if not any(samples.get(m) for m in methods):
        return None
    go = _go()
    figure = go.Figure()
    for index, method in enumerate(methods):
        if samples.get(method):
            figure.add_trace(
                go.Box(
                    y=samples[method],
                    name=plain(method),
                    marker={
                        "color": method_style(index)["color"],
                        "symbol": method_style(index)["symbol"],
                    },
                    boxmean=True,
                )
            )
    if marks:
        shown = [m for m in methods if m in marks and samples.get(m)]
        figure.add_trace(
            go.Scatter(
                x=[plain(m) for m in shown],
                y=[marks[m] for m in shown],
                mode="markers",
                name=plain(mark_label),
                marker={"symbol": "line-ew-open", "size": 28, "color": "#c0392b"},
            )
        )
    return _finish(figure, title, y_title)
