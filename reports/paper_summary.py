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
simulation,'=Base,pas_avg,Persona adherence (PAS),0.5,9,0.25,0.75,mean over sessions,'=Base,,,,,,,
"""

from __future__ import annotations

import csv
import io
import math
from types import SimpleNamespace

from metrics import notes, registry
from metrics.counts import count_key, is_count
from metrics.results import summary_notes
from metrics.rows import finite_json
from reports import paper_panel
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
    "note",
    "judge",
)
# ci_low/ci_high: the value's own interval; delta*: the table's Δ vs the
# baseline on the value's basis (reports/tables.py), p: its Wilcoxon p, p_holm:
# Holm-adjusted within the column over its comparisons with the baseline;
# note: why a value is null, or what it rests on (summary_notes, in English);
# judge: whose value it is in a panel run: one judge, or "panel mean (a, b)"


def metric_ids(suite, summary: dict) -> list[str]:
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


def panel_statistic(panel, method: str, metric_id: str, value) -> dict | None:
    """A ``{"mean", "ci_low", "ci_high"}`` entry of the suite's panel data,
    under ``panel[method]`` or ``panel[<key>][method]``, named after the metric
    (``nvcs_avg`` -> ``nvcs``) and whose mean is ``value``.

    >>> panel = {"ci": {"M": {"jera": {"mean": 7.0, "n": 3, "ci_low": 6, "ci_high": 8}}}}
    >>> panel_statistic(panel, "M", "jera_avg", 7.0)["n"]
    3
    >>> panel_statistic(panel, "M", "jera_avg", 6.5) is None
    True
    """
    if not isinstance(panel, dict) or value is None:
        return None
    base = metric_id.removesuffix("_avg")
    places = [panel, *(v for v in panel.values() if isinstance(v, dict))]
    for place in places:
        found = place.get(method)
        found = found.get(base) if isinstance(found, dict) else None
        if isinstance(found, dict) and {"mean", "ci_low", "ci_high"} <= found.keys():
            mean = found["mean"]
            if isinstance(mean, int | float) and math.isclose(mean, value):
                return found
    return None


def summary_row(aggregates: dict, suite: str, method: str, metric_id: str) -> dict:
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
    # the value's id, without "_avg", without its last word (bt_score -> bt)
    stems = (metric_id, metric_id.removesuffix("_avg"), metric_id.rpartition("_")[0])
    low = _first(values, tuple(f"{stem}_ci_low" for stem in stems))
    high = _first(values, tuple(f"{stem}_ci_high" for stem in stems))
    if value is None or low is None or high is None:
        low, high = statistic.get("ci_low"), statistic.get("ci_high")
    return {
        "suite": suite,
        "method": method,
        "metric": metric_id,
        "label": english_label(metric_id),
        "value": value,
        "n": n if isinstance(n, int) else None,
        "ci_low": low if value is not None else None,
        "ci_high": high if value is not None else None,
    }


def _first(values: dict, keys: tuple[str, ...]):
    """The value of the first key present: a value's own interval, null
    when it has none, never a shorter stem's (``pairwise_winrate_lc`` ->
    ``pairwise_winrate_ci_low`` is another value's interval)."""
    return next((values[key] for key in keys if key in values), None)


def summary_rows(run, baseline: str | None = None) -> list[dict]:
    """Every (suite, method, summary metric) of the run, in the run's order,
    with the comparison table's Δ against ``baseline`` (the first method
    unless another is named) where the metric is a table column."""
    from reports import tables  # the table's Δ, marks and Holm family

    aggregates = finite_json(run.aggregates or {})
    summary = aggregates.get("summary") or {}
    known = set(registry.names())
    shown_against = run.methods[0] if baseline not in run.methods else str(baseline)
    clean = SimpleNamespace(methods=list(run.methods), aggregates=aggregates)
    found = []
    for name in (n for n in run.suites if n in known):
        table = tables.comparison_table(clean, shown_against, name)
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
                found.append({**row, **versus, **note, **judge})
    return found


def english_note(aggregates: dict, method: str, metric_id: str) -> str | None:
    """The summary note of a value, in English (None without one).

    >>> english_note({"summary_notes": {"M": {"al_avg": {"code": "panel_judge_missing",
    ...     "params": {"judges": "x"}}}}}, "M", "al_avg")
    'no panel value: the judge(s) x scored none of these items'
    """
    found = (summary_notes(aggregates).get(method) or {}).get(metric_id)
    if not found or found.get("code") not in notes.NOTES:
        return None
    return notes.Note(found["code"], dict(found.get("params") or {})).english


def _versus(shown: dict, method: str, metric_id: str, baseline: str) -> dict:
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
        )
    return found


def summary_csv(run, baseline: str | None = None) -> str:
    """``summary.csv``; cells a spreadsheet would run as formulas neutralised."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=SUMMARY_FIELDS)
    writer.writeheader()
    for row in summary_rows(run, baseline):
        writer.writerow(
            {k: safe_cell("" if row.get(k) is None else row[k]) for k in SUMMARY_FIELDS}
        )
    return buffer.getvalue()
