"""The workspace's run list: a column per suite's lead metric (the summary
value a researcher compares runs by, ``Suite.lead``), like the metric
columns of an experiment tracker's run table. A run evaluates several
methods, so a cell lists each method's value, the best marked, and sorts
by the best (a run without the metric sorts last)."""

from __future__ import annotations

from typing import Any

from metrics import registry
from metrics.suite import Metric

SHOWN_METHODS = 4  # per cell; the rest are counted


def lead_columns(runs) -> list[tuple[str, Metric]]:
    """``(suite, lead metric)`` of every suite some run evaluated, in the
    registry's order."""
    used = {name for run in runs for name in run.suites}
    return [(s.name, s.lead_metric) for s in registry.suites() if s.name in used]


def lead_cell(run, metric: Metric) -> dict[str, Any]:
    """The run's values of ``metric`` by method (finished runs only: an
    interim value is no result), the best first-class.

    >>> from types import SimpleNamespace as NS
    >>> run = NS(methods=["A", "B"], aggregates={"summary": {
    ...     "A": {"x": 0.5}, "B": {"x": 0.75}}})
    >>> cell = lead_cell(run, Metric("x", "X", "summary"))
    >>> cell["sort"], [(line["method"], line["best"]) for line in cell["lines"]]
    (0.75, [('A', False), ('B', True)])
    >>> lead_cell(NS(methods=["A"], aggregates=None), Metric("x", "X", "summary"))
    {'lines': [], 'more': 0, 'sort': None}
    """
    summary = (run.aggregates or {}).get("summary") or {}
    found = [
        (method, value)
        for method in run.methods
        if isinstance(value := summary.get(method, {}).get(metric.id), int | float)
    ]
    if not found:
        return {"lines": [], "more": 0, "sort": None}
    values = [value for _method, value in found]
    best = max(values) if metric.higher_is_better else min(values)
    lines = [
        {"method": method, "value": value, "best": value == best and len(found) > 1}
        for method, value in found
    ]
    return {"lines": lines[:SHOWN_METHODS], "more": max(0, len(lines) - SHOWN_METHODS),
            "sort": best}  # fmt: skip
