"""The dashboard's "Judge audit": the results' ``judge_validity`` with what
each quantity means and the threshold a reader should hold it to, in the
reader's language (``metrics/validity.py`` says why a quantity is missing)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from core.i18n import _l
from metrics import notes, registry
from metrics.validity import (
    N_OF,
    judge_validity,
    measuring,
    quantities,
    run_context,
    true_reason,
)
from reports.formatting import count, number

if TYPE_CHECKING:
    from store.models import Run

EXPLAINED = {
    "position_consistency": (
        _l("Position consistency"),
        _l(
            "Share of pairwise comparisons whose verdict stayed the same when the "
            "two replies swapped places. 1 is fully consistent; below about 0.8 the "
            "order of the replies sways the judge, so read the pairwise results "
            "with care (flips already count as ties)."
        ),
    ),
    "first_position_rate": (
        _l("First-position rate"),
        _l(
            "Among single-order verdicts that named a winner, the share that chose "
            "the reply shown first. 0.5 is no preference; beyond about 0.6 (or "
            "below 0.4) the judge favours one position."
        ),
    ),
    "length_spearman": (
        _l("Length bias"),
        _l(
            "Spearman ρ between response length and the judge's AL within each "
            "method (pooling methods would read a better method's longer replies "
            "as bias), combined as the mean weighted by each method's items; each "
            "method's ρ is in brackets. Near 0 the judge ignores length; above "
            "about 0.3 longer replies score higher, so compare methods on the "
            "length-controlled AL as well."
        ),
    ),
    "cross_mode_auc": (
        _l("Score–verdict agreement (AUC)"),
        _l(
            "How well the AL score separates the judge's own keep-chatting "
            "verdicts 1 from 0 on the same items: 1 is perfect, 0.5 is chance. "
            "Below about 0.7 the two judge modes disagree."
        ),
    ),
    "samples_alpha": (
        _l("Self-consistency across samples"),
        _l(
            "Krippendorff's α (interval) between the judge's samples of the same "
            "item. 1 is a judge that repeats itself; below about 0.8 its scores "
            "are noisy, so use more samples."
        ),
    ),
    "inter_judge_alpha": (
        _l("Agreement between the panel's judges"),
        _l(
            "Krippendorff's α (interval) of the judge models' AL on the same items. "
            "Above about 0.8 the judges agree; below about 0.67 the panel mean "
            "hides real disagreement, so look at each judge's AL average too."
        ),
    ),
    "judge_offsets": (
        _l("Offsets between the panel's judges"),
        _l(
            "Each judge's mean signed AL difference from the panel's other judges "
            "on the items they share, with a Student-t confidence interval (95%), and the ratio "
            "of its scores' spread to theirs. α can stay high under a constant "
            "offset (a judge scoring every item 6 points higher), which the panel "
            "mean pools without saying; an interval that excludes 0, or a spread "
            "ratio outside 1/2 to 2 (another scale), is said beside the value."
        ),
    ),
    "human": (
        _l("Agreement with human labels"),
        _l(
            "Spearman ρ and Kendall τ between AL and the human scores, Cohen's κ "
            "between the binary verdicts and the human ones. Above about 0.6 (ρ) "
            "or 0.4 (κ) the judge tracks the humans moderately; n is the number "
            "of labelled items."
        ),
    ),
    "length_pairwise_effect": (
        _l("Length preference (pairwise)"),
        _l(
            "How much more often a reply longer by one typical length difference "
            "wins against an equally good one, from a logistic model of the "
            "pairwise verdicts on the methods and the length difference "
            "(AlpacaEval 2.0's length control): 0 is no preference, +0.5 a judge "
            "that always picks the longer reply. Above about 0.1 compare methods "
            "on the length-controlled win rate."
        ),
    ),
}


# what each quantity's n counts, said under it
COUNTED = {
    "position_consistency": _l(
        "n: the pairwise comparisons scored, each pair of replies once."
    ),
    "first_position_rate": _l("n: the single-order verdicts that named a winner."),
    "length_spearman": _l(
        "n: the responses with a length and an AL, of the methods that have a ρ."
    ),
    "cross_mode_auc": _l(
        "n: the responses with both an AL and a keep-chatting verdict."
    ),
    "samples_alpha": _l("n: the items the judge scored in two samples or more."),
    "inter_judge_alpha": _l("n: the items two judges or more scored."),
    "length_pairwise_effect": _l(
        "n: the sessions with a scored comparison; the brackets give the 95% bootstrap interval, then the share of comparisons of unequal lengths the longer reply won."
    ),
    "judge_offsets": _l("n: the items the judge and another judge both scored."),
    "human": _l(
        "ρ and τ rest on the items with an AL label, κ on those with a keep-chatting label: their own n is given where fewer."
    ),
}


def with_n(value: str, n: int | None) -> str:
    """A shown value and the n it rests on.

    >>> with_n("0.912", 48), with_n("0.912", None)
    ('0.912 (n=48)', '0.912')
    """
    return value if n is None else f"{value} (n={count(n)})"


def shown(key: str, value: Any, n: Any = None, missing: str = "") -> str:
    """A quantity as the audit table shows it, each value with its n
    (``n``: a number, or ``{judge: n}`` beside ``{judge: value}``); a
    judge's missing value says why (``missing``).

    >>> shown("length_spearman", {"gpt-x": 0.91234}, {"gpt-x": 48})
    'gpt-x: 0.912 (n=48)'
    >>> shown("cross_mode_auc", {"a": 0.8, "b": None}, {"a": 9, "b": 9}, "one class")
    'a: 0.800 (n=9); b: — (one class)'
    """
    if value is None:
        return "—"
    if key == "length_pairwise_effect":
        return length_effect(value)
    if key == "judge_offsets":  # {judge: {offset, n, ci_low, ci_high, ...}}
        return "; ".join(f"{judge}: {_offset(found)}" for judge, found in value.items())
    if key == "human":  # {judge: agreement}; per criterion: agreement_table
        labelled = {
            judge: found
            for judge, found in value.items()
            if not found.get("recorded") and _has_labels(found)
        }
        return "; ".join(
            f"{judge}: {_agreement(found)}" if len(value) > 1 else _agreement(found)
            for judge, found in labelled.items()
        )
    if isinstance(value, dict):
        counts = n if isinstance(n, dict) else {}
        return "; ".join(
            f"{judge}: {_one(v, counts.get(judge), missing)}"
            for judge, v in value.items()
        )
    return _one(value, n, missing)


def _judge_named(judge: str, found: dict[str, Any]) -> str:
    """A judge's name, a recorded judge's (verdicts carried by the file) said so."""
    if found.get("recorded"):
        return _l("%(judge)s (recorded)") % {"judge": judge}
    return judge


def length_effect(value: dict[str, Any]) -> str:
    """The pairwise length preference: the win-probability shift, its
    interval, n, and how often the longer reply won.

    >>> length_effect({"value": 0.5, "ci_low": 0.5, "ci_high": 0.5, "n": 8,
    ...                "longer_won_share": 1.0, "longer_won_n": 72})
    '+0.500 [+0.500, +0.500] (n=8) · 1.000 (n=72)'
    """

    def sign(v: float | None) -> str:
        return "—" if v is None else ("+" if v >= 0 else "") + signed_number(v)

    shift = f"{sign(value['value'])} [{sign(value.get('ci_low'))}, {sign(value.get('ci_high'))}]"
    won = value.get("longer_won_share")
    longer = "—" if won is None else with_n(number(won, 3), value.get("longer_won_n"))
    return f"{with_n(shift, value.get('n'))} · {longer}"


def _one(value: float | None, n: int | None, missing: str) -> str:
    if value is None:
        return f"— ({missing})" if missing else "—"
    return with_n(number(value, 3), n)


def _offset(found: dict[str, Any]) -> str:
    """A judge's offset, its interval and n (no interval when it has
    width 0: the note says why).

    >>> _offset({"offset": 6.0, "n": 40, "ci_low": 5.5, "ci_high": 6.5})
    '+6.000 [5.500, 6.500] (n=40)'
    >>> _offset({"offset": 6.0, "n": 5, "ci_low": None, "ci_note": "ci_no_variation"})
    '+6.000 (n=5)'
    """
    if found.get("offset") is None:
        return "—"
    shown_ = f"{'+' if found['offset'] >= 0 else ''}{number(found['offset'], 3)}"
    if found.get("ci_low") is not None:
        shown_ += f" [{number(found['ci_low'], 3)}, {number(found['ci_high'], 3)}]"
    return with_n(shown_, found.get("n"))


def offset_notes(value: dict[str, Any] | None) -> str:
    """The offsets' notes (an interval that excludes 0, another scale) in
    the reader's language."""
    return "; ".join(
        notes.translate(found["note"]["code"], found["note"]["params"], None)
        for found in (value or {}).values()
        if found.get("note")
    )


