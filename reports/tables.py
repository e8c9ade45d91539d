"""Comparison tables: methods x a suite's summary metrics, with each Δ on
its column's basis (the difference of the values shown, with an interval
from resampled sessions, ``metrics/basis.py``) and marks from the Wilcoxon
p Holm-adjusted within the column over its comparisons with the baseline.
The dashboard, the comparison page and the paper exports all read these."""

from __future__ import annotations

from metrics import rank_groups, registry, stats
from metrics.counts import count_key
from metrics.notes import translate
from metrics.registry import spec
from metrics.results import summary_notes
from reports.formatting import display_key, p_value
from translations import _, metric_label


def significance(p_value: float | None) -> str:
    """Holm-adjusted p to the usual marks.

    >>> [significance(p) for p in (0.0004, 0.004, 0.04, 0.4, None)]
    ['***', '**', '*', '', '']
    """
    if p_value is None:
        return ""
    for bound, mark in ((0.001, "***"), (0.01, "**"), (0.05, "*")):
        if p_value < bound:
            return mark
    return ""


def best_methods(
    summary: dict, methods: list[str], metric_id: str, percent: bool = False
) -> set[str]:
    """Methods holding the best value of a ranked summary metric, compared as
    shown on the page; none when every method shows the same value (a tie
    for everyone is no "best").

    >>> best_methods({"A": {"nvcs_avg": 0.5}, "B": {"nvcs_avg": 0.5}}, ["A", "B"], "nvcs_avg")
    set()
    """
    metric = spec(metric_id)
    if metric is None or not metric.ranked:
        return set()
    present = {
        m: summary.get(m, {}).get(metric_id)
        for m in methods
        if summary.get(m, {}).get(metric_id) is not None
    }
    shown = {m: display_key(metric_id, v, percent) for m, v in present.items()}
    if len(set(shown.values())) < 2:
        return set()
    best = max(present.values()) if metric.higher_is_better else min(present.values())
    best_shown = display_key(metric_id, best, percent)
    return {m for m in present if shown[m] == best_shown}


SIGNED = (
    "diff",
    "ci_low",
    "ci_high",
    "effect_size",
    "rank_biserial",
    "delta",
    "delta_ci_low",
    "delta_ci_high",
)
SWAPPED = (("ci_low", "ci_high"), ("delta_ci_low", "delta_ci_high"))


def versus_baseline(comparisons: list[dict], metric: str, baseline: str, method: str):
    """The comparison of ``method`` against ``baseline``, oriented method −
    baseline (every difference and effect size flips sign together)."""
    for comparison in comparisons:
        if comparison["metric"] != metric:
            continue
        if (comparison["a"], comparison["b"]) == (method, baseline):
            return comparison
        if (comparison["a"], comparison["b"]) == (baseline, method):
            flipped = {**comparison, "a": method, "b": baseline}
            for key in SIGNED:
                value = comparison.get(key)
                flipped[key] = None if value is None else -value
            for low, high in SWAPPED:
                flipped[low], flipped[high] = flipped[high], flipped[low]
            return flipped
    return None


def on_value_basis(versus: dict, value, baseline_value) -> dict:
    """A comparison as a table shows it: Δ is the difference of the two
    values shown, with the interval of that difference (sessions
    resampled, ``metrics/basis.py``); the session-level paired mean
    difference stays as ``paired_diff`` (its test gives p). A run
    aggregated before Δ had its own interval shows Δ without one.

    >>> shown = on_value_basis({"diff": 1.5, "ci_low": 1.0, "ci_high": 2.0,
    ...     "p_value": 0.04}, 62.5, 60.0)
    >>> shown["diff"], shown["ci_low"], shown["paired_diff"]
    (2.5, None, 1.5)
    """
    delta = None if value is None or baseline_value is None else value - baseline_value
    return {
        **versus,
        "paired_diff": versus.get("diff"),
        "paired_ci": (versus.get("ci_low"), versus.get("ci_high")),
        "diff": delta,
        "ci_low": versus.get("delta_ci_low") if delta is not None else None,
        "ci_high": versus.get("delta_ci_high") if delta is not None else None,
    }


