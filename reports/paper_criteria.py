"""Judge–human agreement per criterion, for the paper exports and the
dashboard's judge audit: one row per (criterion, judge), the run's own
judges first and then the recorded ones (verdicts a file carried), each
with n, Pearson r, Spearman ρ and Kendall τ-b with their 95% Fisher-z
intervals, the quadratic-weighted κ with its bootstrap interval where both
raters are on the criterion's scale, and, for a recorded judge,
Krippendorff's α with each judge of the run that scored the criterion
(``judge_validity.human``; ``docs/metrics/alignment.md``).

>>> human = {"j": {"n": 6, "scores": {"engagement:1-5": {"criterion": "engagement",
...     "scale": [1, 5], "source": "criterion", "n": 6, "pearson": 0.8, "spearman": 0.81234,
...     "spearman_ci": [0.1, 0.97], "kendall": None, "weighted_kappa": 0.7,
...     "weighted_kappa_ci": [0.2, 0.9]}}},
...     "CJ/zh": {"recorded": True, "n": 6, "scores": {"engagement:1-5": {
...     "criterion": "engagement", "scale": [1, 5], "n": 6, "spearman": 0.5,
...     "alpha_with": {"j": {"alpha": 0.61, "n": 6, "level": "ordinal"}}}}}}
>>> [(r["judge"], r["recorded"]) for r in criterion_rows(human)]
[('j', False), ('CJ/zh', True)]
>>> print(to_markdown({"human": human}))  # doctest: +NORMALIZE_WHITESPACE
| Criterion (scale) | Judge | n | r | ρ | τ-b | κw | α with the run's judges |
|:--|:--|--:|--:|--:|--:|--:|:--|
| engagement (1–5) | j | 6 | 0.800 | 0.812 \\[0.100, 0.970\\] | — | 0.700 \\[0.200, 0.900\\] |  |
| engagement (1–5) | CJ/zh (recorded) | 6 |  | 0.500 |  |  | j: 0.610 (ordinal, n=6) |
<BLANKLINE>
Agreement with the human scores per criterion, each on the criterion's own scale (n: the items scored by both). r, ρ, τ-b: Pearson, Spearman, Kendall tau-b, with 95% Fisher-z intervals in brackets (none below n 4, 4, 5). κw: quadratic-weighted Cohen's kappa, where both raters are on the scale's points, with a 95% percentile bootstrap interval over items (2000 resamples, fixed seed). (recorded): verdicts carried by the file, made elsewhere; α: Krippendorff's alpha between a recorded judge and each judge of the run on the same items. A judge of the run without a criterion mode is compared by its AL (ranks only, marked AL). A dash: not computable (too few items, or one side constant).
<BLANKLINE>
"""

from __future__ import annotations

from typing import Any

from reports.formatting import number as _number
from reports.paper_text import FIT_WIDTH, latex_escape, markdown_escape


def number(value: float) -> str:
    return _number(value, 3)


STATISTICS = ("pearson", "spearman", "kendall", "weighted_kappa")
HEAD = [
    "Criterion (scale)",
    "Judge",
    "n",
    "r",
    "ρ",
    "τ-b",
    "κw",
    "α with the run's judges",
]
CAPTION = (
    "Agreement with the human scores per criterion, each on the criterion's "
    "own scale (n: the items scored by both). r, ρ, τ-b: Pearson, Spearman, "
    "Kendall tau-b, with 95% Fisher-z intervals in brackets (none below n 4, "
    "4, 5). κw: quadratic-weighted Cohen's kappa, where both raters are on the "
    "scale's points, with a 95% percentile bootstrap interval over items (2000 "
    "resamples, fixed seed). (recorded): verdicts carried by the file, made "
    "elsewhere; α: Krippendorff's alpha between a recorded judge and each "
    "judge of the run on the same items. A judge of the run without a "
    "criterion mode is compared by its AL (ranks only, marked AL). A dash: "
    "not computable (too few items, or one side constant)."
)


