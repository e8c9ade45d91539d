"""Comparison tables: methods x a suite's summary metrics, with each Δ on
its column's basis (the difference of the values shown, with an interval
from resampled sessions, ``metrics/basis.py``) and marks from Δ's paired
permutation test on the same parts (``basis.delta_permutation_p``),
Holm-adjusted within the column over its comparisons with the baseline, or
across every column of the table (``holm="table"``).
The dashboard, the comparison page and the paper exports all read these."""

from __future__ import annotations

from typing import Any

from metrics import rank_groups, registry, stats
from metrics.basis import PERMUTATION_SAMPLED
from metrics.counts import count_key
from metrics.notes import translate
from metrics.registry import spec
from metrics.results import summary_notes
from metrics.suite import Metric
from reports import Reported
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
    summary: dict[str, Any], methods: list[str], metric_id: str, percent: bool = False
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


def versus_baseline(
    comparisons: list[dict[str, Any]], metric: str, baseline: str, method: str
) -> dict[str, Any] | None:
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


def on_value_basis(
    versus: dict[str, Any], value: float | None, baseline_value: float | None
) -> dict[str, Any]:
    """A comparison as a table shows it: Δ is the difference of the two
    values shown, with the interval of that difference (sessions
    resampled, ``metrics/basis.py``) and its p from the paired permutation
    test on the same parts (``delta_p``): one basis per cell. The
    session-level paired mean difference stays as ``paired_diff``, its
    Wilcoxon p as ``wilcoxon_p``. A run aggregated before Δ had its own
    interval (or its own test) shows Δ without one (or without a mark).

    >>> shown = on_value_basis({"diff": 1.5, "ci_low": 1.0, "ci_high": 2.0,
    ...     "p_value": 0.04, "delta_p": 0.5, "delta_test": "permutation_exact"}, 62.5, 60.0)
    >>> shown["diff"], shown["ci_low"], shown["paired_diff"], shown["p_value"], shown["wilcoxon_p"]
    (2.5, None, 1.5, 0.5, 0.04)
    """
    delta = None if value is None or baseline_value is None else value - baseline_value
    return {
        **versus,
        "paired_diff": versus.get("diff"),
        "paired_ci": (versus.get("ci_low"), versus.get("ci_high")),
        "wilcoxon_p": versus.get("p_value"),
        "diff": delta,
        "ci_low": versus.get("delta_ci_low") if delta is not None else None,
        "ci_high": versus.get("delta_ci_high") if delta is not None else None,
        "p_value": versus.get("delta_p") if delta is not None else None,
        "p_holm": None,
        "test": versus.get("delta_test") if delta is not None else None,
    }


def comparison_table(
    run: Reported,
    baseline: str,
    suite: str,
    percent: bool = False,
    holm: str = "metric",
) -> dict[str, Any]:
    """Methods x the suite's summary metrics that are table columns (the
    charts show the others, e.g. radar dimensions and CI ends). Each Δ is
    on its column's basis (the difference of the values shown); its marks
    come from Δ's paired permutation test, Holm-adjusted over the column's
    comparisons with the baseline (``holm="metric"``, the family this
    table shows, the same on every page) or over every comparison with the
    baseline in the table (``holm="table"``: a claim resting on several
    columns)."""
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
    _adjust(versus, holm)
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
        "holm_family": holm,
    }


def _adjust(versus: dict[str, dict[str, Any]], holm: str) -> None:
    """Holm over each column's comparisons with the baseline, or over every
    comparison of the table; each comparison says its family's size."""
    families = (
        [list(v.values()) for v in versus.values()]
        if holm == "metric"
        else [[c for v in versus.values() for c in v.values()]]
    )
    for family in families:
        adjusted = stats.holm([c["p_value"] for c in family])
        size = sum(1 for p in adjusted if p is not None)
        for shown, p_holm in zip(family, adjusted, strict=True):
            shown.update(p_holm=p_holm, family_size=size, holm_family=holm)