def comparison_table(run, baseline: str, suite: str, percent: bool = False) -> dict:
    """Methods x the suite's summary metrics that are table columns (the
    charts show the others, e.g. radar dimensions and CI ends). Each Δ is
    on its column's basis (the difference of the values shown); its marks
    come from the Wilcoxon p Holm-adjusted over the column's comparisons
    with the baseline (the family this table shows, the same on every page)."""
    aggregates = run.aggregates or {}
    summary = aggregates.get("summary", {})
    said = summary_notes(aggregates)  # why a value is null
    comparisons = aggregates.get("comparisons", [])
    columns = [m for m in registry.get(suite).summary_metrics() if m.in_table]
    best = {m.id: best_methods(summary, run.methods, m.id, percent) for m in columns}
    versus = {
        m.id: _column_versus(comparisons, summary, m, run.methods, baseline, percent)
        for m in columns
    }
    ranked, unranked = rank_groups.ranks(aggregates, list(run.methods), [suite], said)
    by = rank_groups.rank_metric(registry.get(suite), ranked)
    rows = []
    for method in run.methods:
        values = summary.get(method, {})
        cells = []
        for metric in columns:
            found = versus[metric.id].get(method)
            cells.append(
                {
                    "metric": metric,
                    "value": values.get(metric.id),
                    "n": values.get(count_key(metric.id)),
                    "best": method in best[metric.id],
                    "versus": found,
                    "mark": significance(found["p_holm"]) if found else "",
                    "note": _note(said.get(method, {}).get(metric.id)),
                }
            )
        rows.append(
            {
                "method": method,
                "cells": cells,
                "is_baseline": method == baseline,
                # its rank group on the rank column (None: no rank, see note)
                "rank": ranked[method].get(by) if by else None,
                "rank_note": _note((unranked.get(method) or {}).get(by)),
            }
        )
    shared = shared_notes(columns, rows)
    return {
        "suite": suite,
        "columns": columns,
        "rows": rows,
        "shared_notes": shared,
        # the column the Rank column ranks by (None: no column has ranks)
        "rank_metric": registry.spec(by) if by else None,
    }


def shared_notes(columns, rows: list[dict]) -> list[dict]:
    """A column where no method has a value, for one reason: the reason is
    said once under the table, and its cells say only that the value is
    missing (``shared_note``)."""
    found = []
    for index, metric in enumerate(columns):
        cells = [row["cells"][index] for row in rows]
        said = {cell["note"] for cell in cells}
        if len(cells) < 2 or len(said) != 1 or None in said:
            continue
        if any(cell["value"] is not None for cell in cells):
            continue
        for cell in cells:
            cell["shared_note"] = True
        found.append({"metric": metric, "note": cells[0]["note"]})
    return found


def _column_versus(
    comparisons, summary, metric, methods, baseline, percent: bool = False
) -> dict:
    """Per method, its comparison with the baseline on this column, on the
    column's basis, p Holm-adjusted over the column's comparisons.
    ``shown_diff`` is the difference of the two values as they are shown
    (rounded), which the table prints: 0.84 and 0.83 differ by 0.01 there,
    even where the unrounded difference, 0.004, would print as 0.00."""
    if not metric.compare:
        return {}
    found = {}
    base_value = summary.get(baseline, {}).get(metric.id)
    for method in methods:
        if method == baseline:
            continue
        paired = versus_baseline(comparisons, metric.compare, baseline, method)
        if paired is not None:
            value = summary.get(method, {}).get(metric.id)
            found[method] = on_value_basis(paired, value, base_value)
            a, b = (display_key(metric.id, v, percent) for v in (value, base_value))
            found[method]["shown_diff"] = None if a is None or b is None else a - b
    adjusted = stats.holm([v["p_value"] for v in found.values()])
    for shown, p_holm in zip(found.values(), adjusted, strict=True):
        shown.update(p_holm=p_holm, family_size=len(found))
    return found


