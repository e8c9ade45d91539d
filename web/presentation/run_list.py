"""The workspace's run list: a column per suite's lead metric (the summary
value a researcher compares runs by, ``Suite.lead``), like the metric
columns of an experiment tracker's run table. A run evaluates several
methods, so a cell lists each method's value, the best marked, and sorts
by the best (a run without the metric sorts last)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from core.status import FINAL_RUN
from metrics import notes, registry
from metrics.counts import count_key
from metrics.results import summary_notes
from metrics.suite import Metric
from translations import _

if TYPE_CHECKING:
    from store.models import Run

SHOWN_METHODS = 4  # per cell; the rest are counted


def lead_columns(runs: Iterable[Run]) -> list[tuple[str, Metric]]:
    """``(suite, lead metric)`` of every suite some run evaluated, in the
    registry's order."""
    used = {name for run in runs for name in run.suites}
    return [(s.name, s.lead_metric) for s in registry.suites() if s.name in used]


def lead_cell(run: Run, metric: Metric) -> dict[str, Any]:
    """The run's values of ``metric`` by method (finished runs only: an
    interim value is no result), the best first-class, each with the
    sessions behind it (``n``); a method without a value says why
    (``reason``), and so does a cell without any.

    >>> from types import SimpleNamespace as NS
    >>> run = NS(methods=["A", "B"], status="done", suites=["s"], aggregates={
    ...     "summary": {"A": {"x": 0.5, "x_n": 4}, "B": {"x": 0.75, "x_n": 5}}})
    >>> cell = lead_cell(run, Metric("x", "X", "summary", suite="s"))
    >>> cell["sort"], [(line["method"], line["best"], line["n"]) for line in cell["lines"]]
    (0.75, [('A', False, 4), ('B', True, 5)])
    """
    if metric.suite not in run.suites:
        return _empty(_("not evaluated in this run"))
    if run.status not in FINAL_RUN:
        return _empty(_("no result until the run finishes"))
    aggregates = run.aggregates or {}
    summary, said = aggregates.get("summary") or {}, summary_notes(aggregates)
    if not summary:
        return _empty(_("no result was stored for this run"))
    lines = [
        _line(summary.get(method) or {}, said.get(method) or {}, method, metric)
        for method in run.methods
    ]
    values = [line["value"] for line in lines if line["value"] is not None]
    if not values:  # no method has one: the cell says why, once per reason
        return _empty("; ".join(dict.fromkeys(line["reason"] for line in lines)))
    best = max(values) if metric.higher_is_better else min(values)
    for line in lines:
        line["best"] = line["value"] == best and len(values) > 1
    return {
        "lines": lines[:SHOWN_METHODS],
        "more": max(0, len(lines) - SHOWN_METHODS),
        "sort": best,
        "reason": "",
    }


def _line(
    values: dict[str, Any], said: dict[str, Any], method: str, metric: Metric
) -> dict[str, Any]:
    """One method's value and its n, or why it has none."""
    value = values.get(metric.id)
    value = value if isinstance(value, int | float) else None
    n = values.get(count_key(metric.id))
    reason = ""
    if value is None:
        noted = said.get(metric.id)
        if noted:
            reason = notes.translate(noted.get("code"), noted.get("params"), None)
        else:
            reason = _("no scored value (n = %(n)s)", n=n or 0)
    return {"method": method, "value": value, "n": n, "best": False, "reason": reason}


def _empty(reason: str) -> dict[str, Any]:
    return {"lines": [], "more": 0, "sort": None, "reason": str(reason)}
