"""The judge report card (issue 58): each judge-validity quantity held to a
threshold, with one overall verdict a reader can act on (pure).

Each criterion is a row ``{criterion, value, n, threshold, rule, verdict,
applies}``; ``verdict`` is ``pass``, ``fail`` or ``not_measured`` (then
``reason``, ``reason_code`` and ``reason_params`` say why). ``applies``
says whether the run's design calls for the criterion (a pairwise suite
for position consistency, human labels for agreement, a panel for
inter-judge α, samples ≥ 2 for repeat-sample α, a judge and a method of
one model family for self-preference): a criterion that does not apply is
``not_measured`` and does not hold the verdict back. The rules
(``docs/metrics/report-card.md``):

* ``at_least``: pass when ``value ≥ threshold``;
* ``at_most_abs``: pass when ``|value| ≤ threshold``;
* ``interval_not_above``: fail when the interval's low end is above the
  threshold (the judge favours its own family's method), else pass.

A quantity measured per judge (a panel) is held to the threshold judge by
judge; the row shows the judge furthest from passing (``judge``).

The overall verdict: ``not_fit`` when a criterion fails (``failing`` names
them); else ``not_enough_evidence`` when a criterion that applies could not
be measured or none passed; else ``fit``.

>>> found = {"position_consistency": 0.92, "pairwise_comparisons": 40,
...          "length_spearman": {"j": 0.41}, "length_spearman_n": {"j": 80},
...          "reasons": {}, "reason_codes": {}}
>>> card = report_card(found, {"suites": ["alignment", "pairwise"],
...     "position_suite": "pairwise", "length_suite": "alignment",
...     "samples": 1, "judges": 1})
>>> [(row["criterion"], row["verdict"]) for row in card["report_card"][:2]]
[('position_consistency', 'pass'), ('length_spearman', 'fail')]
>>> card["report_card_verdict"], card["report_card_failing"]
('not_fit', ['length_spearman'])
"""

from __future__ import annotations

import math
from typing import Any

from metrics.notes import note
from metrics.stats import ZERO_WIDTH_NOTES

# criterion -> (rule, default threshold)
CRITERIA: dict[str, tuple[str, float]] = {
    "position_consistency": ("at_least", 0.8),
    "length_spearman": ("at_most_abs", 0.3),
    # the length-controlled pairwise model's length effect (docs/metrics/pairwise.md)
    "length_pairwise_effect": ("at_most_abs", 0.1),
    "human_al_spearman": ("at_least", 0.6),
    "human_binary_kappa": ("at_least", 0.6),
    "inter_judge_alpha": ("at_least", 0.667),
    "samples_alpha": ("at_least", 0.8),
    # score points of the difference-in-differences (metrics/self_preference.py)
    "self_preference": ("interval_not_above", 0.0),
    # a recorded judge (verdicts a file carried, made elsewhere): its ρ with
    # the human scores of each criterion, and its α with the run's judges
    "recorded_human_spearman": ("at_least", 0.6),
    "recorded_inter_judge_alpha": ("at_least", 0.667),
}
RECORDED_CRITERIA = ("recorded_human_spearman", "recorded_inter_judge_alpha")
DEFAULTS = {name: threshold for name, (_, threshold) in CRITERIA.items()}
# thresholds a protocol may set in [0, 1] (the rest: any number ≥ 0)
UNIT_THRESHOLDS = {
    "position_consistency",
    "human_al_spearman",
    "human_binary_kappa",
    "inter_judge_alpha",
    "samples_alpha",
    "length_spearman",
    *RECORDED_CRITERIA,
}
VERDICTS = ("fit", "not_fit", "not_enough_evidence")


def thresholds(given: dict[str, Any] | None) -> dict[str, float]:
    """The defaults with a protocol's ``[report_card]`` values over them.

    >>> thresholds({"length_spearman": 0.2})["length_spearman"]
    0.2
    >>> thresholds(None) == DEFAULTS
    True
    """
    return {
        **DEFAULTS,
        **{k: float(v) for k, v in (given or {}).items() if k in DEFAULTS},
    }


