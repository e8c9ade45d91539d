"""The length control of pairwise verdicts in the paper tables (issue 58):
beside the raw win rate, the win rate a judge always preferring the longer
reply would give, the length-controlled win rate and Bradley–Terry
strengths (``docs/metrics/pairwise.md``), each with its 95% bootstrap
interval and n, in English like every export.

The table follows the suite's comparison table of a suite that computes
``pairwise_winrate_lc``; a run aggregated before these values has none.

>>> from types import SimpleNamespace
>>> run = SimpleNamespace(methods=["A", "B"], aggregates={"summary": {
...     "A": {"pairwise_winrate": 0.9, "pairwise_winrate_n": 4,
...           "pairwise_winrate_lc": 0.5, "pairwise_winrate_lc_ci_low": 0.25,
...           "pairwise_winrate_lc_ci_high": 0.75, "pairwise_winrate_lc_n": 4},
...     "B": {"pairwise_winrate": 0.1, "pairwise_winrate_lc": None}}})
>>> print(to_markdown(run).splitlines()[2])
| A | 0.90 (n=4) | — | 0.50 [0.25, 0.75] (n=4) | — | — |
>>> parts({"bt_score": 0.0, "bt_ci_low": 0.0, "bt_ci_high": 0.0}, "bt_score", "bt")
('0.00', '', '')
"""

from __future__ import annotations

from typing import Any

from metrics import registry
from metrics.counts import count_key
from metrics.stats import spread_or_none
from reports import Reported
from reports.paper_summary import english_note
from reports.paper_text import (
    FIT_WIDTH,
    latex_escape,
    latex_number,
    markdown_escape,
    number,
)

# (value, the prefix of its interval's ends), in the table's order
COLUMNS = (
    ("pairwise_winrate", "pairwise_winrate"),
    ("pairwise_longer_wins_rate", "pairwise_longer_wins_rate"),
    ("pairwise_winrate_lc", "pairwise_winrate_lc"),
    ("bt_score", "bt"),
    ("bt_lc_score", "bt_lc"),
)
LENGTH_CONTROLLED = "pairwise_winrate_lc"
TITLE = "Length control of the pairwise verdicts"
CAPTION = (
    f"{TITLE}. Beside each method's win rate (ties counting half), the win "
    "rate a judge always preferring the longer reply would give on the same "
    "comparisons (equal lengths a tie: a raw win rate close to it may be "
    "length, not quality), and the win rate and Bradley–Terry strength read "
    "at equal reply lengths: a logistic model of the verdicts on the methods "
    "and tanh of the normalised length difference (AlpacaEval 2.0, Dubois et "
    "al. 2024, without its instruction term). Brackets: 95% bootstrap "
    "intervals over sessions; n: the sessions with a scored comparison."
)


def applies(suite_name: str) -> bool:
    """Whether the suite computes the length-controlled values.

    >>> applies("quality")
    False
    """
    suite = registry.get(suite_name)
    return any(m.id == LENGTH_CONTROLLED for m in suite.metrics)


def _summary(run: Reported) -> dict[str, Any]:
    return (run.aggregates or {}).get("summary") or {}


def computed(run: Reported) -> bool:
    """Whether the run's summary holds the length-controlled values (a run
    aggregated before them does not)."""
    return any(LENGTH_CONTROLLED in values for values in _summary(run).values())


def parts(values: dict[str, Any], metric: str, prefix: str) -> tuple[str, str, str]:
    """The value (two decimals), its interval and its n, as text ("" for a
    missing interval or n; the dash for a missing value)."""
    value = values.get(metric)
    low, high = values.get(f"{prefix}_ci_low"), values.get(f"{prefix}_ci_high")
    n = values.get(count_key(metric))
    # an interval of width 0 (the baseline's strength, fixed at 0) is none
    spread = (
        low is not None and high is not None and spread_or_none(low, high) is not None
    )
    interval = (
        f"[{number(low)}, {number(high)}]" if value is not None and spread else ""
    )
    counted = f"(n={n:,})" if isinstance(n, int) and value is not None else ""
    return number(value), interval, counted


def labels() -> list[str]:
    found = []
    for metric, _ in COLUMNS:
        spec = registry.spec(metric)
        found.append(spec.label.msgid if spec else metric)
    return found


def caption(run: Reported) -> str:
    """The caption, with the summary notes of its null values."""
    aggregates = run.aggregates or {}
    said: dict[str, list[str]] = {}
    for method in run.methods:
        for metric, label in zip([m for m, _ in COLUMNS], labels(), strict=True):
            note = english_note(aggregates, method, metric)
            if note:
                said.setdefault(f"{label}: {note}", []).append(method)
    found = [f"{', '.join(methods)}, {text}" for text, methods in said.items()]
    return CAPTION + (f" Notes: {'; '.join(found)}." if found else "")


def to_markdown(run: Reported) -> str:
    """The table and its caption; "" when the run has no such values."""
    if not computed(run):
        return ""
    summary = _summary(run)
    lines = [
        "| Method | " + " | ".join(markdown_escape(h) for h in labels()) + " |",
        "|:--|" + "--:|" * len(COLUMNS),
    ]
    for method in run.methods:
        values = summary.get(method) or {}
        cells = [
            " ".join(p for p in parts(values, metric, prefix) if p)
            for metric, prefix in COLUMNS
        ]
        lines.append(f"| {markdown_escape(method)} | " + " | ".join(cells) + " |")
    return "\n".join([*lines, "", markdown_escape(caption(run)), ""])


def _stacked(lines: list[str], align: str) -> str:
    """Lines in one cell (reports/paper.py ``stacked``)."""
    if len(lines) == 1:
        return lines[0]
    body = r"\\".join(lines)
    return rf"\begin{{tabular}}[{align}]{{@{{}}r@{{}}}}{body}\end{{tabular}}"


def _heading(text: str) -> str:
    """A heading wrapped at about 14 characters, bottom-aligned."""
    lines: list[str] = []
    for word in text.split():
        if lines and len(lines[-1]) + 1 + len(word) <= 14:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return _stacked([latex_escape(line) for line in lines], "b")


def to_latex(run: Reported) -> str:
    """The same table as a LaTeX float (booktabs): the value, and under it
    its interval and n in small print."""
    if not computed(run):
        return ""
    summary = _summary(run)
    lines = [
        r"\begin{table}[htbp]",
        r"\centering",
        r"\small",
        rf"\caption{{{latex_escape(caption(run))}}}",
        r"\label{tab:personasteer-length-control}",
        r"\medskip",
        FIT_WIDTH,
        rf"\begin{{tabular}}{{l{'r' * len(COLUMNS)}}}",
        r"\toprule",
        " & ".join(["Method", *map(_heading, labels())]) + r" \\",
        r"\midrule",
    ]
    for method in run.methods:
        values = summary.get(method) or {}
        cells = []
        for metric, prefix in COLUMNS:
            value, interval, counted = parts(values, metric, prefix)
            small = [
                rf"{{\footnotesize {latex_number(p)}}}"
                for p in (interval, counted)
                if p
            ]
            cells.append(_stacked([latex_number(value), *small], "t"))
        lines.append(" & ".join([latex_escape(method), *cells]) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}}", r"\end{table}", ""]
    return "\n".join(lines)
