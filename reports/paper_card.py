"""The judge report card in the paper outputs (``metrics/report_card.py``):
a Markdown table of the criteria and one sentence for the Methods
paragraph, in English, from the run's ``judge_validity``.

>>> from types import SimpleNamespace
>>> run = SimpleNamespace(suites=["alignment"], methods=["A", "B"], status="done",
...     judge={"model": "j"}, options={}, families=None,
...     aggregates={"judge_validity": {"length_spearman": {"": 0.45},
...                                    "length_spearman_n": {"": 60}}})
>>> print(sentence(run))
By the judge report card (docs/metrics/report-card.md) the judge is not fit to publish with: failing length bias within methods (j: 0.450 (n=60), threshold |value| ≤ 0.3).
>>> print(to_markdown(run).splitlines()[5])
| Length bias within methods (abs. ρ) | j: 0.450 (n=60) | abs. value ≤ 0.3 | fail |
"""

from __future__ import annotations

from metrics.notes import note
from metrics.validity import judge_validity, run_context
from reports.paper_text import markdown_escape

LABELS = {
    "position_consistency": "Position consistency",
    "length_spearman": "Length bias within methods (abs. ρ)",
    "length_pairwise_effect": "Length effect on pairwise verdicts",
    "human_al_spearman": "Agreement with human AL labels (ρ)",
    "human_binary_kappa": "Agreement with human keep-chatting labels (κ)",
    "inter_judge_alpha": "Agreement between the panel's judges (α)",
    "samples_alpha": "Repeat-sample consistency (α)",
    "self_preference": "Self-preference (same model family)",
}
RULES = {
    "at_least": "≥ {}",
    "at_most_abs": "abs. value ≤ {}",
    "interval_not_above": "fails when its 95% interval lies above {}",
}
SAID = {
    "fit": "fit to publish with: every criterion that applies to this run passed",
    "not_fit": "not fit to publish with: failing {}",
    "not_enough_evidence": "not shown fit for lack of evidence: not measured {}",
}


def number(value, digits: int = 3) -> str:
    """Three decimals, never "-0.000".

    >>> number(-0.00001), number(0.4567)
    ('0.000', '0.457')
    """
    shown = f"{value:.{digits}f}"
    return shown if float(shown) != 0 else f"{0:.{digits}f}"


def card(run) -> dict | None:
    """The run's ``judge_validity`` with its report card; None without a judge."""
    if not getattr(run, "judge", None) or hasattr(run, "sides"):
        return None  # no judge, or a comparison of runs (each has its own card)
    measured = (run.aggregates or {}).get("judge_validity") or {}
    return judge_validity(
        measured, list(run.suites), run.judge.get("model"), run_context(run)
    )


def value_text(row: dict) -> str:
    """A criterion's value with its judge, n and interval, or why it has none."""
    if row["value"] is None:
        return f"— ({row.get('reason') or 'not measured'})"
    text = number(row["value"], 3)
    if row.get("n") is not None:
        text += f" (n={row['n']:,})"
    if row.get("ci_low") is not None and row.get("ci_high") is not None:
        text += f" [{number(row['ci_low'], 3)}, {number(row['ci_high'], 3)}]"
    elif row.get("ci_note"):  # an interval of width 0: not shown, said why
        text += f" ({note(row['ci_note']).english})"
    if row.get("judge"):
        text = f"{row['judge']}: {text}"
    if row.get("base_rate") is not None:
        text += f"; majority-class base rate {number(row['base_rate'], 3)}"
    for shared in row.get("shared") or ():
        text += (
            f"; judge {shared['judge']} and method {shared['method']} share "
            f"the family {shared['family']}"
        )
    return text


def _threshold(row: dict) -> str:
    return RULES[row["rule"]].format(f"{row['threshold']:g}")


def to_markdown(run) -> str:
    """The report card as a Markdown table with its verdict line; "" without
    a judge."""
    found = card(run)
    if found is None:
        return ""
    lines = [
        "| Criterion | Value | Threshold | Verdict |",
        "|:--|:--|:--|:--|",
    ]
    for row in found["report_card"]:
        verdict = row["verdict"].replace("_", " ")
        cells = [LABELS[row["criterion"]], value_text(row), _threshold(row), verdict]
        lines.append("| " + " | ".join(markdown_escape(c) for c in cells) + " |")
    return "\n".join(
        ["Judge report card: " + markdown_escape(_verdict_text(found)), "", *lines, ""]
    )


def _verdict_text(found: dict) -> str:
    verdict = found["report_card_verdict"]
    rows = {row["criterion"]: row for row in found["report_card"]}
    if verdict == "not_fit":
        named = "; ".join(
            f"{LABELS[c].split(' (')[0].lower()} ({value_text(rows[c])}, threshold "
            f"{_threshold(rows[c]).replace('abs. value', '|value|')})"
            for c in found["report_card_failing"]
        )
    else:
        named = ", ".join(
            LABELS[c].split(" (")[0].lower() for c in found["report_card_unmeasured"]
        )
        named = named or "(no criterion could be measured)"
    return SAID[verdict].format(named)


def sentence(run) -> str:
    """One sentence for the Methods paragraph; "" without a judge."""
    found = card(run)
    if found is None:
        return ""
    return (
        "By the judge report card (docs/metrics/report-card.md) the judge is "
        f"{_verdict_text(found)}."
    )