HUMAN_PARTS = (
    ("ρ", "al_spearman", "n_al"),
    ("τ", "al_kendall", "n_al"),
    ("κ", "binary_kappa", "n_binary"),
)


def _has_labels(value: dict[str, Any]) -> bool:
    """An entry with AL or keep-chatting labels (not only criterion scores)."""
    return any(name in value for _label, name, _rested in HUMAN_PARTS)


def _agreement(value: dict[str, Any]) -> str:
    """ρ, τ and κ with the labelled items; a missing one says why, and one
    resting on fewer items than the rest says how many. (Agreement with
    scores on a criterion's own scale is the audit's table:
    :func:`agreement_table`.)"""
    n = value.get("n")
    parts = []
    for label, name, rested in HUMAN_PARTS:
        items = value.get(rested)
        if value.get(name) is not None:
            shown_ = number(value[name], 3)
            parts.append(f"{label} {with_n(shown_, items) if items != n else shown_}")
        elif items is not None or name in value:
            parts.append(f"{label} — ({_why_not(name, items)})")
    return " · ".join([*parts, f"n={count(n)}"])


# the per-criterion agreement table's statistics: (heading, key)
TABLE_STATISTICS = (
    ("r", "pearson"),
    ("ρ", "spearman"),
    ("τ-b", "kendall"),
    ("κw", "weighted_kappa"),
)
LEVELS = {"ordinal": _l("ordinal"), "interval": _l("interval")}