def report_card(
    found: dict[str, Any], context: dict[str, Any] | None = None
) -> dict[str, Any]:
    """``report_card``, ``report_card_verdict``, ``report_card_failing``
    and ``report_card_unmeasured`` from a ``judge_validity`` object.
    ``context``: ``suites`` (the run's), ``samples``, ``judges`` (their
    number), ``thresholds`` (a protocol's ``[report_card]``),
    ``position_suite`` and ``length_suite`` (the suites measuring position
    consistency and length ρ, from the registry: a suite's name is written
    in its own module only)."""
    context = context or {}
    limits = thresholds(context.get("thresholds"))
    suites = set(context.get("suites") or ())
    pairwise = context.get("position_suite") in suites
    alignment = context.get("length_suite") in suites
    reasons = found.get("reason_codes") or {}
    rows = [
        _position(found, pairwise, reasons),
        _per_judge(
            found,
            "length_spearman",
            "length_spearman",
            alignment,
            reasons,
            counts=found.get("length_spearman_n"),
        ),
        _length_pairwise(found, pairwise),
        *_human(found, alignment),
        _inter_judge(found, alignment, context.get("judges", 1), reasons),
        _samples(found, alignment, context.get("samples", 1), reasons),
        _self_preference(found.get("self_preference"), context),
        *recorded_rows(found.get("human")),
    ]
    for row in rows:
        rule, _ = CRITERIA[row["criterion"]]
        row["threshold"], row["rule"] = limits[row["criterion"]], rule
        if row["verdict"] is None:
            row["verdict"] = _verdict(row, rule, limits[row["criterion"]])
    return {"report_card": rows, **overall(rows)}