def _note(found: dict | None) -> str | None:
    return translate(found["code"], found.get("params"), None) if found else None


def value_title(cell: dict) -> str:
    """What a summary value is and how many sessions stand behind it."""
    metric, n = cell["metric"], cell["n"]
    basis = str(metric.basis) if metric.basis else _("mean over sessions")
    if n is None:
        return basis
    return _("%(basis)s; %(n)s sessions", basis=basis, n=n)


def delta_title(cell: dict, method: str, baseline: str) -> str:
    """The basis of the Δ beside a value, and its test."""
    versus, metric = cell["versus"], cell["metric"]
    text = _(
        "Δ = the value of %(method)s − the value of %(baseline)s (%(basis)s).",
        method=method,
        baseline=baseline,
        basis=basis_of(metric),
    )
    if versus.get("ci_low") is not None:
        text += " " + _(
            "95%% interval: %(resamples)s paired resamples of the sessions, "
            "both values recomputed.",
            resamples=stats.BOOTSTRAP_RESAMPLES,
        )
    if versus.get("p_holm") is not None:
        text += " " + _(
            "Wilcoxon signed-rank p = %(p)s over the %(n)s sessions both "
            "methods scored, on the per-session %(source)s; Holm-adjusted "
            "over the %(family)s comparison(s) with %(baseline)s in this "
            "column: %(p_holm)s.",
            p=p_value(versus["p_value"]),
            n=versus["n"],
            source=metric_label(metric.compare),
            family=versus["family_size"],
            baseline=baseline,
            p_holm=p_value(versus["p_holm"]),
        )
    return text


def basis_of(metric) -> str:
    """How a column's value is computed, in the reader's language."""
    return str(metric.basis) if metric.basis else _("mean over sessions")


def rank_caption(column: str) -> str:
    """What the Rank column means, in the reader's language."""
    return _(
        "Rank (by %(column)s): 1 + the number of methods whose 95%% interval "
        "of %(column)s lies entirely on the better side of this method's "
        "(above it, or below it where lower is better); methods whose "
        "intervals overlap share a rank, and a method without an interval "
        "has none.",
        column=column,
    )


def table_caption(table: dict, baseline: str) -> dict:
    """What a comparison table's values and Δ are, said under it: each
    column's basis where it is not a mean over sessions, and the test and
    Holm family behind the marks."""
    bases = [
        _("%(column)s: %(basis)s", column=metric_label(m.id), basis=str(m.basis))
        for m in table["columns"]
        if m.basis
    ]
    compared = any(cell["versus"] for row in table["rows"] for cell in row["cells"])
    unpaired = max(
        (
            (cell["versus"].get("unpaired_a") or 0)
            + (cell["versus"].get("unpaired_b") or 0)
            for row in table["rows"]
            for cell in row["cells"]
            if cell["versus"]
        ),
        default=0,
    )
    by = table.get("rank_metric")
    return {
        "rank": rank_caption(metric_label(by.id)) if by else "",
        # a run whose file lacks replies: what the pairing left out
        "unpaired": _(
            "Δ pairs only the sessions where both methods have a value: up to "
            "%(count)s sessions with a value of one of the two methods only "
            "(a reply missing in the file, or unscored) are left out of a Δ.",
            count=unpaired,
        )
        if unpaired
        else "",
        "values": _(
            "Values are means over sessions unless listed here: %(bases)s.",
            bases="; ".join(bases),
        )
        if bases
        else _("Values are means over sessions."),
        "delta": _(
            "Δ: a method's value − the value of %(baseline)s, on the column's "
            "basis, with a 95%% paired bootstrap interval (sessions resampled). "
            "Marks: Wilcoxon signed-rank on per-session values, Holm-adjusted "
            "within each column over its comparisons with %(baseline)s: "
            "* p < 0.05, ** p < 0.01, *** p < 0.001.",
            baseline=baseline,
        )
        if compared
        else "",
    }
