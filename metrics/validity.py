"""The results' ``judge_validity`` object: how far the judge can be trusted.

Suites measure what they can (``SuiteSummary["validity"]``; the pairwise
suite measures position bias); this module names every quantity once and
says, for each that is ``null``, why. A missing quantity is never a number.

>>> found = judge_validity({"position_consistency": 0.75, "first_position_rate": None,
...                         "pairwise_comparisons": 8}, [measuring("first_position_rate")])
>>> found["position_consistency"], found["first_position_rate"]
(0.75, None)
>>> found["reasons"]["first_position_rate"]
'every single-order verdict was a tie'
>>> judge_validity({}, [])["reasons"]["position_consistency"]
'the pairwise suite did not run'
"""

from __future__ import annotations

from typing import Any

from metrics import registry, report_card, self_preference
from metrics.notes import note

# reported beside the quantities: counts, and per-method details
COUNTS = (
    "pairwise_comparisons",
    "length_spearman_by_method",
    "first_position_rate_n",
    "length_spearman_n",
    "length_spearman_by_method_n",
    "cross_mode_auc_n",
    "samples_alpha_n",
    "inter_judge_alpha_n",
)
# given beside the suites' quantities when the run measured them: the
# self-preference estimates (metrics/self_preference.py) and the
# length-controlled pairwise model's length effect
EXTRA = (
    "self_preference",
    "length_pairwise_effect",
    "judge_offsets",
    "recorded_judges",
)
# {judge model: value}: a panel's judges are measured each on its own
PER_JUDGE = (
    "length_spearman",
    "length_spearman_by_method",
    "cross_mode_auc",
    "human",
    "samples_alpha",
    "length_spearman_n",
    "length_spearman_by_method_n",
    "cross_mode_auc_n",
    "samples_alpha_n",
)
# what each quantity's n counts: its key in the results (None: in the
# value, as the human agreement's n), and what it is in the reader's words
N_OF = {
    "position_consistency": "pairwise_comparisons",
    "first_position_rate": "first_position_rate_n",
    "length_spearman": "length_spearman_n",
    "cross_mode_auc": "cross_mode_auc_n",
    "samples_alpha": "samples_alpha_n",
    "inter_judge_alpha": "inter_judge_alpha_n",
    "human": None,
    "length_pairwise_effect": None,  # its n is in the value (sessions)
}


def quantities() -> dict[str, tuple[str, str]]:
    """quantity -> (the suite measuring it, why it can be missing when it ran)."""
    return {
        name: (suite.name, missing)
        for suite in registry.suites()
        for name, missing in suite.validity
    }


def measuring(quantity: str) -> str:
    """The suite that measures ``quantity``."""
    return quantities()[quantity][0]


def run_context(run: object) -> dict[str, Any]:
    """What a run's settings say about why a quantity can be missing, the
    model families it named and its protocol's report-card thresholds."""
    from metrics import protocols

    judge = getattr(run, "judge", None) or {}
    models = judge.get("models") or ([judge["model"]] if judge.get("model") else [])
    try:
        limits = protocols.from_options(getattr(run, "options", None) or {}).report_card
    except (protocols.ProtocolError, KeyError, TypeError):
        limits = {}
    return {
        "samples": judge.get("samples") or 1,
        "judges": len(models),
        "status": getattr(run, "status", None),
        "families": getattr(run, "families", None),
        "thresholds": limits,
    }


def true_reason(name: str, code: str, context: dict[str, Any]) -> str:
    """The reason for the run as it was: a samples = 3 run never hears "one
    judge sample per item", a panel never "one judge model", a cancelled
    run is said to be cancelled.

    >>> true_reason("samples_alpha", "validity_one_sample", {"samples": 3})
    'validity_no_variance'
    >>> true_reason("human", "validity_no_human", {"status": "cancelled"})
    'validity_run_cancelled'
    """
    if context.get("status") == "cancelled" and code != "validity_suite_missing":
        return "validity_run_cancelled"
    if code == "validity_one_sample" and context.get("samples", 1) >= 2:
        return "validity_no_variance"
    if code == "validity_one_judge" and context.get("judges", 1) >= 2:
        return "validity_no_variance"
    return code


def judge_validity(
    measured: dict[str, Any],
    suites: list[str],
    judge: str | None = None,
    context: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Every quantity (None with a reason when missing); per-judge ones
    (``length_spearman``) keyed by the judge model. ``context``: what the
    run's settings were (:func:`run_context`), for reasons that are true."""
    known = quantities()
    found: dict[str, Any] = {
        name: measured.get(name) for name in [*known, *COUNTS, *EXTRA]
    }
    for name in PER_JUDGE:  # rows that name no judge: the run's one judge
        value = found.get(name)
        # one value for the run: a number, or (earlier releases) one human dict
        if isinstance(value, (int, float)) or (
            isinstance(value, dict) and "n" in value
        ):
            value = {"": value}
        if isinstance(value, dict):
            found[name] = {(key or judge or "judge"): v for key, v in value.items()}
    reasons, codes = {}, {}
    for name, (suite, missing) in known.items():
        if found[name] is not None:
            continue
        code = missing if suite in suites else "validity_suite_missing"
        code = true_reason(name, code, context or {})
        reasons[name] = note(code, suite=suite).english
        codes[name] = code
    context = context or {}
    if found["self_preference"] is None:
        code = _self_preference_missing(context.get("families"))
        reasons["self_preference"] = note(code).english
        codes["self_preference"] = code
    found = {**found, "reasons": reasons, "reason_codes": codes}
    card = report_card.report_card(
        found,
        {
            **context,
            "suites": suites,
            "position_suite": _suite_of("position_consistency"),
            "length_suite": _suite_of("length_spearman"),
            "self_preference_reason": codes.get("self_preference"),
        },
    )
    return {**found, **card}


def _suite_of(quantity: str) -> str | None:
    """The suite measuring ``quantity`` (None: no suite does)."""
    found = quantities().get(quantity)
    return found[0] if found else None


def _self_preference_missing(families: dict[str, Any] | None) -> str:
    """Why a run has no self-preference estimates: it named no families,
    or (named) it was aggregated before this release."""
    if self_preference.shared(families):
        return "self_preference_not_aggregated"
    return "card_no_shared_family" if families else "card_no_families"
