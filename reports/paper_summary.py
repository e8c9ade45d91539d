"""``summary.csv``: one row per (suite, method, summary metric) with its value,
the number of items behind it and its confidence interval, in English.

Nothing is estimated here: ``n`` is the summary's ``<id>_n`` (the sessions
behind the value, metrics/counts.py), else for runs of an earlier release the
``n`` of a panel statistic of the same mean; the CI is the
suite's own ``<metric>_ci_low``/``_ci_high`` summary values (``pas_avg`` ->
``pas_ci_low``), else the CI of a panel statistic whose mean is the summary
value (``{"mean", "n", "ci_low", "ci_high"}``, as the style and roleplay
suites store). Curves hold one CI per round, not one of the summary value,
so they are not used. Unknown cells stay empty.

>>> from types import SimpleNamespace
>>> run = SimpleNamespace(methods=["=Base"], suites=["simulation"], aggregates={
...     "summary": {"=Base": {"pas_avg": 0.5, "pas_ci_low": 0.25, "pas_ci_high": 0.75,
...                           "pas_avg_n": 9}}})
>>> print(summary_csv(run).splitlines()[1])
simulation,'=Base,pas_avg,Persona adherence (PAS),0.5,9,0.25,0.75,mean over sessions,'=Base,,,,,,,,,1,
"""

from __future__ import annotations

import csv
import io
from types import SimpleNamespace
from typing import Any

from metrics import notes, rank_groups, registry
from metrics.counts import count_key, is_count
from metrics.rank_groups import panel_statistic
from metrics.results import summary_notes
from metrics.rows import finite_json
from metrics.suite import Suite
from reports import Reported, paper_panel
from reports.exports import safe_cell
from reports.paper_text import english_label

SUMMARY_FIELDS = (
    "suite",
    "method",
    "metric",
    "label",
    "value",
    "n",
    "ci_low",
    "ci_high",
    "basis",
    "baseline",
    "delta",
    "delta_ci_low",
    "delta_ci_high",
    "p",
    "p_holm",
    "wilcoxon_p",
    "note",
    "judge",
    "rank",
    "rank_note",
)
# ci_low/ci_high: the value's own interval; delta*: the table's Δ vs the
# baseline on the value's basis (reports/tables.py), p: its paired permutation
# p on the same basis (the marks'), p_holm: Holm-adjusted within the column
# over its comparisons with the baseline (or across the table: holm="table");
# wilcoxon_p: the Wilcoxon p of the per-session values (another basis);
# note: why a value is null, or what it rests on (summary_notes, in English);
# judge: whose value it is in a panel run: one judge, "panel mean (a, b)" (a
# per-judge metric's pooled value) or "panel (a, b)" (every judge's verdicts
# together: al_lc, pairwise...), empty for a value no judge makes;
# rank: its rank group (1 + the methods whose interval lies entirely above
# its own, metrics/rank_groups.py), empty for a value that is not ranked;
# rank_note: why a ranked value has no rank, in English


def metric_ids(suite: Suite, summary: dict[str, Any]) -> list[str]:
    """The suite's summary metric ids in declaration order; a keyed metric is
    followed by the ``<id>@<key>`` values some method has.

    >>> ids = metric_ids(registry.get("slots"), {"A": {"slot_f1@b": 1, "slot_f1@a": 1}})
    >>> ids[:4]
    ['slot_f1', 'slot_f1@a', 'slot_f1@b', 'slot_precision']
    """
    ids = []
    for metric in suite.summary_metrics():
        ids.append(metric.id)
        if metric.keyed or metric.per_judge:  # a panel's judges: <id>@<judge>
            prefix = metric.id + "@"
            keys = {
                k
                for values in summary.values()
                for k in values
                if k.startswith(prefix) and not is_count(k)
            }
            ids.extend(sorted(keys))
    return ids


def summary_row(
    aggregates: dict[str, Any], suite: str, method: str, metric_id: str
) -> dict[str, Any]:
    """One row of ``summary.csv`` (None where unknown). Its CI is the
    value's own: ``<id>_ci_low``, ``pas_avg`` -> ``pas_ci_low``, ``bt_score``
    -> ``bt_ci_low`` (pairwise.md: Bradley–Terry strength with its CI).

    >>> values = {"bt_score": 0.3, "bt_score_n": 4, "bt_ci_low": -0.1, "bt_ci_high": 0.7}
    >>> row = summary_row({"summary": {"M": values}}, "pairwise", "M", "bt_score")
    >>> row["n"], row["ci_low"], row["ci_high"]
    (4, -0.1, 0.7)
    """
    values = (aggregates.get("summary") or {}).get(method) or {}
    value = values.get(metric_id)
    panel = (aggregates.get("panels") or {}).get(suite)
    statistic = panel_statistic(panel, method, metric_id, value) or {}
    n = values.get(count_key(metric_id), statistic.get("n"))
    # the value's own interval (metrics/rank_groups.py: its summary ends, else
    # its panel statistic's), the one its rank group is read from
    low, high = rank_groups.own_interval(aggregates, method, metric_id) or (None, None)
    return {
        "suite": suite,
        "method": method,
        "metric": metric_id,
        "label": english_label(metric_id),
        "value": value,
        "n": n if isinstance(n, int) else None,
        "ci_low": low,
        "ci_high": high,
    }


