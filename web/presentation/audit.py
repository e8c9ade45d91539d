"""The dashboard's "Judge audit": the results' ``judge_validity`` with what
each quantity means and the threshold a reader should hold it to, in the
reader's language (``metrics/validity.py`` says why a quantity is missing)."""

from __future__ import annotations

from core.i18n import _l
from metrics import notes
from metrics.validity import judge_validity, measuring, run_context
from reports.formatting import count, number

EXPLAINED = {
    "position_consistency": (
        _l("Position consistency"),
        _l("Share of pairwise comparisons whose verdict stayed the same when the "
           "two replies swapped places. 1 is fully consistent; below about 0.8 the "
           "order of the replies sways the judge, so read the pairwise results "
           "with care (flips already count as ties)."),
    ),
    "first_position_rate": (
        _l("First-position rate"),
        _l("Among single-order verdicts that named a winner, the share that chose "
           "the reply shown first. 0.5 is no preference; beyond about 0.6 (or "
           "below 0.4) the judge favours one position."),
    ),
    "length_spearman": (
        _l("Length bias"),
        _l("Spearman ρ between response length and the judge's AL within each "
           "method (pooling methods would read a better method's longer replies "
           "as bias), combined as the mean weighted by each method's items; each "
           "method's ρ is in brackets. Near 0 the judge ignores length; above "
           "about 0.3 longer replies score higher, so compare methods on the "
           "length-controlled AL as well."),
    ),
    "cross_mode_auc": (
        _l("Score–verdict agreement (AUC)"),
        _l("How well the AL score separates the judge's own keep-chatting "
           "verdicts 1 from 0 on the same items: 1 is perfect, 0.5 is chance. "
           "Below about 0.7 the two judge modes disagree."),
    ),
    "samples_alpha": (
        _l("Self-consistency across samples"),
        _l("Krippendorff's α (interval) between the judge's samples of the same "
           "item. 1 is a judge that repeats itself; below about 0.8 its scores "
           "are noisy, so use more samples."),
    ),
    "inter_judge_alpha": (
        _l("Agreement between the panel's judges"),
        _l("Krippendorff's α (interval) of the judge models' AL on the same items. "
           "Above about 0.8 the judges agree; below about 0.67 the panel mean "
           "hides real disagreement, so look at each judge's AL average too."),
    ),
    "human": (
        _l("Agreement with human labels"),
        _l("Spearman ρ and Kendall τ between AL and the human scores, Cohen's κ "
           "between the binary verdicts and the human ones. Above about 0.6 (ρ) "
           "or 0.4 (κ) the judge tracks the humans moderately; n is the number "
           "of labelled items."),
    ),
}  # fmt: skip


def shown(key: str, value) -> str:
    """A quantity as the audit table shows it.

    >>> shown("length_spearman", {"gpt-x": 0.91234})
    'gpt-x: 0.912'
    """
    if value is None:
        return "—"
    if key == "human":  # {judge: agreement}
        return "; ".join(
            f"{judge}: {_agreement(found)}" if len(value) > 1 else _agreement(found)
            for judge, found in value.items()
        )
    if isinstance(value, dict):
        return "; ".join(f"{judge}: {number(v, 3)}" for judge, v in value.items())
    return number(value, 3)


def _agreement(value: dict) -> str:
    parts = [
        f"{label} {number(value[name], 3)}"
        for label, name in (("ρ", "al_spearman"), ("τ", "al_kendall"),
                            ("κ", "binary_kappa"))
        if value.get(name) is not None
    ]  # fmt: skip
    return " · ".join([*parts, f"n={count(value.get('n'))}"])


def per_method(found: dict) -> str:
    """Each method's ρ, per judge.

    >>> per_method({"j": {"A": -1.0, "B": None}})
    '[j: A −1.000, B —]'
    """
    parts = []
    for judge, methods in found.items():
        shown_ = ", ".join(f"{m} {signed_number(v)}" for m, v in methods.items())
        parts.append(f"{judge}: {shown_}" if judge else shown_)
    return "[" + "; ".join(parts) + "]"


def signed_number(value) -> str:
    return "—" if value is None else number(value, 3).replace("-", "−")


def audit_rows(run) -> list[dict] | None:
    """One row per quantity, or None when the run had no judge at all."""
    if not run.judge:
        return None
    measured = (run.aggregates or {}).get("judge_validity") or {}
    found = judge_validity(
        measured, list(run.suites), run.judge.get("model"), run_context(run)
    )
    rows = []
    for key, (label, explained) in EXPLAINED.items():
        code = found["reason_codes"].get(key)
        reason = notes.translate(code, {"suite": measuring(key)}, None) if code else ""
        value = shown(key, found[key])
        if key == "length_spearman" and found.get("length_spearman_by_method"):
            value += " " + per_method(found["length_spearman_by_method"])
        rows.append({"key": key, "label": str(label), "value": value,
                     "explained": str(explained), "reason": reason})  # fmt: skip
    return rows