# the same in LaTeX (Greek letters in math: the default fonts lack them as text)
LATEX_HEAD = (
    r"Criterion (scale) & Judge & $n$ & $r$ & $\rho$ & $\tau_b$ & $\kappa_w$ & "
    r"$\alpha$ with the run's judges"
)
LATEX_CAPTION = latex_escape(CAPTION.split(" r, ρ, τ-b:")[0]) + (
    r" $r$, $\rho$, $\tau_b$: Pearson, Spearman, Kendall tau-b, with 95\% "
    r"Fisher-$z$ intervals in brackets (none below $n$ 4, 4, 5). $\kappa_w$: "
    r"quadratic-weighted Cohen's kappa, where both raters are on the scale's "
    r"points, with a 95\% percentile bootstrap interval over items (2000 "
    r"resamples, fixed seed). (recorded): verdicts carried by the file, made "
    r"elsewhere; $\alpha$: Krippendorff's alpha between a recorded judge and "
    r"each judge of the run on the same items. A judge of the run without a "
    r"criterion mode is compared by its AL (ranks only, marked AL). A dash: "
    r"not computable (too few items, or one side constant)."
)


def criterion_rows(human: dict[str, Any] | None) -> list[dict[str, Any]]:
    """``{criterion, scale, judge, recorded, source, n, <statistic>,
    <statistic>_ci, alpha_with}`` per (criterion, judge): by criterion, the
    run's judges before the recorded ones, each group by name."""
    rows = []
    for judge, entry in (human or {}).items():
        for found in (entry.get("scores") or {}).values():
            rows.append(
                {
                    **found,
                    "judge": judge,
                    "recorded": bool(entry.get("recorded")),
                    "source": found.get("source", "criterion"),
                }
            )
    return sorted(
        rows,
        key=lambda r: (r["criterion"], r["scale"], r["recorded"], r["judge"]),
    )


def statistic(row: dict[str, Any], name: str) -> str:
    """A statistic with its interval, a dash when it has no value, empty
    when the row has no such statistic (κw of AL against a 1–5 scale).

    >>> statistic({"spearman": 0.5, "spearman_ci": [0.1, 0.8]}, "spearman")
    '0.500 [0.100, 0.800]'
    >>> statistic({"spearman": None}, "spearman"), statistic({}, "weighted_kappa")
    ('—', '')
    """
    if name not in row:
        return ""
    if row[name] is None:
        return "—"
    ends = row.get(f"{name}_ci")
    shown = number(row[name])
    return f"{shown} [{number(ends[0])}, {number(ends[1])}]" if ends else shown


def alpha_text(row: dict[str, Any]) -> str:
    """Each judge of the run's α with a recorded judge, its level and n."""
    parts = []
    for judge, found in (row.get("alpha_with") or {}).items():
        value = "—" if found.get("alpha") is None else number(found["alpha"])
        parts.append(f"{judge}: {value} ({found['level']}, n={found['n']:,})")
    return "; ".join(parts)


def criterion_text(row: dict[str, Any]) -> str:
    low, high = row["scale"]
    return f"{row['criterion']} ({low}–{high})"


def judge_text(row: dict[str, Any]) -> str:
    if row["recorded"]:
        return f"{row['judge']} (recorded)"
    judge: str = row["judge"]
    return judge + (" (AL)" if row["source"] == "al" else "")


def _cells(row: dict[str, Any]) -> list[str]:
    return [
        criterion_text(row),
        judge_text(row),
        f"{row['n']:,}",
        *(statistic(row, name) for name in STATISTICS),
        alpha_text(row),
    ]


def _rows(validity: dict[str, Any] | None) -> list[dict[str, Any]]:
    return criterion_rows((validity or {}).get("human"))


def to_markdown(validity: dict[str, Any] | None) -> str:
    """The table and its caption; "" when no judge has a criterion score."""
    rows = _rows(validity)
    if not rows:
        return ""
    lines = [
        "| " + " | ".join(HEAD) + " |",
        "|:--|:--|--:|--:|--:|--:|--:|:--|",
        *(
            "| " + " | ".join(markdown_escape(c) for c in _cells(row)) + " |"
            for row in rows
        ),
    ]
    return "\n".join([*lines, "", markdown_escape(CAPTION), ""])


def to_latex(validity: dict[str, Any] | None) -> str:
    rows = _rows(validity)
    if not rows:
        return ""
    head = LATEX_HEAD + r" \\"
    body = [" & ".join(latex_escape(c) for c in _cells(row)) + r" \\" for row in rows]
    return "\n".join(
        [
            r"\begin{table}[htbp]",
            r"\centering",
            r"\small",
            rf"\caption{{{LATEX_CAPTION}}}",
            r"\label{tab:personasteer-criterion-agreement}",
            r"\medskip",
            FIT_WIDTH,
            r"\begin{tabular}{llrrrrrl}",
            r"\toprule",
            head,
            r"\midrule",
            *body,
            r"\bottomrule",
            r"\end{tabular}}",
            r"\end{table}",
            "",
        ]
    )
