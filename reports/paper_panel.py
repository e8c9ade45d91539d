"""A judge panel in the paper outputs: which judges, how their scores are
pooled, and each judge's own values beside the panel mean (Markdown, LaTeX
and the Methods paragraph; ``summary.csv`` names the judge of each row).

A panel value is pooled per item first: an item's score is the mean of its
judges' scores, over the items every judge scored, and the panel's value is
computed from those item means as a single judge's would be, so ``n``
counts sessions (``metrics/panel_items.py``, ``metrics/row_source.py``).

>>> from types import SimpleNamespace
>>> run = SimpleNamespace(suites=["alignment"], methods=["A"],
...     judge={"model": "x", "models": ["x", "y"]},
...     aggregates={"summary": {"A": {"al_avg": 60.0, "al_avg@x": 50.0,
...                                   "al_avg@y": 70.0}}})
>>> print(to_markdown(run).splitlines()[2])
| A | 50.00 | 70.00 | 60.00 |
"""

from __future__ import annotations

from metrics import registry
from metrics.results import judge_models
from reports import Reported
from reports.paper_text import (
    english_label,
    latex_escape,
    latex_number,
    markdown_escape,
    number,
)

PANEL_MEAN = "panel mean"
PANEL = "panel"
POOLING = (
    "each item's score is the mean of the panel's judges' scores, over the "
    "items every judge scored; values and n are then computed over sessions "
    "from those item means"
)


def panel_judges(run: Reported) -> list[str]:
    """The judges of a panel run, in the run's order; [] for one judge."""
    models = judge_models(getattr(run, "judge", None))
    return models if len(models) > 1 else []


def row_judge(run: Reported, metric_id: str) -> str:
    """Whose value a ``summary.csv`` row is: a judge of the panel, the panel
    mean (a pooled per-judge metric of a panel run), the panel (a judged
    metric made from every judge's verdicts together: the length-controlled
    AL, the pairwise win rates and strengths), or "" (one judge, or a metric
    no judge gives)."""
    judges = panel_judges(run)
    base, _, key = metric_id.partition("@")
    metric = registry.spec(base)
    if not judges or metric is None:
        return ""
    if not metric.per_judge:
        return f"{PANEL} ({', '.join(judges)})" if metric.needs_judge else ""
    return key if key in judges else f"{PANEL_MEAN} ({', '.join(judges)})"


def sentence(run: Reported) -> str:
    """The Methods paragraph's account of the panel ("" for one judge)."""
    judges = panel_judges(run)
    if not judges:
        return ""
    return (
        f"The {len(judges)} judges ({', '.join(judges)}) form a panel: {POOLING}. "
        "Each judge's own values are reported beside the panel mean."
    )


def _tables(run: Reported) -> list[tuple[str, list[str], list[list[float | None]]]]:
    """``(metric id, judges + panel mean, rows per method)`` per pooled metric."""
    judges = panel_judges(run)
    summary = (run.aggregates or {}).get("summary") or {}
    found = []
    for suite in (
        registry.get(name) for name in run.suites if name in registry.names()
    ):
        for metric in suite.summary_metrics():
            if not (judges and metric.per_judge):
                continue
            rows = [
                [
                    (summary.get(method) or {}).get(key)
                    for key in [*(f"{metric.id}@{j}" for j in judges), metric.id]
                ]
                for method in run.methods
            ]
            found.append((metric.id, [*judges, PANEL_MEAN], rows))
    return found


def to_markdown(run: Reported) -> str:
    """One table per pooled metric: methods by judges, then the panel mean."""
    parts = []
    for metric_id, heads, rows in _tables(run):
        lines = [
            "| Method | " + " | ".join(markdown_escape(h) for h in heads) + " |",
            "|:--|" + "--:|" * len(heads),
        ]
        for method, values in zip(run.methods, rows, strict=True):
            cells = [number(value) for value in values]
            lines.append(f"| {markdown_escape(method)} | " + " | ".join(cells) + " |")
        title = f"{english_label(metric_id)} per judge of the panel; {PANEL_MEAN}: "
        parts.append(
            "\n".join([*lines, "", markdown_escape(title + POOLING + "."), ""])
        )
    return "\n".join(parts)


def to_latex(run: Reported) -> str:
    """The same tables as LaTeX floats (booktabs)."""
    parts = []
    for metric_id, heads, rows in _tables(run):
        title = f"{english_label(metric_id)} per judge of the panel; {PANEL_MEAN}: "
        lines = [
            r"\begin{table}[htbp]",
            r"\centering",
            r"\small",
            rf"\caption{{{latex_escape(title + POOLING + '.')}}}",
            rf"\begin{{tabular}}{{l{'r' * len(heads)}}}",
            r"\toprule",
            " & ".join(["Method", *(latex_escape(h) for h in heads)]) + r" \\",
            r"\midrule",
        ]
        for method, values in zip(run.methods, rows, strict=True):
            cells = [latex_number(number(value)) for value in values]
            lines.append(" & ".join([latex_escape(method), *cells]) + r" \\")
        parts.append(
            "\n".join([*lines, r"\bottomrule", r"\end{tabular}", r"\end{table}", ""])
        )
    return "\n".join(parts)
