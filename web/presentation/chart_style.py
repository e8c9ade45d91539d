"""The look of the Plotly figures: colours, the shared layout, and text
that goes into a figure (escaped, since Plotly renders a subset of HTML in
labels, and wrapped into lines for titles drawn in images)."""

from __future__ import annotations

import unicodedata
from typing import Any

# Okabe & Ito's colour-blind-safe palette (Wong, Nature Methods 8:441,
# 2011) without its yellow, unreadable as a line on white. Seven colours
# repeat from the eighth method on: each method also has its own dash (a
# new one every seven methods) and marker, so the (colour, dash, marker)
# of the first 7 x len(DASHES) = 35 methods (MAX_METHODS is 32) are unique.
PALETTE = [
    "#0072B2",  # blue
    "#D55E00",  # vermillion
    "#009E73",  # bluish green
    "#CC79A7",  # reddish purple
    "#E69F00",  # orange
    "#56B4E9",  # sky blue
    "#000000",  # black
]
DASHES = ["solid", "dash", "dot", "dashdot", "longdash"]
# Filled shapes: their "-open" form marks a point left out of an average.
MARKERS = [
    "circle",
    "square",
    "diamond",
    "triangle-up",
    "triangle-down",
    "x",
    "cross",
    "star",
]
# A bar has no dash: its fill pattern takes the dash's place.
PATTERNS = ["", "/", ".", "x", "-"]

# The page shows each title as an HTML heading above its chart (it wraps at
# any width and is never cut); the figure keeps a wrapped copy for images.
# The legend sits above the plot: below it, rotated category ticks ran under
# it, because Plotly sizes the bottom margin by the larger of the two pushes.
TEMPLATE = "plotly_white"  # every chart's plotly template
LAYOUT = {
    "margin": {"l": 48, "r": 12, "t": 8, "b": 40},
    "legend": {
        "orientation": "h",
        "x": 0,
        "xanchor": "left",
        "y": 1.02,
        "yanchor": "bottom",
    },
    "hovermode": "x unified",
    # charts._plain writes plotly's TEMPLATE here, built once: plotly
    # validated and copied the whole template for every figure (~8 ms a
    # figure). "none" (empty), or plotly adds its default template.
    "template": "none",
    "font": {"family": "system-ui, 'Noto Sans CJK SC', 'Noto Sans CJK KR', sans-serif"},
}
RADAR_MARGIN = {"l": 64, "r": 64, "t": 8, "b": 36}
AXIS = 34  # columns per line of an axis title: a y title spans ~300 px


def color(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def method_style(index: int) -> dict[str, str]:
    """How the method at ``index`` of a run's methods (the file's order) is
    drawn in every chart of the run: a colour, a line dash, a marker and a
    bar pattern.

    >>> method_style(0)
    {'color': '#0072B2', 'dash': 'solid', 'symbol': 'circle', 'pattern': ''}
    >>> method_style(7)
    {'color': '#0072B2', 'dash': 'dash', 'symbol': 'star', 'pattern': '/'}
    >>> len({tuple(method_style(i).values()) for i in range(32)})
    32
    """
    group = index // len(PALETTE) % len(DASHES)
    return {
        "color": color(index),
        "dash": DASHES[group],
        "symbol": MARKERS[index % len(MARKERS)],
        "pattern": PATTERNS[group],
    }


def rgba(hex_color: str, alpha: float) -> str:
    red, green, blue = (int(hex_color[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({red},{green},{blue},{alpha})"


def plain(text: object) -> str:
    """Text for a figure, shown as it is: Plotly interprets a subset of HTML
    in labels (``<a href>``, ``<b>``, ``<br>``), so ``<`` and ``>`` of
    uploaded names are escaped and render literally.

    >>> plain('<a href="https://evil.example">x</a>')
    '&lt;a href="https://evil.example"&gt;x&lt;/a&gt;'
    """
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


CLOSING = set("）】」』》，。、：；！？)]}”’")


def _breakable(char: str) -> bool:
    """Chinese and Japanese text may break between any two wide characters;
    Korean separates words with spaces and must not break inside one."""
    wide = unicodedata.east_asian_width(char) in ("W", "F")
    return wide and not unicodedata.name(char, "").startswith("HANGUL")


def _columns(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in ("W", "F") else 1 for c in text)


def wrap(text: object, width: int = 56) -> str:
    """Figure text in lines of about ``width`` columns (wide characters count
    two) joined by ``<br>``, each line escaped with :func:`plain`.

    >>> wrap("NVCS: style similarity to the sample dialogues", 20)
    'NVCS: style<br>similarity to the<br>sample dialogues'
    >>> wrap("按轮次的对齐度（95% 置信区间）", 12)
    '按轮次的对齐<br>度（95% 置信<br>区间）'
    >>> wrap("라운드별 정렬 수준 <b>", 12)
    '라운드별<br>정렬 수준<br>&lt;b&gt;'
    """
    tokens: list[str] = []  # words, spaces and single breakable characters
    for char in str(text):
        last = tokens[-1] if tokens else " "
        joins = char in CLOSING or not (_breakable(char) or _breakable(last[-1]))
        if char != " " and last != " " and joins:
            tokens[-1] += char  # closing punctuation never starts a line
        else:
            tokens.append(char)
    lines: list[str] = []
    line = ""
    for token in tokens:
        if token != " " and line.strip() and _columns(line + token) > width:
            lines.append(line.rstrip())
            line = token
        else:
            line += token
    lines.append(line.rstrip())
    return "<br>".join(plain(part) for part in lines if part)


def title_layout(text: object) -> dict[str, Any]:
    """The title drawn in downloaded images (the page draws its own)."""
    return {
        "text": wrap(text),
        "x": 0,
        "xanchor": "left",
        "yref": "container",
        "y": 0.98,
        "yanchor": "top",
        "automargin": True,
    }
