"""The judge-agreement table of a comparison across runs, for the paper
exports: per method and judge metric, two runs' judges scoring the same
responses, with n and the agreement statistics (``metrics/agreement.py``).
A statistic that could not be computed is a dash with its reason in the
row (web.md: "empty with the reason"); a statistic the metric's scale does
not have (ρ of binary verdicts, the share of identical verdicts of scores)
is an empty cell, not a missing value.

>>> entry = {"metric": "al", "method": "Ours", "run_a": "gpt", "run_b": "qwen",
...     "judge_a": {"model": "gpt-4o"}, "judge_b": {"model": "qwen2.5"},
...     "scale": "interval", "n": 40, "spearman": 0.8123,
...     "krippendorff_alpha": 0.7712, "reason": None}
>>> none = {**entry, "n": 0, "spearman": None, "krippendorff_alpha": None,
...     "reason": "no shared item has the same response in both runs"}
>>> print(to_markdown([entry, none]))  # doctest: +NORMALIZE_WHITESPACE
| Metric | Method | Judges | n | Spearman ρ | α / κ | Agreement | Reason |
|:--|:--|:--|--:|--:|--:|--:|:--|
| al | Ours | gpt-4o vs qwen2.5 | 40 | 0.81 | 0.77 |  |  |
| al | Ours | gpt-4o vs qwen2.5 | 0 | — | — |  | no shared item has the same response in both runs |
<BLANKLINE>
Judge agreement: two runs' judges on the same responses of a method (n items). α: Krippendorff's alpha (interval scores); κ: Cohen's kappa and the share of identical verdicts (binary). A dash: the statistic could not be computed (Reason says why); an empty cell: the metric's scale has no such statistic.
"""

from __future__ import annotations

from typing import Any

from reports.paper_text import FIT_WIDTH, latex_escape, markdown_escape, number

CAPTION = (
    "Judge agreement: two runs' judges on the same responses of a method "
    "(n items). α: Krippendorff's alpha (interval scores); κ: Cohen's kappa "
    "and the share of identical verdicts (binary). A dash: the statistic "
    "could not be computed (Reason says why); an empty cell: the metric's "
    "scale has no such statistic."
)
HEAD = ["Metric", "Method", "Judges", "n", "Spearman ρ", "α / κ", "Agreement", "Reason"]


def _cells(entry: dict[str, Any]) -> list[str]:
    def judge(side: str) -> str:
        facts = entry.get(f"judge_{side}") or {}
        return str(facts.get("model") or entry.get(f"run_{side}") or "?")

    def statistic(*keys: str) -> str:
        """The first of ``keys`` the entry's scale has; none: empty."""
        found = [key for key in keys if key in entry]
        return number(entry[found[0]]) if found else ""

    shown = [
        statistic("spearman"),
        statistic("krippendorff_alpha", "cohen_kappa"),
        statistic("percent_agreement"),
    ]
    judges = f"{judge('a')} vs {judge('b')}"
    count, reason = str(entry.get("n") or 0), entry.get("reason") or ""
    return [entry["metric"], entry["method"], judges, count, *shown, reason]


def to_markdown(entries: list[dict[str, Any]]) -> str:
    lines = ["| " + " | ".join(HEAD) + " |", "|:--|:--|:--|--:|--:|--:|--:|:--|"]
    for entry in entries:
        lines.append(
            "| " + " | ".join(markdown_escape(c) for c in _cells(entry)) + " |"
        )
    return "\n".join([*lines, "", markdown_escape(CAPTION), ""])


def to_latex(entries: list[dict[str, Any]]) -> str:
    head = " & ".join(latex_escape(h) for h in HEAD) + r" \\"
    rows = [" & ".join(latex_escape(c) for c in _cells(e)) + r" \\" for e in entries]
    return "\n".join(
        [
            r"\begin{table}[htbp]",
            r"\centering",
            r"\small",
            rf"\caption{{{latex_escape(CAPTION)}}}",
            r"\label{tab:personasteer-judge-agreement}",
            r"\medskip",
            FIT_WIDTH,
            r"\begin{tabular}{lllrrrrl}",
            r"\toprule",
            head,
            r"\midrule",
            *rows,
            r"\bottomrule",
            r"\end{tabular}}",
            r"\end{table}",
            "",
        ]
    )
