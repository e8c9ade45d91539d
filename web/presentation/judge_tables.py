"""A judge panel judge by judge: per method, each judge's own value of the
metrics a suite reports per judge (``Metric.per_judge``: ``<id>@<judge>``
in the summary, from that judge's rows alone) beside the panel's value (the
mean over the items every judge scored). Shown on the dashboard of a panel
run, so a reader sees whether the judges agree on the ranking of methods.

>>> class Run:
...     methods = ["A"]
...     suites = ["alignment"]
...     judge = {"models": ["j1", "j2"]}
...     aggregates = {"summary": {"A": {"al_avg": 50.0, "al_avg_n": 4,
...         "al_avg@j1": 45.0, "al_avg_n@j1": 4, "al_avg@j2": 55.0, "al_avg_n@j2": 4}}}
>>> [table] = judge_tables(Run())
>>> [(c["judge"], c["value"], c["n"]) for c in table["rows"][0]["cells"][:3]]
[('j1', 45.0, 4), ('j2', 55.0, 4), ('', 50.0, 4)]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from metrics import registry
from metrics.counts import count_key
from metrics.results import judge_models
from metrics.suite import Metric

if TYPE_CHECKING:
    from store.models import Run


def judge_tables(run: Run) -> list[dict[str, Any]]:
    """Per suite with per-judge metrics: columns (metric, judge; "" for the
    panel) and one row of cells per method. [] for a run of one judge."""
    judges = judge_models(run.judge)
    if len(judges) < 2:
        return []
    summary = (run.aggregates or {}).get("summary", {})
    found: list[dict[str, Any]] = []
    for name in run.suites:
        suite = registry.get(name)
        metrics = [m for m in suite.summary_metrics() if m.per_judge and m.in_table]
        if not metrics:
            continue
        columns = [(m, judge) for m in metrics for judge in [*judges, ""]]
        rows = [
            {
                "method": method,
                "cells": [
                    _cell(summary.get(method, {}), metric, judge)
                    for metric, judge in columns
                ],
            }
            for method in run.methods
        ]
        found.append({"suite": name, "columns": columns, "rows": rows})
    return found


def _cell(values: dict[str, Any], metric: Metric, judge: str) -> dict[str, Any]:
    key = f"{metric.id}@{judge}" if judge else metric.id
    return {
        "metric": metric,
        "judge": judge,
        "value": values.get(key),
        "n": values.get(count_key(key)),
    }
