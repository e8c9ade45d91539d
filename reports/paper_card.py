"""The judge report card in the paper outputs (``metrics/report_card.py``):
a table of the criteria (Markdown, and a LaTeX float), its verdict line,
and one sentence for the Methods paragraph, in English like every export,
from the run's ``judge_validity``.

>>> from types import SimpleNamespace
>>> run = SimpleNamespace(suites=["alignment"], methods=["A", "B"], status="done",
...     judge={"model": "j"}, options={}, families=None,
...     aggregates={"judge_validity": {"length_spearman": {"": 0.45},
...                                    "length_spearman_n": {"": 60}}})
>>> print(sentence(run))
By the judge report card (docs/metrics/report-card.md) the judge is not fit to publish with: failing length bias within methods (j: 0.450 (n=60), threshold |value| ≤ 0.3).
>>> print(to_markdown(run).splitlines()[5])
| Length bias within methods (abs. ρ) | j | 0.450 | 60 | abs. value ≤ 0.3 | fail |
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from metrics.notes import note
from metrics.validity import judge_validity, run_context
from reports import Reported
from reports.paper_text import FIT_WIDTH, latex_escape, markdown_escape

LABELS = {
    "position_consistency": "Position consistency",
    "length_spearman": "Length bias within methods (abs. ρ)",
    "length_pairwise_effect": "Length effect on pairwise verdicts",
    "human_al_spearman": "Agreement with human AL labels (ρ)",
    "human_binary_kappa": "Agreement with human keep-chatting labels (κ)",
    "inter_judge_alpha": "Agreement between the panel's judges (α)",
    "samples_alpha": "Repeat-sample consistency (α)",
    "self_preference": "Self-preference (same model family)",
    "recorded_human_spearman": "Recorded judge: agreement with human scores (ρ)",
    "recorded_inter_judge_alpha": "Recorded judge: agreement with the run's judges (α)",
}
RECORDED_NOTE = (
    "A recorded judge's rows (verdicts the file carried, made elsewhere) are "
    "shown for comparison: they hold no verdict of the run."
)
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


def number(value: float, digits: int = 3) -> str:
    """Three decimals, never "-0.000".

    >>> number(-0.00001), number(0.4567)
    ('0.000', '0.457')
    """
    shown = f"{value:.{digits}f}"
    return shown if float(shown) != 0 else f"{0:.{digits}f}"


def card(run: Reported) -> dict[str, Any] | None:
    """The run's ``judge_validity`` with its report card; None without a
    judge, live or recorded (a file's verdicts)."""
    if hasattr(run, "sides"):
        return None  # a comparison of runs (each has its own card)
    measured = (run.aggregates or {}).get("judge_validity") or {}
    judge = getattr(run, "judge", None)
    if not judge and not measured.get("recorded_judges"):
        return None
    return judge_validity(
        measured, list(run.suites), (judge or {}).get("model"), run_context(run)
    )


def value_text(row: dict[str, Any]) -> str:
    """A criterion's value with its judge, n and interval, or why it has none
    (the Methods sentence)."""
    if row["value"] is None:
        return f"— ({row.get('reason') or 'not measured'})"
    text = number(row["value"], 3)
    if row.get("n") is not None:
        text += f" (n={row['n']:,})"
    text += _beside(row)
    if row.get("judge"):
        text = f"{judge_text(row)}: {text}"
    return text


def _beside(row: dict[str, Any]) -> str:
    """What a value's cell shows after the number: its interval (or why it
    has none), κ's base rate, the judge–method pairs sharing a family."""
    text = ""
    if row.get("ci_low") is not None and row.get("ci_high") is not None:
        text += f" [{number(row['ci_low'], 3)}, {number(row['ci_high'], 3)}]"
    elif row.get("ci_note"):  # an interval of width 0: not shown, said why
        text += f" ({note(row['ci_note']).english})"
    if row.get("with"):  # a recorded judge's α with a judge of the run
        text += f" with {row['with']}"
    if row.get("base_rate") is not None:
        text += f"; majority-class base rate {number(row['base_rate'], 3)}"
    for shared in row.get("shared") or ():
        text += (
            f"; judge {shared['judge']} and method {shared['method']} share "
            f"the family {shared['family']}"
        )
    return text


def judge_text(row: dict[str, Any]) -> str:
    """The judge a row is about ("" for the run's quantity); a recorded
    judge's (verdicts carried by the file) said so."""
    if not row.get("judge"):
        return ""
    return f"{row['judge']} (recorded)" if row.get("recorded") else row["judge"]


def _threshold(row: dict[str, Any]) -> str:
    return RULES[row["rule"]].format(f"{row['threshold']:g}")


HEADER = ("Criterion", "Judge", "Value", "n", "Threshold", "Verdict")


def cells(row: dict[str, Any]) -> list[str]:
    """A row's cells, as text: criterion, judge, value (with its interval
    and what stands beside it), n, threshold, verdict (and why when not
    measured).

    >>> cells({"criterion": "samples_alpha", "value": None, "n": None,
    ...        "rule": "at_least", "threshold": 0.8, "verdict": "not_measured",
    ...        "reason": "one sample per item"})
    ['Repeat-sample consistency (α)', '', '—', '—', '≥ 0.8', 'not measured: one sample per item']
    """
    value = "—" if row["value"] is None else number(row["value"], 3)
    if row["value"] is not None or row.get("shared"):
        value += _beside(row)
    verdict = row["verdict"].replace("_", " ")
    if row["verdict"] == "not_measured" and row.get("reason"):
        verdict += f": {row['reason']}"
    n = row.get("n")
    return [
        label(row),
        judge_text(row),
        value,
        "—" if n is None else f"{n:,}",
        _threshold(row),
        verdict,
    ]


def label(row: dict[str, Any]) -> str:
    """The criterion's English label (a criterion of human scores names its
    criterion and scale)."""
    found = LABELS[row["criterion"]]
    if row.get("scale_criterion"):
        found += f" · {row['scale_criterion']}"
    return found


def to_markdown(run: Reported) -> str:
    """The report card as a Markdown table with its verdict line; "" without
    a judge."""
    found = card(run)
    if found is None:
        return ""
    lines = [
        "| " + " | ".join(HEADER) + " |",
        "|:--|:--|:--|--:|:--|:--|",
    ]
    for row in found["report_card"]:
        lines.append("| " + " | ".join(markdown_escape(c) for c in cells(row)) + " |")
    note = [markdown_escape(RECORDED_NOTE), ""] if _has_recorded(found) else []
    return "\n".join(
        [
            "Judge report card: " + markdown_escape(_verdict_text(found)),
            "",
            *lines,
            "",
            *note,
        ]
    )


def _has_recorded(found: dict[str, Any]) -> bool:
    return any(row.get("recorded") for row in found["report_card"])


def _latex_caption(found: dict[str, Any]) -> str:
    said = "Judge report card: " + _verdict_text(found) + "."
    return said + (" " + RECORDED_NOTE if _has_recorded(found) else "")


def _latex_cell(text: str) -> str:
    r"""A cell escaped, with real minus signs before figures.

    >>> print(_latex_cell("-0.450 [-0.5, 0.1]; majority-class base rate 0.7"))
    $-$0.450 [$-$0.5, 0.1]; majority-class base rate 0.7
    >>> print(_latex_cell("≥ 0.8"))
    $\geq$ 0.8
    """
    return re.sub(r"(?<![\w.])-(?=\d)", "$-$", latex_escape(text))


# the columns' widths, as shares of the line (a long reason wraps in its
# cell, ragged right: each cell starts \raggedright, so a row ends with
# \tabularnewline, which core LaTeX keeps)
LATEX_COLUMNS = (
    r"@{}p{0.2\linewidth}p{0.11\linewidth}p{0.2\linewidth}r"
    r"p{0.12\linewidth}p{0.2\linewidth}@{}"
)
RAGGED = "\\raggedright "
ROW_END = r" \tabularnewline"


def _latex_row(texts: Iterable[str]) -> str:
    """A row of the card: the text cells ragged right, n as it is."""
    shown = [text if index == 3 else RAGGED + text for index, text in enumerate(texts)]
    return " & ".join(shown) + ROW_END


def to_latex(run: Reported) -> str:
    """The report card as a LaTeX float (booktabs), its verdict line the
    caption; "" without a judge."""
    found = card(run)
    if found is None:
        return ""
    lines = [
        r"\begin{table}[htbp]",
        r"\centering",
        r"\small",
        rf"\caption{{{latex_escape(_latex_caption(found))}}}",
        r"\label{tab:personasteer-report-card}",
        r"\medskip",
        r"\setlength{\tabcolsep}{4pt}",
        FIT_WIDTH,
        rf"\begin{{tabular}}{{{LATEX_COLUMNS}}}",
        r"\toprule",
        _latex_row(HEADER),
        r"\midrule",
    ]
    for row in found["report_card"]:
        lines.append(_latex_row(map(_latex_cell, cells(row))))
    lines += [r"\bottomrule", r"\end{tabular}}", r"\end{table}", ""]
    return "\n".join(lines)


def _verdict_text(found: dict[str, Any]) -> str:
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


def sentence(run: Reported) -> str:
    """One sentence for the Methods paragraph; "" without a judge of the
    run's own (recorded judges are named in a sentence of their own)."""
    found = card(run) if getattr(run, "judge", None) else None
    if found is None:
        return ""
    return (
        "By the judge report card (docs/metrics/report-card.md) the judge is "
        f"{_verdict_text(found)}."
    )
