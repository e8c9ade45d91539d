"""Paper-ready comparison tables: a LaTeX fragment (booktabs) and GitHub
Markdown, one table per suite of a run, in English.

The tables are the dashboard's (:func:`reports.tables.comparison_table`):
methods x the suite's summary metrics that are table columns, the best value
per column in bold (:func:`reports.tables.best_methods`), and for the
non-baseline methods the difference of the values to the baseline with its
CI and Holm-adjusted significance marks (:func:`reports.tables.significance`). Each
table carries a caption that states the tests, the correction and the real n.

LaTeX output needs ``booktabs`` and ``graphicx``: a tabular wider than the
line (a comparison's long ``run/method`` names) is scaled down to the
line width, never up. Every LaTeX special character in a name
or label is escaped (:func:`reports.paper_text.latex_escape`); Latin-1 letters are
kept, and characters the default OT1 fonts cannot typeset (CJK, emoji, «, þ,
...) are written as code points, ``\\texttt{[U+4E2D U+6587]}``, so the file
compiles with pdflatex whatever the method names are. Wide suites are split
into blocks of at most ``LATEX_BLOCK_COLUMNS`` columns under one caption.

>>> from types import SimpleNamespace
>>> run = SimpleNamespace(id="0123456789abcdef", methods=["Base", "Ours"],
...     suites=["style"], aggregates={"summary": {
...         "Base": {"nvcs_avg": 0.5, "ertd_avg": 9.0},
...         "Ours": {"nvcs_avg": 0.75, "ertd_avg": 7.25}}, "comparisons": []})
>>> print(to_markdown(run, "Base"))  # doctest: +NORMALIZE_WHITESPACE
| Method | Style similarity (NVCS) ↑ | Readability gap (ERTD) ↓ |
|:--|--:|--:|
| Base | 0.50 | 9.00 |
| Ours | **0.75** | **7.25** |
<BLANKLINE>
Roleplay style (NVCS, ERTD). Values are means over sessions (↑ higher is
better; ↓ lower is better; the best value per column in bold).
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from metrics import basis, registry
from metrics.counts import count_key
from metrics.rows import finite_json
from metrics.suite import Metric
from reports import (
    Reported,
    paper_agreement,
    paper_card,
    paper_criteria,
    paper_inter_turns,
    paper_length,
    paper_panel,
    paper_summary,
)
from reports import tables as table_views
from reports.paper_text import (
    CJK_FONTS,
    FIT_WIDTH,
    bootstrap_text,
    direction,
    heading,
    latex_escape,
    latex_number,
    markdown_escape,
    number,
    span,
)

LATEX_BLOCK_COLUMNS = 4  # metric columns per tabular: wider suites get blocks
HEADING_CHARS = 14  # LaTeX column headings wrap at about this many characters


def baseline_of(run: Reported, wanted: str | None) -> str:
    """``wanted`` when it is a method of the run, else the first method.

    >>> baseline_of(SimpleNamespace(methods=["A", "B"]), "B"), baseline_of(
    ...     SimpleNamespace(methods=["A", "B"]), "nope")
    ('B', 'A')
    """
    return wanted if wanted is not None and wanted in run.methods else run.methods[0]


def tables(run: Reported, baseline: str, holm: str = "metric") -> list[dict[str, Any]]:
    """The dashboard's comparison table of every suite of the run that still
    exists, computed from finite aggregates (older releases stored inf)."""
    clean = SimpleNamespace(
        methods=list(run.methods), aggregates=finite_json(run.aggregates or {})
    )
    known = set(registry.names())
    return [
        table_views.comparison_table(clean, baseline, suite, holm=holm)
        for suite in run.suites
        if suite in known
    ]


def shown_versus(table: dict[str, Any]) -> list[dict[str, Any]]:
    """The comparisons a table shows (a Δ needs a difference)."""
    return [
        cell["versus"]
        for row in table["rows"]
        for cell in row["cells"]
        if cell["versus"] and cell["versus"]["diff"] is not None
    ]


def caption(run: Reported, table: dict[str, Any], baseline: str) -> str:
    """What the values are (each column's basis), and the tests, correction
    and n behind each Δ: the dashboard's, in English."""
    suite = registry.get(table["suite"])
    counts = _mean_counts(run, table)
    notes = [f"n = {span(counts)} per value"] if counts else []
    notes += legend(table["columns"])
    said = f" ({'; '.join(notes)})" if notes else ""
    bases = [f"{m.label.msgid}: {m.basis.msgid}" for m in table["columns"] if m.basis]
    listed = f" unless listed: {'; '.join(bases)}" if bases else ""
    text = f"{suite.label.msgid}. Values are means over sessions{listed}{said}."
    text += _noted(run, table)
    if all(cell["value"] is None for row in table["rows"] for cell in row["cells"]):
        text += (
            " No value could be computed: every row of these metrics is "
            "unscored, not configured (no judge) or not applicable; the run's "
            "status counts say how many."
        )
    text += rank_sentence(table)
    versus = shown_versus(table)
    if not versus:
        return text
    return text + (
        f" Δ vs {baseline}: a method's value − the value of {baseline}, on the "
        "column's basis, with a 95% paired bootstrap CI of the sessions, both "
        f"values recomputed ({bootstrap_text([v.get('n') or 0 for v in versus])}); "
        "* p<0.05, "
        "** p<0.01, *** p<0.001, two-sided paired permutation test of Δ on the "
        "same basis (each session's parts of the two methods kept or swapped, "
        "both values recomputed; every assignment up to "
        f"{basis.PERMUTATION_EXACT_UP_TO} sessions, else "
        f"{basis.PERMUTATION_DRAWS:,} seeded random assignments), "
        + _holm_family(table, baseline)
        + _unpaired(versus)
    )


def rank_sentence(table: dict[str, Any]) -> str:
    """What the Rank column means (empty without one), in English.

    >>> rank_sentence({"rank_metric": registry.spec("bt_score")})[:45]
    ' Rank (by Bradley–Terry strength): 1 + the nu'
    """
    by = table.get("rank_metric")
    if by is None:
        return ""
    return (
        f" Rank (by {by.label.msgid}): 1 + the number of methods whose 95% "
        f"interval of {by.label.msgid} lies entirely on the better side of this "
        "method's (above it, or below it where lower is better); methods whose "
        "intervals overlap share a rank, and a method without an interval has "
        "none (—)."
    )


def rank_cell(row: dict[str, Any], plain: Callable[[str], str] = str) -> str:
    """A row's rank, or the dash without one.

    >>> rank_cell({"rank": 2}), rank_cell({"rank": None})
    ('2', '—')
    """
    return plain(number(None)) if row.get("rank") is None else str(row["rank"])


def _holm_family(table: dict[str, Any], baseline: str) -> str:
    """The marks' Holm family, in English."""
    if table.get("holm_family") == "table":
        return (
            f"Holm-adjusted across every comparison with {baseline} in this "
            "table (all columns together)."
        )
    return f"Holm-adjusted within each column over its comparisons with {baseline}."


def _unpaired(versus: list[dict[str, Any]]) -> str:
    """What the pairing left out, in a run whose file lacks replies."""
    left = max(
        ((v.get("unpaired_a") or 0) + (v.get("unpaired_b") or 0) for v in versus),
        default=0,
    )
    if not left:
        return ""
    return (
        f" Up to {left:,} sessions with a value of one of the two methods only "
        "(a reply missing in the file, or unscored) are left out of a Δ."
    )


def _noted(run: Reported, table: dict[str, Any]) -> str:
    """The summary notes of the table's values (why one is null, or what a
    panel mean rests on), in English."""
    aggregates = run.aggregates or {}
    methods: dict[tuple[str, str], list[str]] = {}  # (column, note) -> methods
    for column in table["columns"]:
        for row in table["rows"]:
            said = paper_summary.english_note(aggregates, row["method"], column.id)
            if said:
                methods.setdefault((column.label.msgid, said), []).append(row["method"])
    if table.get("rank_metric"):  # why a method has no rank (the dash)
        for row in table["rows"]:
            if row.get("rank") is None and row.get("rank_note"):
                methods.setdefault(("Rank", row["rank_note"]), []).append(row["method"])
    found = [
        f"{_named(noted, len(table['rows']))}, {label}: {said}"
        for (label, said), noted in methods.items()
    ]
    return f" Notes: {'; '.join(found)}." if found else ""


def _named(methods: list[str], of: int) -> str:
    """The methods a note is about ("every method" when it is all of them).

    >>> _named(["A", "B"], 2), _named(["A"], 2)
    ('every method', 'A')
    """
    return "every method" if len(methods) == of > 1 else ", ".join(methods)


def legend(columns: list[Metric]) -> list[str]:
    """The arrows the headings use, and the bold.

    >>> legend([registry.spec("ertd_avg"), registry.spec("al_r2")])
    ['↓ lower is better', 'the best value per column in bold']
    """
    ranked = [m for m in columns if m.ranked]
    found = [
        text
        for higher, text in ((True, "↑ higher is better"), (False, "↓ lower is better"))
        if any(m.higher_is_better == higher for m in ranked)
    ]
    return [*found, "the best value per column in bold"] if ranked else found


def _mean_counts(run: Reported, table: dict[str, Any]) -> list[int]:
    """The sessions behind the table's values (the summary's ``<id>_n``)."""
    summary = (run.aggregates or {}).get("summary") or {}
    found = (
        (summary.get(row["method"]) or {}).get(count_key(column.id))
        for row in table["rows"]
        for column, cell in zip(table["columns"], row["cells"], strict=True)
        if cell["value"] is not None
    )
    return [n for n in found if isinstance(n, int)]


def _cell(
    cell: dict[str, Any],
    bold: Callable[[str], str],
    delta: Callable[[str, dict[str, Any], str], str],
    plain: Callable[[str], str] = str,
) -> str:
    value = plain(number(cell["value"]))
    shown = bold(value) if cell["best"] and cell["value"] is not None else value
    versus = cell["versus"]
    if not versus or versus["diff"] is None:
        return shown
    return delta(shown, versus, cell["mark"])


def _shown_diff(versus: dict[str, Any]) -> float | None:
    """The difference of the two values as printed (``reports/tables.py``)."""
    diff: float | None = versus.get("shown_diff", versus["diff"])
    return diff


def _interval(versus: dict[str, Any]) -> str:
    if versus["ci_low"] is None or versus["ci_high"] is None:
        return ""
    return f" [{number(versus['ci_low'])}, {number(versus['ci_high'])}]"


def _latex_delta(value: str, versus: dict[str, Any], mark: str) -> str:
    """The value, and under it the Δ and its CI in small print."""
    stars = f"$^{{{mark}}}$" if mark else ""
    diff = latex_number(number(_shown_diff(versus), signed=True))
    lines = [value, rf"{{\footnotesize $\Delta$ {diff}{stars}}}"]
    if _interval(versus):
        lines.append(rf"{{\footnotesize {latex_number(_interval(versus).strip())}}}")
    return stacked(lines, "t")


def stacked(lines: list[str], align: str) -> str:
    r"""Lines in one table cell, right-aligned (a nested tabular: core LaTeX).

    >>> print(stacked(["a", "b"], "t"))
    \begin{tabular}[t]{@{}r@{}}a\\b\end{tabular}
    >>> stacked(["a"], "b")
    'a'
    """
    if len(lines) == 1:
        return lines[0]
    body = r"\\".join(lines)
    return rf"\begin{{tabular}}[{align}]{{@{{}}r@{{}}}}{body}\end{{tabular}}"


def latex_heading(metric: Metric) -> str:
    r"""A column heading, wrapped at ``HEADING_CHARS`` and bottom-aligned.

    >>> print(latex_heading(registry.spec("dei_avg")))
    \begin{tabular}[b]{@{}r@{}}Decision\\explainability\\(DEI) $\uparrow$\end{tabular}
    """
    words = metric.label.msgid.split()
    if direction(metric):  # the arrow stays with the last word
        words[-1] += " " + direction(metric)
    lines: list[str] = []
    for word in words:
        if lines and len(lines[-1]) + 1 + len(word) <= HEADING_CHARS:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return stacked([latex_escape(line) for line in lines], "b")


def _markdown_delta(value: str, versus: dict[str, Any], mark: str) -> str:
    stars = " " + markdown_escape(mark) if mark else ""
    delta = f"Δ {number(_shown_diff(versus), signed=True)}{_interval(versus)}{stars}"
    return f"{value} ({delta})"


def to_latex(
    run: Reported, baseline: str, cjk: bool = False, holm: str = "metric"
) -> str:
    """The run's tables as one LaTeX fragment (booktabs; no preamble). With
    ``cjk``, Chinese and Korean text is typeset through CJKutf8."""
    token = CJK_FONTS.set(cjk)
    try:
        parts = [
            f"% PersonaSteer Benchmark: comparison tables of run {run.id[:12]}.",
            r"% Needs \usepackage{booktabs} and \usepackage{graphicx}"
            + (r" and \usepackage{CJKutf8}." if cjk else "."),
            r"% Characters the default fonts lack are written as \texttt{[U+XXXX]}"
            + (" (Chinese and Korean: CJK environments)." if cjk else "."),
        ]
        for table in tables(run, baseline, holm):
            parts.append(_latex_table(run, table, baseline))
            if _length_controlled(run, table):  # beside the raw win rate
                parts.append(paper_length.to_latex(run))
        if panel := paper_panel.to_latex(run):  # each judge beside the panel mean
            parts.append(panel)
        # a comparison of runs' judges
        if agreement := getattr(run, "agreement", None):
            parts.append(paper_agreement.to_latex(agreement))
        if criteria := paper_criteria.to_latex(_validity(run)):  # per criterion
            parts.append(criteria)
        if turns := paper_inter_turns.to_latex(_curves(run), list(run.methods)):
            parts.append(turns)  # a derived label by number of inter-turns
        if card := paper_card.to_latex(run):  # one run: its judge's report card
            parts.append(card)
        return "\n".join(parts) + "\n"
    finally:
        CJK_FONTS.reset(token)


def _latex_table(run: Reported, table: dict[str, Any], baseline: str) -> str:
    """One float: the caption, then the columns in blocks of
    ``LATEX_BLOCK_COLUMNS`` (a wide suite stays within the page)."""
    indices = list(range(len(table["columns"])))
    blocks = [
        indices[start : start + LATEX_BLOCK_COLUMNS]
        for start in range(0, len(indices), LATEX_BLOCK_COLUMNS)
    ]
    lines = [
        r"\begin{table}[htbp]",
        r"\centering",
        r"\small",
        rf"\caption{{{latex_escape(caption(run, table, baseline))}}}",
        rf"\label{{tab:personasteer-{_label(table['suite'])}}}",
        r"\medskip",
    ]
    for index, block in enumerate(blocks):
        if index:
            lines += ["", r"\medskip"]
        lines += _latex_block(table, block)
    lines += [r"\end{table}", ""]
    return "\n".join(lines)


def _latex_block(table: dict[str, Any], block: list[int]) -> list[str]:
    def bold(text: str) -> str:
        return rf"\textbf{{{text}}}"

    ranked = bool(table.get("rank_metric")) and block[:1] == [0]  # first block
    columns = [table["columns"][i] for i in block]
    head = ["Method", *(["Rank"] if ranked else []), *map(latex_heading, columns)]
    lines = [
        FIT_WIDTH,
        rf"\begin{{tabular}}{{l{'r' * (len(block) + ranked)}}}",
        r"\toprule",
        " & ".join(head) + r" \\",
        r"\midrule",
    ]
    for row in table["rows"]:
        cells = [
            _cell(row["cells"][i], bold, _latex_delta, latex_number) for i in block
        ]
        rank = [rank_cell(row, latex_number)] if ranked else []
        lines.append(" & ".join([latex_escape(row["method"]), *rank, *cells]) + r" \\")
    return [*lines, r"\bottomrule", r"\end{tabular}}"]


def _curves(run: Reported) -> dict[str, Any] | None:
    """The run's curves (none for a comparison of runs)."""
    return (getattr(run, "aggregates", None) or {}).get("curves")


def _validity(run: Reported) -> dict[str, Any] | None:
    """The run's judge checks (none for a comparison of runs)."""
    return (getattr(run, "aggregates", None) or {}).get("judge_validity")


def _length_controlled(run: Reported, table: dict[str, Any]) -> bool:
    """Whether the length-controlled table follows this suite's table (a
    run's, not a comparison of runs': each run has its own fit)."""
    return (
        not hasattr(run, "sides")
        and paper_length.applies(table["suite"])
        and paper_length.computed(run)
    )


def _label(name: str) -> str:
    return "".join(c if c.isascii() and c.isalnum() else "-" for c in name.lower())


def to_markdown(run: Reported, baseline: str, holm: str = "metric") -> str:
    """The run's tables as GitHub-flavoured Markdown, each with its caption."""
    parts = []
    for table in tables(run, baseline, holm):
        parts.append(_markdown_table(run, table, baseline))
        if _length_controlled(run, table):  # beside the raw win rate
            parts.append(paper_length.to_markdown(run))
    if panel := paper_panel.to_markdown(run):  # each judge beside the panel mean
        parts.append(panel)
    if agreement := getattr(run, "agreement", None):  # a comparison of runs' judges
        parts.append(paper_agreement.to_markdown(agreement))
    if criteria := paper_criteria.to_markdown(_validity(run)):  # per criterion
        parts.append(criteria)
    if turns := paper_inter_turns.to_markdown(_curves(run), list(run.methods)):
        parts.append(turns)  # a derived label by number of inter-turns
    if card := paper_card.to_markdown(run):  # one run: its judge's report card
        parts.append(card)
    return "\n".join(parts)


def _markdown_table(run: Reported, table: dict[str, Any], baseline: str) -> str:
    def bold(text: str) -> str:
        return f"**{text}**"

    ranked = bool(table.get("rank_metric"))
    head = [
        "Method",
        *(["Rank"] if ranked else []),
        *(markdown_escape(heading(m)) for m in table["columns"]),
    ]
    lines = [
        "| " + " | ".join(head) + " |",
        "|:--|" + "--:|" * (len(table["columns"]) + ranked),
    ]
    for row in table["rows"]:
        cells = [_cell(c, bold, _markdown_delta) for c in row["cells"]]
        rank = [rank_cell(row)] if ranked else []
        lines.append(
            "| " + " | ".join([markdown_escape(row["method"]), *rank, *cells]) + " |"
        )
    lines += ["", markdown_escape(caption(run, table, baseline)), ""]
    return "\n".join(lines)
