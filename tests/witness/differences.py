"""Where a results document and the witness differ: every block of the
document (summary, curves, comparisons, bootstrap intervals, counts, judge
validity) against ``tests/witness/reference.py`` computed from a document's
rows, as ``(path, witness, document)`` triples. ``reference_doc`` is the
document whose rows the witness reads (the product's own, or the rows a plan
implies); ``doc`` is what the product published."""

from __future__ import annotations

import math
from typing import Any

from tests.witness import reference as ref

# Summary keys whose values come from the product's random stream: checked by
# ``interval_checks`` against the exact bootstrap distribution instead.
RANDOM_SUMMARY_KEYS = {
    "pairwise_winrate_ci_low",
    "pairwise_winrate_ci_high",
    "bt_ci_low",
    "bt_ci_high",
    # length control (pairwise.md): bootstrap ends, not checked by the witness
    "pairwise_winrate_lc_ci_low",
    "pairwise_winrate_lc_ci_high",
    "bt_lc_ci_low",
    "bt_lc_ci_high",
    "pairwise_longer_wins_rate_ci_low",
    "pairwise_longer_wins_rate_ci_high",
    "bt_resamples_left_out",  # separated resamples of the product's stream
}
COMPARED_FIELDS = (
    "n",
    "n_zero",
    "diff",
    "p_value",
    "p_holm",
    "effect_size",
    "effect_size_name",
    "rank_biserial",
    "sd_diff",
    "sessions_for_80_power",
    "sessions_for_80_power_note",
    "test",
    "family",
    "value_metric",
    "delta",
)


def close(mine: Any, theirs: Any) -> bool:
    if mine is None or theirs is None or isinstance(mine, str | bool):
        return mine == theirs
    return math.isclose(mine, theirs, rel_tol=1e-9, abs_tol=1e-12)


def _is_count(key: str) -> bool:
    base = key.partition("@")[0]
    return base.endswith("_n") or base == "pairwise_comparisons"


def publishes_nothing(value: Any, counted: bool = False) -> bool:
    """None, or a dict or list holding nothing but such values; a count
    (``counted``: a key ending in ``_n``) of 0 beside them says nothing
    either: {"judge-a": {"M": null}}, {"judge-a": 0} under ``…_n`` and null
    publish the same nothing."""
    if isinstance(value, dict):
        return all(
            publishes_nothing(v, counted or _is_count(k)) for k, v in value.items()
        )
    if isinstance(value, list):
        return all(publishes_nothing(v, counted) for v in value)
    return value is None or (counted and value == 0)


def differences(mine: Any, theirs: Any, path: str) -> list[tuple[str, Any, Any]]:
    """(path, mine, theirs) wherever ``mine`` and the document differ,
    recursing into dicts (``mine``'s keys) and lists."""
    counted = any(_is_count(part) for part in path.split("."))  # under a count
    # a report card row's n is its quantity's count (report-card.md)
    counted = counted or (".report_card[" in path and path.endswith(".n"))
    if theirs is None and publishes_nothing(mine, counted):
        return []
    if isinstance(mine, dict):
        if not isinstance(theirs, dict):
            return [(path, mine, theirs)]
        found = []
        for key, value in mine.items():
            if key not in theirs:
                if not publishes_nothing(value, counted or _is_count(key)):
                    found.append((f"{path}.{key}", value, "<absent>"))
            else:
                found += differences(value, theirs[key], f"{path}.{key}")
        return found
    if isinstance(mine, list):
        if not isinstance(theirs, list) or len(mine) != len(theirs):
            return [(path, mine, theirs)]
        return [
            d
            for i, (a, b) in enumerate(zip(mine, theirs, strict=True))
            for d in differences(a, b, f"{path}[{i}]")
        ]
    if counted and {mine, theirs} <= {None, 0}:
        return []  # a count of nothing, given as 0 or null
    return [] if close(mine, theirs) else [(path, mine, theirs)]


def summary_differences(
    doc: dict[str, Any], reference_doc: dict[str, Any] | None = None
) -> list[tuple[str, Any, Any]]:
    mine = ref.summary(reference_doc or doc)
    found = differences(mine, doc["summary"], "summary")
    for method, values in doc["summary"].items():
        for key in set(values) - set(mine.get(method, {})) - RANDOM_SUMMARY_KEYS:
            found.append((f"summary.{method}.{key}", "<not computed>", values[key]))
    return found


def _numbers(comparison: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in comparison.items() if k != "n" and not isinstance(v, str)}


def comparison_differences(
    doc: dict[str, Any], reference_doc: dict[str, Any] | None = None
) -> list[tuple[str, Any, Any]]:
    found_by_witness = ref.comparisons(reference_doc or doc)
    mine = {(c["metric"], c["a"], c["b"]): c for c in found_by_witness}
    theirs = {(c["metric"], c["a"], c["b"]): c for c in doc["comparisons"]}
    found = [
        (f"comparisons.{k}", "<absent>", theirs[k]) for k in set(theirs) - set(mine)
    ]
    found += [
        (f"comparisons.{k}", mine[k], "<absent>")
        for k in set(mine) - set(theirs)
        if mine[k]["n"] or not publishes_nothing(_numbers(mine[k]))
    ]  # a comparison of no pair publishes nothing
    for key in set(mine) & set(theirs):
        for field in COMPARED_FIELDS:
            path = f"comparisons.{key}.{field}"
            found += differences(mine[key][field], theirs[key].get(field), path)
    return found


def count_differences(
    doc: dict[str, Any], reference_doc: dict[str, Any] | None = None
) -> list[tuple[str, Any, Any]]:
    """The header's documented counts against the rows' statuses
    (results-format "Row statuses")."""
    by_status = ref.counts(reference_doc or doc)
    header = doc["run"]["counts"]
    pairs = {
        "unscored": "unscored",
        "errors": "error",
        "not_configured": "not_configured",
        "not_applicable": "not_applicable",
        "missing_rows": "missing",
    }
    return [
        (f"counts.{key}", by_status.get(status, 0), header[key])
        for key, status in pairs.items()
        if by_status.get(status, 0) != header[key]
    ]


def interval_differences(
    doc: dict[str, Any], reference_doc: dict[str, Any] | None = None
) -> list[tuple[str, Any, Any]]:
    """The document's intervals, checked on the witness's rows."""
    checked = ref.interval_checks({**doc, "rows": (reference_doc or doc)["rows"]})
    return [
        (f"{c['what']}.{c['where']}", "outside the exact bootstrap band", c)
        for c in checked
        if not c["ok"]
    ]


def curve_differences(
    doc: dict[str, Any], reference_doc: dict[str, Any] | None = None
) -> list[tuple[str, Any, Any]]:
    return differences(ref.curves(reference_doc or doc), doc["curves"], "curves")


def validity_differences(
    doc: dict[str, Any], reference_doc: dict[str, Any] | None = None
) -> list[tuple[str, Any, Any]]:
    # position consistency and the length effect on pairwise verdicts come
    # from the document (rows do not say them; checks.position_checks holds
    # them to the plan): the report card reads them
    borrowed = {**(reference_doc or doc), "judge_validity": doc["judge_validity"]}
    mine = ref.judge_validity(borrowed)
    return differences(mine, doc["judge_validity"], "judge_validity")


BLOCKS = {
    "summary": summary_differences,
    "curves": curve_differences,
    "comparisons": comparison_differences,
    "intervals": interval_differences,
    "counts": count_differences,
    "judge_validity": validity_differences,
}
