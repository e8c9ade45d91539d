"""The judge-agreement table of a comparison across runs, for the paper
exports: per method and judge metric, two runs' judges scoring the same
responses, with n and the agreement statistics (``metrics/agreement.py``).

>>> entry = {"metric": "al", "method": "Ours", "run_a": "gpt", "run_b": "qwen",
...     "judge_a": {"model": "gpt-4o"}, "judge_b": {"model": "qwen2.5"},
...     "scale": "interval", "n": 40, "spearman": 0.8123,
...     "krippendorff_alpha": 0.7712, "reason": None}
>>> print(to_markdown([entry]))  # doctest: +NORMALIZE_WHITESPACE
| Metric | Method | Judges | n | Spearman ρ | α / κ | Agreement |
|:--|:--|:--|--:|--:|--:|--:|
| al | Ours | gpt-4o vs qwen2.5 | 40 | 0.81 | 0.77 | — |
<BLANKLINE>
Judge agreement: two runs' judges on the same responses of a method (n items). α: Krippendorff's alpha (interval scores); κ: Cohen's kappa and the share of identical verdicts (binary).
"""

from __future__ import annotations

from reports.paper_text import FIT_WIDTH, latex_escape, markdown_escape, number

CAPTION = (
    "Judge agreement: two runs' judges on the same responses of a method "
    "(n items). α: Krippendorff's alpha (interval scores); κ: Cohen's kappa "
    "and the share of identical verdicts (binary)."
)
HEAD = ["Metric", "Method", "Judges", "n", "Spearman ρ", "α / κ", "Agreement"]


def _cells(entry: dict) -> list[str]:
    def judge(side: str) -> str:
        facts = entry.get(f"judge_{side}") or {}
        return str(facts.get("model") or entry.get(f"run_{side}") or "?")

    chance = entry.get("krippendorff_alpha", entry.get("cohen_kappa"))
    shown = [number(entry.get("spearman")), number(chance),
             number(entry.get("percent_agreement"))]  # fmt: skip
    return [entry["metric"], entry["method"], f"{judge('a')} vs {judge('b')}",
            str(entry.get("n") or 0), *shown]  # fmt: skip


def to_markdown(entries: list[dict]) -> str:
    lines = ["| " + " | ".join(HEAD) + " |", "|:--|:--|:--|--:|--:|--:|--:|"]
    for entry in entries:
        lines.append(
            "| " + " | ".join(markdown_escape(c) for c in _cells(entry)) + " |"
        )
    return "\n".join([*lines, "", markdown_escape(CAPTION), ""])


def to_latex(entries: list[dict]) -> str:
    head = " & ".join(latex_escape(h) for h in HEAD) + r" \\"
    rows = [" & ".join(latex_escape(c) for c in _cells(e)) + r" \\" for e in entries]
    return "\n".join([
        r"\begin{table}[htbp]", r"\centering", r"\small",
        rf"\caption{{{latex_escape(CAPTION)}}}",
        r"\label{tab:personasteer-judge-agreement}", r"\medskip",
        FIT_WIDTH, r"\begin{tabular}{lllrrrr}", r"\toprule", head, r"\midrule",
        *rows, r"\bottomrule", r"\end{tabular}}", r"\end{table}", "",
    ])  # fmt: skip
