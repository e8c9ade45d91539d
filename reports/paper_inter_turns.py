"""A derived label's success rate by number of inter-turns (filler turns
between the preference and the question; PrefEval's accuracy curve) for the
paper exports: one row per (method, inter-turns) with the rate, its Wilson
95% interval, n, the replies left unscored and each label's count
(``curves.label_rate``, ``metrics/suites/checks.py``).

>>> curves = {"label_rate": {"M": [{"k": 2, "mean": 0.25, "n": 4, "ci_low": 0.0456,
...     "ci_high": 0.6994, "unscored": 1, "labels": {"correct": {"n": 1, "share": 0.25},
...     "unhelpful": {"n": 3, "share": 0.75}}}]}}
>>> print(to_markdown(curves, ["M"]))  # doctest: +NORMALIZE_WHITESPACE
| Method | Inter-turns | Success rate | 95% interval | n | Unscored | Labels (count) |
|:--|--:|--:|:--|--:|--:|:--|
| M | 2 | 0.250 | \\[0.046, 0.699\\] | 4 | 1 | correct 1, unhelpful 3 |
<BLANKLINE>
Success rate of the derived label by number of inter-turns (filler turns between the preference and the question): the share of scored replies whose label is a success (PrefEval: correct = helpful and no violation), with Wilson 95% intervals; n: replies with a label; unscored: replies whose label depended on a check without a verdict (left out of n).
<BLANKLINE>
"""

from __future__ import annotations

from typing import Any

from reports.formatting import number as _number
from reports.paper_text import FIT_WIDTH, latex_escape, markdown_escape

CURVE = "label_rate"
HEAD = [
    "Method",
    "Inter-turns",
    "Success rate",
    "95% interval",
    "n",
    "Unscored",
    "Labels (count)",
]
CAPTION = (
    "Success rate of the derived label by number of inter-turns (filler turns "
    "between the preference and the question): the share of scored replies "
    "whose label is a success (PrefEval: correct = helpful and no violation), "
    "with Wilson 95% intervals; n: replies with a label; unscored: replies "
    "whose label depended on a check without a verdict (left out of n)."
)


def number(value: float | None) -> str:
    return "—" if value is None else _number(value, 3)


def rows(curves: dict[str, Any] | None, methods: list[str]) -> list[list[str]]:
    """The table's cells, methods in the run's order, points by inter-turns."""
    found = (curves or {}).get(CURVE) or {}
    table = []
    for method in methods:
        for point in found.get(method) or []:
            low, high = point.get("ci_low"), point.get("ci_high")
            interval = "—" if low is None else f"[{number(low)}, {number(high)}]"
            labels = ", ".join(
                f"{label} {entry['n']}"
                for label, entry in (point.get("labels") or {}).items()
            )
            table.append(
                [
                    method,
                    str(point["k"]),
                    number(point.get("mean")),
                    interval,
                    str(point.get("n", 0)),
                    str(point.get("unscored", 0)),
                    labels,
                ]
            )
    return table


def to_markdown(curves: dict[str, Any] | None, methods: list[str]) -> str:
    """The table in Markdown ("" when the run has no such curve)."""
    cells = rows(curves, methods)
    if not cells:
        return ""
    lines = [
        "| " + " | ".join(HEAD) + " |",
        "|:--|--:|--:|:--|--:|--:|:--|",
        *("| " + " | ".join(markdown_escape(c) for c in row) + " |" for row in cells),
        "",
        CAPTION,
        "",
    ]
    return "\n".join(lines)


def to_latex(curves: dict[str, Any] | None, methods: list[str]) -> str:
    """The table as a booktabs float ("" when the run has no such curve)."""
    cells = rows(curves, methods)
    if not cells:
        return ""
    head = " & ".join(latex_escape(h) for h in HEAD)
    lines = [
        r"\begin{table}[htbp]",
        r"\centering",
        r"\small",
        rf"\caption{{{latex_escape(CAPTION)}}}",
        r"\label{tab:personasteer-inter-turns}",
        FIT_WIDTH,
        r"\begin{tabular}{lrrlrrl}",
        r"\toprule",
        head + r" \\",
        r"\midrule",
        *(" & ".join(latex_escape(c) for c in row) + r" \\" for row in cells),
        r"\bottomrule",
        r"\end{tabular}}",
        r"\end{table}",
        "",
    ]
    return "\n".join(lines)