def agreement_table(human: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The audit's table of agreement with human scores per criterion
    (``reports/paper_criteria.py`` orders the rows: per criterion, the
    run's judges, then the recorded ones): each row's criterion, judge (a
    recorded one said so), n, each statistic and its interval apart (a
    missing one says why), and a recorded judge's α with each judge of the
    run.

    >>> rows = agreement_table({"CJ/zh": {"recorded": True, "n": 6, "scores": {
    ...     "engagement:1-5": {"criterion": "engagement", "scale": [1, 5], "n": 6,
    ...     "spearman": 0.5, "spearman_ci": [0.1, 0.8], "kendall": None,
    ...     "alpha_with": {"j": {"alpha": 0.61, "n": 6, "level": "ordinal"}}}}}})
    >>> row = rows[0]
    >>> row["criterion"], row["judge"], row["n"]
    ('engagement (1–5)', 'CJ/zh (recorded)', '6')
    >>> [(c["value"], c["interval"], c["why"]) for c in row["cells"]][1:3]
    [('0.500', '[0.100, 0.800]', ''), ('—', '', 'one side gave the same value to every item: there is no order to compare')]
    >>> row["alpha"]
    [{'judge': 'j', 'value': '0.610', 'detail': 'ordinal, n=6'}]
    """
    from reports.paper_criteria import criterion_rows, criterion_text

    table = []
    for row in criterion_rows(human):
        cells = []
        for heading, name in TABLE_STATISTICS:
            value, ends = row.get(name), row.get(f"{name}_ci")
            cell = {"heading": heading, "value": "", "interval": "", "why": ""}
            if name in row and value is None:
                code = row.get(f"{name}_note")
                why = notes.translate(code, None, None) if code else None
                cell.update(value="—", why=why or _why_not(name, row["n"]))
            elif name in row:
                cell.update(value=number(value, 3), interval=_interval(ends).strip())
                if not ends and row.get(f"{name}_ci_note"):  # width 0: why none
                    cell["why"] = notes.translate(row[f"{name}_ci_note"], None, None)
            cells.append(cell)
        alpha = [
            {
                "judge": judge,
                "value": "—" if found["alpha"] is None else number(found["alpha"], 3),
                "detail": f"{LEVELS[found['level']]}, n={count(found['n'])}",
            }
            for judge, found in (row.get("alpha_with") or {}).items()
        ]
        table.append(
            {
                "criterion": criterion_text(row),
                "judge": _judge_named(row["judge"], row)
                if row["recorded"]
                else _l("%(judge)s (AL)") % {"judge": row["judge"]}
                if row["source"] == "al"
                else row["judge"],
                "recorded": row["recorded"],
                "n": count(row["n"]),
                "cells": cells,
                "alpha": alpha,
            }
        )
    return table


def _interval(ends: Sequence[float] | None) -> str:
    """A 95% interval after its value ('' without one).

    >>> _interval([0.1234, 0.9]), _interval(None)
    (' [0.123, 0.900]', '')
    """
    return f" [{number(ends[0], 3)}, {number(ends[1], 3)}]" if ends else ""


def _why_not(name: str, items: int | None) -> str:
    """Why an agreement with the file's human labels has no value."""
    if items is not None and items < 2:
        return notes.translate("agreement_too_few", None, None)
    code = (
        "kappa_one_class" if name == "binary_kappa" else "agreement_one_side_constant"
    )
    return notes.translate(code, None, None)


def per_method(
    found: dict[str, dict[str, float | None]],
    counted: dict[str, dict[str, int]] | None = None,
    order: list[str] | None = None,
) -> str:
    """Each method's ρ with its n, per judge, the methods in ``order`` (the
    file's; a stored dict's keys come back sorted, or by length on PostgreSQL).

    >>> per_method({"j": {"A": -1.0, "B": None}}, {"j": {"A": 9, "B": 1}})
    '[j: A −1.000 (n=9), B — (n=1)]'
    >>> per_method({"j": {"RAG": 0.5, "Base": 0.1}}, order=["Base", "RAG"])
    '[j: Base 0.100, RAG 0.500]'
    """
    parts = []
    for judge, methods in found.items():
        counts = (counted or {}).get(judge) or {}
        shown_ = ", ".join(
            f"{m} {with_n(signed_number(methods[m]), counts.get(m))}"
            for m in in_order(methods, order)
        )
        parts.append(f"{judge}: {shown_}" if judge else shown_)
    return "[" + "; ".join(parts) + "]"


def in_order(keyed: Mapping[str, object], order: list[str] | None) -> list[str]:
    """The keys of ``keyed`` in ``order``, any other after them as stored.

    >>> in_order({"RAG": 1, "Base": 2, "X": 3}, ["Base", "RAG"])
    ['Base', 'RAG', 'X']
    """
    listed = [key for key in order or [] if key in keyed]
    return listed + [key for key in keyed if key not in listed]


def signed_number(value: float | None) -> str:
    return "—" if value is None else number(value, 3).replace("-", "−")


def audit_rows(run: Run) -> list[dict[str, Any]] | None:
    """One row per quantity, or None when the run had no judge at all. Each
    value carries its n (what it counts is said under it); a missing one
    says why, in the reader's language."""
    measured = (run.aggregates or {}).get("judge_validity") or {}
    if not run.judge and not measured.get("recorded_judges"):
        return None  # (recorded judges are audited with no judge of the run)
    context = run_context(run)
    model = (run.judge or {}).get("model")
    found = judge_validity(measured, list(run.suites), model, context)
    rows = []
    for key, (label, explained) in EXPLAINED.items():
        code = found["reason_codes"].get(key)
        reason = _reason(code, key) if code else ""
        n_key = N_OF.get(key)  # judge_offsets carry their own n
        n = found.get(n_key) if n_key else None
        value = shown(key, found[key], n, _missing_for_one(key, context))
        if key == "length_spearman" and found.get("length_spearman_by_method"):
            by_method = found["length_spearman_by_method"]
            value += " " + per_method(
                by_method, found.get("length_spearman_by_method_n"), list(run.methods)
            )
        recorded = n_key is None or n is not None or found[key] is None
        counted = COUNTED[key] if recorded else NOT_RECORDED
        if key == "judge_offsets" and not reason:
            reason = offset_notes(found[key])
        row: dict[str, Any] = {
            "key": key,
            "label": str(label),
            "value": value,
            "reason": reason,
        }
        if key == "human":  # agreement per criterion, each on its own scale
            row["table"] = agreement_table(found[key])
        rows.append({**row, "explained": str(explained), "counted": str(counted)})
    return rows


# the page names a suite by its label, in the reader's language (the
# stored English reason keeps the suite's id)
SUITE_MISSING = _l("the suite “%(suite)s” did not run")


def _reason(code: str, key: str) -> str:
    suite = measuring(key)
    if code == "validity_suite_missing" and suite in registry.names():
        return str(SUITE_MISSING % {"suite": registry.get(suite).label})
    return notes.translate(code, {"suite": suite}, None)


NOT_RECORDED = _l("n was not recorded: the run was aggregated before this release.")


def _missing_for_one(key: str, context: dict[str, Any]) -> str:
    """Why one judge of a panel has no value of a quantity the others have."""
    code = true_reason(key, quantities()[key][1], context)
    return _reason(code, key)


# The judge report card (metrics/report_card.py), at the top of the audit
CRITERIA = {
    "position_consistency": _l("Position consistency"),
    "length_spearman": _l("Length bias within methods (|ρ|)"),
    "length_pairwise_effect": _l("Length effect on pairwise verdicts"),
    "human_al_spearman": _l("Agreement with human AL labels (ρ)"),
    "human_binary_kappa": _l("Agreement with human keep-chatting labels (κ)"),
    "inter_judge_alpha": _l("Agreement between the panel's judges (α)"),
    "samples_alpha": _l("Repeat-sample consistency (α)"),
    "self_preference": _l("Self-preference (same model family)"),
    "recorded_human_spearman": _l("Recorded judge: agreement with human scores (ρ)"),
    "recorded_inter_judge_alpha": _l(
        "Recorded judge: agreement with the run's judges (α)"
    ),
}
VERDICT_WORDS = {
    "pass": _l("pass"),
    "fail": _l("fail"),
    "not_measured": _l("not measured"),
}
RULES = {
    "at_least": _l("≥ %(threshold)s"),
    "at_most_abs": _l("|value| ≤ %(threshold)s"),
    "interval_not_above": _l("fails when its 95%% interval lies above %(threshold)s"),
}
OVERALL = {
    "fit": _l(
        "Report card: fit to publish with. Every criterion that applies to "
        "this run passed."
    ),
    "not_fit": _l("Report card: not fit. Failing: %(criteria)s."),
    "not_enough_evidence": _l(
        "Report card: not enough evidence. Not measured: %(criteria)s."
    ),
}
NOTHING_MEASURED = _l("no criterion could be measured")


def card_view(run: Run) -> dict[str, Any] | None:
    """The report card as the audit shows it: one overall line and a row
    per criterion (its value with n, threshold, verdict, and why when not
    measured), in the reader's language; None without a judge, live or
    recorded (a file's verdicts: the card then shows their rows)."""
    measured = (run.aggregates or {}).get("judge_validity") or {}
    if not run.judge and not measured.get("recorded_judges"):
        return None
    found = judge_validity(
        measured, list(run.suites), (run.judge or {}).get("model"), run_context(run)
    )
    rows = [_card_row(row) for row in found["report_card"]]
    verdict = found["report_card_verdict"]
    named = (
        found["report_card_failing"]
        if verdict == "not_fit"
        else found["report_card_unmeasured"]
    )
    criteria = ", ".join(str(CRITERIA[c]) for c in named) or str(NOTHING_MEASURED)
    line = str(OVERALL[verdict]) % {"criteria": criteria}
    recorded = any(row.get("recorded") for row in found["report_card"])
    return {
        "verdict": verdict,
        "line": line,
        "rows": rows,
        "recorded_note": str(RECORDED_ROWS) if recorded else "",
    }


RECORDED_ROWS = _l(
    "A recorded judge's rows (verdicts the file carried, made elsewhere) are shown for comparison: they hold no verdict of the run."
)


def _card_row(row: dict[str, Any]) -> dict[str, Any]:
    criterion = row["criterion"]
    threshold = number(row["threshold"], 3).rstrip("0").rstrip(".")
    label = str(CRITERIA[criterion])
    if row.get("scale_criterion"):  # a criterion of human scores, its scale
        label += f" · {row['scale_criterion']}"
    shown_ = {
        "criterion": criterion,
        "recorded": bool(row.get("recorded")),
        "label": label,
        "value": _card_value(row),
        "threshold": str(RULES[row["rule"]]) % {"threshold": threshold},
        "verdict": row["verdict"],
        "applies": row["applies"],
        "verdict_label": str(VERDICT_WORDS[row["verdict"]]),
        "reason": "",
        "flags": [
            str(SHARED) % {k: s.get(k) for k in ("judge", "method", "family")}
            for s in row.get("shared") or ()
        ],
    }
    if row["verdict"] == "not_measured":
        shown_["reason"] = notes.translate(
            row.get("reason_code"), row.get("reason_params"), row.get("reason")
        )
    return shown_


WITH_JUDGE = _l("with %(judge)s")
SHARED = _l("⚑ judge %(judge)s and method %(method)s share the family %(family)s")
BASE_RATE = _l("majority-class base rate %(rate)s")
OWN_AND_OTHERS = _l(
    "%(judge)s on %(method)s: %(own)s; judges of other families: %(others)s"
)


def _card_value(row: dict[str, Any]) -> str:
    """The value with its n, its judge, its interval and what stands beside
    it (κ: the labels' base rate; self-preference: both scores)."""
    if row["value"] is None:  # a recorded judge's row still names it
        return f"{_judge_named(row['judge'], row)}: —" if row.get("recorded") else "—"
    text = with_n(signed_number(row["value"]), row.get("n"))
    if row.get("ci_low") is not None and row.get("ci_high") is not None:
        low, high = signed_number(row["ci_low"]), signed_number(row["ci_high"])
        text += f" [{low}, {high}]"
    elif row.get("ci_note"):  # an interval of width 0: not shown, said why
        text += f" ({notes.translate(row['ci_note'], {}, None)})"
    if row.get("with"):  # a recorded judge's α with a judge of the run
        text += " " + str(WITH_JUDGE) % {"judge": row["with"]}
    if row.get("judge"):
        text = f"{_judge_named(row['judge'], row)}: {text}"
    if row.get("base_rate") is not None:
        text += "; " + str(BASE_RATE) % {"rate": number(row["base_rate"], 3)}
    return text


def self_preference_lines(run: Run) -> list[str]:
    """Each judge sharing a family with a method: its score of that method
    beside the other families' judges' (the same sessions), and the
    difference-in-differences."""
    measured = (run.aggregates or {}).get("judge_validity") or {}
    lines = []
    for found in measured.get("self_preference") or ():
        own, others = found.get("judge_score"), found.get("other_families_score")
        lines.append(
            str(OWN_AND_OTHERS)
            % {
                "judge": found.get("judge"),
                "method": found.get("method"),
                "own": "—" if own is None else number(own, 1),
                "others": "—" if others is None else number(others, 1),
            }
        )
    return lines