def overall(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The one line over the rows.

    >>> overall([{"criterion": "a", "verdict": "pass", "applies": True},
    ...          {"criterion": "b", "verdict": "not_measured", "applies": False}])
    {'report_card_verdict': 'fit', 'report_card_failing': [], 'report_card_unmeasured': []}
    >>> overall([{"criterion": "a", "verdict": "not_measured", "applies": True}])["report_card_verdict"]
    'not_enough_evidence'

    A recorded judge's rows are shown and hold no verdict of the run:

    >>> overall([{"criterion": "a", "verdict": "pass", "applies": True},
    ...          {"criterion": "b", "verdict": "fail", "applies": True,
    ...           "recorded": True}])["report_card_verdict"]
    'fit'
    """
    rows = [r for r in rows if not r.get("recorded")]  # the run's own judges
    failing = [r["criterion"] for r in rows if r["verdict"] == "fail"]
    unmeasured = [
        r["criterion"] for r in rows if r["verdict"] == "not_measured" and r["applies"]
    ]
    passed = any(r["verdict"] == "pass" for r in rows)
    if failing:
        verdict = "not_fit"
    elif unmeasured or not passed:
        verdict = "not_enough_evidence"
    else:
        verdict = "fit"
    return {
        "report_card_verdict": verdict,
        "report_card_failing": failing,
        "report_card_unmeasured": unmeasured,
    }


def _verdict(row: dict[str, Any], rule: str, threshold: float) -> str:
    value = row["value"]
    if value is None:
        return "not_measured"
    if rule == "at_least":
        return "pass" if value >= threshold else "fail"
    if rule == "at_most_abs":
        return "pass" if abs(value) <= threshold else "fail"
    low = row.get("ci_low")  # interval_not_above
    return "fail" if low is not None and low > threshold else "pass"


def _row(
    criterion: str,
    value: object,
    n: object,
    applies: bool,
    code: str | None = None,
    verdict: str | None = None,
    **params: object,
) -> dict[str, Any]:
    row: dict[str, Any] = {
        "criterion": criterion,
        "value": _finite(value),
        "n": n,
        "verdict": verdict,
        "applies": applies,
    }
    if row["value"] is None and verdict in (None, "not_measured"):
        code = code or "card_not_measured"
        row["verdict"] = "not_measured"
        row["reason_code"], row["reason_params"] = code, params
        row["reason"] = note(code, **params).english
    return row


def _finite(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _position(
    found: dict[str, Any], pairwise: bool, reasons: dict[str, Any]
) -> dict[str, Any]:
    if not pairwise:
        return _row("position_consistency", None, None, False, "card_no_pairwise")
    code = reasons.get("position_consistency") or "validity_no_comparisons"
    return _row(
        "position_consistency",
        found.get("position_consistency"),
        found.get("pairwise_comparisons"),
        True,
        code,
    )


def _worst(values: dict[str, Any], rule: str) -> tuple[str | None, float | None]:
    """The judge furthest from passing, and its value (None: none has one);
    of judges tied, the one whose name sorts first."""
    known = {j: values[j] for j in sorted(values) if _finite(values[j]) is not None}
    if not known:
        return None, None
    if rule == "at_most_abs":
        judge = max(known, key=lambda j: abs(known[j]))
    else:
        judge = min(known, key=lambda j: known[j])
    return judge, known[judge]


def _per_judge(
    found: dict[str, Any],
    criterion: str,
    key: str,
    applies: bool,
    reasons: dict[str, Any],
    counts: dict[str, Any] | None = None,
    why: str | None = None,
) -> dict[str, Any]:
    """A quantity given per judge (``{judge: value}``) or for the run."""
    if not applies:
        return _row(criterion, None, None, False, why or "card_no_alignment")
    value = found.get(key)
    code = reasons.get(key) or "validity_no_variance"
    if isinstance(value, dict):
        judge, worst = _worst(value, CRITERIA[criterion][0])
        n = (
            counts.get(judge)
            if isinstance(counts, dict) and judge is not None
            else None
        )
        row = _row(criterion, worst, n, True, code)
        if judge is not None and (len(value) > 1 or judge):
            row["judge"] = judge
        return row
    n = counts if isinstance(counts, int) else None
    return _row(criterion, value, n, True, code)


def _length_pairwise(found: dict[str, Any], pairwise: bool) -> dict[str, Any]:
    """The length-controlled pairwise model's length effect (``{value, n,
    ci_low, ci_high}``), when this release computes it."""
    if not pairwise:
        return _row("length_pairwise_effect", None, None, False, "card_no_pairwise")
    effect = found.get("length_pairwise_effect")
    if not isinstance(effect, dict):
        code = (found.get("reason_codes") or {}).get("length_pairwise_effect")
        return _row(
            "length_pairwise_effect", None, None, True, code or "card_not_computed"
        )
    row = _row(
        "length_pairwise_effect",
        effect.get("value"),
        effect.get("n"),
        True,
        effect.get("reason_code") or "validity_no_comparisons",
    )
    row["ci_low"], row["ci_high"] = effect.get("ci_low"), effect.get("ci_high")
    return row


HUMAN_PARTS = (
    ("human_al_spearman", "al_spearman", "n_al"),
    ("human_binary_kappa", "binary_kappa", "n_binary"),
)


def _human(found: dict[str, Any], alignment: bool) -> list[dict[str, Any]]:
    """ρ with the human AL labels and κ with the binary ones, each judge on
    its own (the worst shown); κ with the labels' majority-class share."""
    human = found.get("human") if alignment else None
    rows = []
    for criterion, key, rested in HUMAN_PARTS:
        judges = {j: a for j, a in (human or {}).items() if isinstance(a, dict)}
        labelled = {j: a for j, a in judges.items() if (a.get(rested) or 0) > 0}
        if not labelled:
            code = "card_no_alignment" if not alignment else "validity_no_human"
            rows.append(_row(criterion, None, None, False, code))
            continue
        judge, worst = _worst({j: a.get(key) for j, a in labelled.items()}, "at_least")
        picked = labelled[judge if judge is not None else sorted(labelled)[0]]
        code = (
            "kappa_one_class"
            if key == "binary_kappa"
            else "agreement_one_side_constant"
        )
        if (picked.get(rested) or 0) < 2:
            code = "agreement_too_few"
        row = _row(criterion, worst, picked.get(rested), True, code)
        if judge is not None and (len(labelled) > 1 or judge):
            row["judge"] = judge
        if key == "binary_kappa":
            row["base_rate"] = picked.get("binary_base_rate")
            if "majority_tied" in picked:
                row["majority_tied"] = picked.get("majority_tied")
        rows.append(row)
    return rows


