"""Plotly figure builders from stored aggregates (no Flask).

Callers pass translated labels; figures come back as plain JSON-ready dicts
that templates embed with ``|tojson`` in a ``<script type="application/json">``
block, so nothing here is ever rendered as HTML.
"""

from __future__ import annotations

import json

import plotly.graph_objects as go
from plotly.colors import qualitative

PALETTE = qualitative.Plotly
LAYOUT = {
    "margin": {"l": 56, "r": 16, "t": 48, "b": 48},
    "legend": {"orientation": "h", "y": -0.2},
    "hovermode": "x unified",
    "template": "plotly_white",
    "font": {"family": "system-ui, 'Noto Sans CJK SC', 'Noto Sans CJK KR', sans-serif"},
}


def color(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def _rgba(hex_color: str, alpha: float) -> str:
    red, green, blue = (int(hex_color[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({red},{green},{blue},{alpha})"


def _plain(figure: go.Figure) -> dict:
    return json.loads(figure.to_json())


def curve_figure(
    curves: dict[str, list[dict]], methods: list[str], labels: dict
) -> dict | None:
    """Mean per round with a shaded 95% CI band per method (where n > 1)."""
    if not any(curves.get(method) for method in methods):
        return None
    figure = go.Figure()
    for index, method in enumerate(methods):
        points = curves.get(method) or []
        if not points:
            continue
        ks = [p["k"] for p in points]
        banded = [p for p in points if p.get("ci_low") is not None]
        if banded:
            band_ks = [p["k"] for p in banded]
            figure.add_trace(
                go.Scatter(
                    x=band_ks + band_ks[::-1],
                    y=[p["ci_high"] for p in banded]
                    + [p["ci_low"] for p in banded][::-1],
                    fill="toself",
                    fillcolor=_rgba(color(index), 0.15),
                    mode="lines",
                    line={"width": 0},
                    hoverinfo="skip",
                    showlegend=False,
                    legendgroup=method,
                )
            )
        figure.add_trace(
            go.Scatter(
                x=ks,
                y=[p["mean"] for p in points],
                mode="lines+markers",
                name=method,
                legendgroup=method,
                line={"color": color(index), "width": 2},
                customdata=[[p["n"]] for p in points],
                hovertemplate=f"%{{y:.2f}} (n=%{{customdata[0]}})<extra>{method}</extra>",
            )
        )
    figure.update_layout(
        title=labels["title"],
        xaxis={"title": {"text": labels["x"]}, "dtick": 1},
        yaxis={"title": {"text": labels["y"]}, "range": labels.get("range")},
        **LAYOUT,
    )
    return _plain(figure)


def radar_figure(
    summary: dict[str, dict],
    methods: list[str],
    axes: list[tuple[str, str]],
    title: str,
):
    """Per-dimension averages (0–20) per method; ``axes`` = (metric id, label)."""
    if not any(
        summary.get(m, {}).get(metric) is not None
        for m in methods
        for metric, _ in axes
    ):
        return None
    figure = go.Figure()
    for index, method in enumerate(methods):
        values = [summary.get(method, {}).get(metric) for metric, _ in axes]
        if all(value is None for value in values):
            continue
        names = [label for _, label in axes]
        figure.add_trace(
            go.Scatterpolar(
                r=values + values[:1],
                theta=names + names[:1],
                name=method,
                line={"color": color(index)},
                fill="toself",
                fillcolor=_rgba(color(index), 0.1),
            )
        )
    layout = {**LAYOUT, "hovermode": "closest"}
    figure.update_layout(
        title=title, polar={"radialaxis": {"range": [0, 20]}}, **layout
    )
    return _plain(figure)