def summary_rows(
    run: Reported, baseline: str | None = None, holm: str = "metric"
) -> list[dict[str, Any]]:
    """Every (suite, method, summary metric) of the run, in the run's order,
    with the comparison table's Δ against ``baseline`` (the first method
    unless another is named) where the metric is a table column."""
    from reports import tables  # the table's Δ, marks and Holm family

    aggregates = finite_json(run.aggregates or {})
    summary = aggregates.get("summary") or {}
    known = set(registry.names())
    shown_against = run.methods[0] if baseline not in run.methods else str(baseline)
    clean = SimpleNamespace(methods=list(run.methods), aggregates=aggregates)
    ranked, why = rank_groups.ranks(
        aggregates, list(run.methods), list(run.suites), summary_notes(aggregates)
    )
    found = []
    for name in (n for n in run.suites if n in known):
        table = tables.comparison_table(clean, shown_against, name, holm=holm)
        shown = {
            (row["method"], cell["metric"].id): cell["versus"]
            for row in table["rows"]
            for cell in row["cells"]
        }
        for method in run.methods:
            for metric_id in metric_ids(registry.get(name), summary):
                row = summary_row(aggregates, name, method, metric_id)
                versus = _versus(shown, method, metric_id, shown_against)
                note = {"note": english_note(aggregates, method, metric_id)}
                judge = {"judge": paper_panel.row_judge(run, metric_id)}
                rank = _rank(ranked, why, method, metric_id)
                found.append({**row, **versus, **note, **judge, **rank})
    return found


def _rank(
    ranked: dict[str, Any], why: dict[str, Any], method: str, metric_id: str
) -> dict[str, Any]:
    """The rank columns of one row: its rank and, without one, why."""
    said = (why.get(method) or {}).get(metric_id)
    note = notes.Note(said["code"], dict(said.get("params") or {})) if said else None
    return {
        "rank": (ranked.get(method) or {}).get(metric_id),
        "rank_note": note.english if note else None,
    }


def english_note(aggregates: dict[str, Any], method: str, metric_id: str) -> str | None:
    """The summary note of a value, in English (None without one).

    >>> english_note({"summary_notes": {"M": {"al_avg": {"code": "panel_judge_missing",
    ...     "params": {"judges": "x"}}}}}, "M", "al_avg")
    'no panel value: the judge(s) x scored none of these items'
    """
    found = (summary_notes(aggregates).get(method) or {}).get(metric_id)
    if not found or found.get("code") not in notes.NOTES:
        return None
    return notes.Note(found["code"], dict(found.get("params") or {})).english


def _versus(
    shown: dict[tuple[str, str], Any], method: str, metric_id: str, baseline: str
) -> dict[str, Any]:
    """The Δ columns of one row (empty off the table or without a Δ)."""
    metric = registry.spec(metric_id)
    basis = metric.basis.msgid if metric and metric.basis else "mean over sessions"
    versus = shown.get((method, metric_id))
    if (method, metric_id) not in shown:
        return {}
    found = {"basis": basis, "baseline": baseline}
    if versus and versus["diff"] is not None:
        found.update(
            delta=versus["diff"],
            delta_ci_low=versus["ci_low"],
            delta_ci_high=versus["ci_high"],
            p=versus["p_value"],
            p_holm=versus["p_holm"],
            wilcoxon_p=versus.get("wilcoxon_p"),
        )
    return found


def summary_csv(
    run: Reported, baseline: str | None = None, holm: str = "metric"
) -> str:
    """``summary.csv``; cells a spreadsheet would run as formulas neutralised."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=SUMMARY_FIELDS)
    writer.writeheader()
    for row in summary_rows(run, baseline, holm):
        writer.writerow(
            {k: safe_cell("" if row.get(k) is None else row[k]) for k in SUMMARY_FIELDS}
        )
    return buffer.getvalue()