def _inter_judge(
    found: dict[str, Any], alignment: bool, judges: int, reasons: dict[str, Any]
) -> dict[str, Any]:
    if not alignment:
        return _row("inter_judge_alpha", None, None, False, "card_no_alignment")
    if judges < 2:
        return _row("inter_judge_alpha", None, None, False, "validity_one_judge")
    code = reasons.get("inter_judge_alpha") or "validity_no_variance"
    return _row(
        "inter_judge_alpha",
        found.get("inter_judge_alpha"),
        found.get("inter_judge_alpha_n"),
        True,
        code,
    )


def _samples(
    found: dict[str, Any], alignment: bool, samples: int, reasons: dict[str, Any]
) -> dict[str, Any]:
    if alignment and samples < 2:
        return _row("samples_alpha", None, None, False, "validity_one_sample")
    return _per_judge(
        found,
        "samples_alpha",
        "samples_alpha",
        alignment,
        reasons,
        counts=found.get("samples_alpha_n"),
    )


def _above(estimate: dict[str, Any], threshold: float) -> bool:
    """Whether an estimate's interval lies above the threshold; an
    interval of width 0 (``ci_no_variation``: every session's difference the
    same) is its value.

    >>> _above({"value": 6.0, "ci_low": None, "ci_note": "ci_no_variation"}, 0.0)
    True
    >>> _above({"value": 6.0, "ci_low": -1.0}, 0.0), _above({"value": 0.0,
    ...     "ci_low": None, "ci_note": "ci_no_variation"}, 0.0)
    (False, False)
    """
    low = estimate.get("ci_low")
    if low is None and estimate.get("ci_note") in ZERO_WIDTH_NOTES:
        low = estimate.get("value")
    return low is not None and low > threshold


def _self_preference(
    found: list[dict[str, Any]] | None, context: dict[str, Any]
) -> dict[str, Any]:
    """Flagged when a judge and a method share a model family; fails when a
    difference-in-differences interval lies above the threshold (the judge
    favours its family's method). The row shows the largest estimate."""
    if found is None:
        code = context.get("self_preference_reason") or "card_no_families"
        applies = code == "self_preference_not_aggregated"
        return _row("self_preference", None, None, applies, code)
    shared = [{k: e.get(k) for k in ("judge", "method", "family")} for e in found]
    if not shared:
        return _row(
            "self_preference",
            None,
            None,
            False,
            "card_no_shared_family",
            verdict="not_measured",
        ) | {"shared": []}
    measured = [e for e in found if _finite(e.get("value")) is not None]
    if not measured:
        first = found[0]
        code = first.get("reason_code") or "self_preference_no_other_family"
        row = _row(
            "self_preference",
            None,
            None,
            True,
            code,
            **(first.get("reason_params") or {}),
        )
        return row | {"shared": shared}
    threshold = thresholds(context.get("thresholds"))["self_preference"]
    failing = [e for e in measured if _above(e, threshold)]
    shown = max(failing or measured, key=lambda e: e["value"])
    row = _row(
        "self_preference",
        shown["value"],
        shown.get("n"),
        True,
        verdict="fail" if failing else None,
    )
    row |= {
        "ci_low": shown.get("ci_low"),
        "ci_high": shown.get("ci_high"),
        **({"ci_note": shown["ci_note"]} if shown.get("ci_note") else {}),
        "judge": shown.get("judge"),
        "method": shown.get("method"),
        "shared": shared,
    }
    unmeasured = len(found) - len(measured)
    if unmeasured and not failing:  # a pair that could not be told: no pass
        row["verdict"] = "not_measured"
        first = next(e for e in found if _finite(e.get("value")) is None)
        code = first.get("reason_code") or "self_preference_no_other_family"
        row["reason_code"], row["reason_params"] = (
            code,
            first.get("reason_params") or {},
        )
        row["reason"] = note(code, **row["reason_params"]).english
    return row