def shared_notes(
    columns: list[Metric], rows: list[dict[str, Any]]
) -> list[dict[str, Any]]:
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
    comparisons: list[dict[str, Any]],
    summary: dict[str, Any],
    metric: Metric,
    methods: list[str],
    baseline: str,
    percent: bool = False,
) -> dict[str, Any]:
    """Per method, its comparison with the baseline on this column, on the
    column's basis (Holm-adjusted by :func:`_adjust`).
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
    return found


def _note(found: dict[str, Any] | None) -> str | None:
    return translate(found["code"], found.get("params"), None) if found else None


def value_title(cell: dict[str, Any]) -> str:
    """What a summary value is and how many sessions stand behind it."""
    metric, n = cell["metric"], cell["n"]
    basis = str(metric.basis) if metric.basis else _("mean over sessions")
    if n is None:
        return basis
    return _("%(basis)s; %(n)s sessions", basis=basis, n=n)


def delta_title(cell: dict[str, Any], method: str, baseline: str) -> str:
    """The basis of the Δ beside a value, and its test."""
    versus, metric = cell["versus"], cell["metric"]
    text = _(
        "Δ = the value of %(method)s − the value of %(baseline)s (%(basis)s).",
        method=method,
        baseline=baseline,
        basis=basis_of(metric),
    )
    if versus.get("ci_low") is not None and (versus.get("n") or 0) < (
        stats.EXACT_BOOTSTRAP_BELOW
    ):
        text += " " + _(
            "95%% interval: the exact bootstrap distribution of the %(n)s "
            "paired sessions (every resample weighted by its probability), "
            "both values recomputed.",
            n=versus.get("n"),
        )
    elif versus.get("ci_low") is not None:
        text += " " + _(
            "95%% interval: %(resamples)s paired resamples of the sessions, "
            "both values recomputed.",
            resamples=stats.BOOTSTRAP_RESAMPLES,
        )
    if versus.get("p_holm") is not None:
        text += " " + p_sentence(versus)
        text += " " + holm_sentence(versus, baseline)
    if versus.get("wilcoxon_p") is not None:
        text += " " + _(
            "Wilcoxon signed-rank p on the per-session %(source)s over the "
            "%(n)s sessions both methods scored (another basis, not the "
            "mark's): %(p)s.",
            source=metric_label(metric.compare),
            n=versus["n"],
            p=p_value(versus["wilcoxon_p"]),
        )
    return text


def p_sentence(versus: dict[str, Any]) -> str:
    """Δ's test and its p, in the reader's language."""
    if versus.get("test") == PERMUTATION_SAMPLED:
        return _(
            "Paired permutation test of Δ (each session's parts of the two "
            "methods kept or swapped, both values recomputed; "
            "%(assignments)s seeded random assignments): p = %(p)s.",
            assignments=f"{versus.get('delta_p_assignments') or 0:,}",
            p=p_value(versus["p_value"]),
        )
    return _(
        "Paired permutation test of Δ (each session's parts of the two "
        "methods kept or swapped, both values recomputed; all "
        "%(assignments)s assignments): p = %(p)s.",
        assignments=f"{versus.get('delta_p_assignments') or 0:,}",
        p=p_value(versus["p_value"]),
    )


def holm_sentence(versus: dict[str, Any], baseline: str) -> str:
    """The Holm family of a cell's p and its adjusted p."""
    if versus.get("holm_family") == "table":
        return _(
            "Holm-adjusted over the %(family)s comparison(s) with %(baseline)s "
            "in this table (every column): %(p_holm)s.",
            family=versus["family_size"],
            baseline=baseline,
            p_holm=p_value(versus["p_holm"]),
        )
    return _(
        "Holm-adjusted over the %(family)s comparison(s) with %(baseline)s in "
        "this column: %(p_holm)s.",
        family=versus["family_size"],
        baseline=baseline,
        p_holm=p_value(versus["p_holm"]),
    )


def basis_of(metric: Metric) -> str:
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


def table_caption(table: dict[str, Any], baseline: str) -> dict[str, Any]:
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
        "delta": _delta_caption(table, baseline) if compared else "",
    }


def _delta_caption(table: dict[str, Any], baseline: str) -> str:
    """What Δ, its interval and its marks are, and the marks' Holm family."""
    text = _(
        "Δ: a method's value − the value of %(baseline)s, on the column's "
        "basis, with a 95%% paired bootstrap interval (sessions resampled). "
        "Marks: a paired permutation test of Δ on the same basis (each "
        "session's parts of the two methods kept or swapped, both values "
        "recomputed): * p < 0.05, ** p < 0.01, *** p < 0.001.",
        baseline=baseline,
    )
    if table.get("holm_family") == "table":
        return (
            text
            + " "
            + _(
                "Holm family: every comparison with %(baseline)s in this table "
                "(all columns together).",
                baseline=baseline,
            )
        )
    return (
        text
        + " "
        + _(
            "Holm family: each column's comparisons with %(baseline)s "
            "(Holm-adjusted within each column over its comparisons with "
            "%(baseline)s).",
            baseline=baseline,
        )
    )