def _scale_name(entry: dict[str, Any]) -> str:
    """A criterion and its scale as the card names it: ``engagement (1–5)``."""
    low, high = (entry.get("scale") or [None, None])[:2]
    return f"{entry.get('criterion')} ({low}–{high})"


def recorded_rows(human: dict[str, Any] | None) -> list[dict[str, Any]]:
    """For each recorded judge (``human.<judge>.recorded``, verdicts a file
    carried), in name order: its Spearman ρ with the human scores, the
    criterion furthest from passing shown (``scale_criterion``, with that
    criterion's n and interval); and, where judges of the run scored the
    same criteria, its Krippendorff α with them (the lowest, ``with`` naming
    that judge). Each row is marked ``recorded`` and holds no verdict of
    the run (:func:`overall`).

    >>> human = {"CJ/zh": {"recorded": True, "n": 9, "scores": {"e:1-5": {
    ...     "criterion": "e", "scale": [1, 5], "spearman": 0.42, "n": 9,
    ...     "spearman_ci": [0.1, 0.7], "alpha_with": {"j": {"alpha": 0.7, "n": 9}}},
    ...     "m:1-3": {"criterion": "m", "scale": [1, 3], "spearman": 0.8, "n": 8}}},
    ...     "j": {"n": 9, "scores": {}}}
    >>> [(r["criterion"], r["judge"], r["value"], r["scale_criterion"], r["n"])
    ...  for r in recorded_rows(human)]
    [('recorded_human_spearman', 'CJ/zh', 0.42, 'e (1–5)', 9), ('recorded_inter_judge_alpha', 'CJ/zh', 0.7, 'e (1–5)', 9)]
    """
    rows = []
    human = human or {}
    for judge in sorted(j for j, a in human.items() if _recorded(a)):
        scores = [e for e in (human[judge].get("scores") or {}).values() if e]
        rows.append(_recorded_spearman(judge, scores))
        pairs = [
            (entry, live, found)
            for entry in scores
            for live, found in sorted((entry.get("alpha_with") or {}).items())
        ]
        if pairs:
            rows.append(_recorded_alpha(judge, pairs))
    return rows


def _recorded(entry: object) -> bool:
    return isinstance(entry, dict) and bool(entry.get("recorded"))


def _recorded_spearman(judge: str, scores: list[dict[str, Any]]) -> dict[str, Any]:
    known = [e for e in scores if _finite(e.get("spearman")) is not None]
    if not known:
        first = scores[0] if scores else {}
        code = (
            "agreement_too_few"
            if (first.get("n") or 0) < 2
            else "agreement_one_side_constant"
        )
        row = _row("recorded_human_spearman", None, first.get("n"), True, code)
        return row | {"judge": judge, "recorded": True}
    worst = min(known, key=lambda e: (e["spearman"], _scale_name(e)))
    row = _row("recorded_human_spearman", worst["spearman"], worst.get("n"), True)
    interval = worst.get("spearman_ci") or [None, None]
    return row | {
        "judge": judge,
        "recorded": True,
        "scale_criterion": _scale_name(worst),
        "ci_low": interval[0],
        "ci_high": interval[1],
    }


def _recorded_alpha(
    judge: str, pairs: list[tuple[dict[str, Any], str, dict[str, Any]]]
) -> dict[str, Any]:
    known = [p for p in pairs if _finite(p[2].get("alpha")) is not None]
    if not known:
        entry, live, found = pairs[0]
        row = _row(
            "recorded_inter_judge_alpha",
            None,
            found.get("n"),
            True,
            "validity_no_variance",
        )
        return row | {"judge": judge, "recorded": True, "with": live}
    entry, live, found = min(
        known, key=lambda p: (p[2]["alpha"], _scale_name(p[0]), p[1])
    )
    row = _row("recorded_inter_judge_alpha", found["alpha"], found.get("n"), True)
    return row | {
        "judge": judge,
        "recorded": True,
        "with": live,
        "scale_criterion": _scale_name(entry),
    }
