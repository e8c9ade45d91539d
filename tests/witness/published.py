"""What a reader downloads, against the witness (issue 56): every number of
``export.csv``, ``summary.csv``, ``export.md``, ``export.tex`` and the CLI
``report`` (Markdown or LaTeX) must be the witness's.

Every expected number comes from the plan's rows (``witness_doc``) through
``tests/witness/reference.py``. Read from the product's results ``document``
instead, as numbers ``differences.interval_differences`` checks against the
exact bootstrap distribution: the bootstrap ends (each Δ's interval, the win
rate's and Bradley–Terry's).
The files' layouts (columns, how a table prints a value, a Δ, its interval
and marks, the caption's n) were learnt from docs/metrics/README.md "One
basis per table", docs/cli.md and ``reports/``; nothing here calls the product.

Not checked: the words of notes (why a value is null, what a panel mean
rests on) in summary.csv and the captions, whose numbers the reference does
not compute; labels, bases and the ``judge`` column of summary.csv.

Returns ``(where, witness, file)`` triples, like ``differences.py``.
"""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

from tests.witness import reference as ref
from tests.witness.differences import RANDOM_SUMMARY_KEYS, close

Difference = tuple[str, Any, Any]
NO_VALUE = "—"  # Markdown; LaTeX prints "---" (reports/paper_text.latex_number)
# The suites' table columns by English heading, arrow removed (layout:
# reports/paper_text.heading); a per-judge table names its metric so too.
COLUMNS = {
    "Length-controlled AL": "al_lc",
    "AL average": "al_avg",
    "AL slope": "al_slope",
    "AL intercept": "al_intercept",
    "AL R²": "al_r2",
    "Keep-chatting rate": "binary_rate",
    "Mean per-session slope": "al_session_slope",
    "Pairwise win rate": "pairwise_winrate",
    "Bradley–Terry strength": "bt_score",
}
# A value's own interval when it is not <id>_ci_low/high (pairwise.md: bt_ci_*
# is bt_score's bootstrap CI).
OWN_INTERVAL = {"bt_score": "bt", "bt_lc_score": "bt_lc"}  # pairwise.md
PANEL_MEAN = "panel mean"
# Rank groups (docs/methods.md "Rank groups"): the values ranked are the
# ranked ones with their own interval; a suite's table ranks by its lead
# value when that has one, else by its first such column (alignment's lead,
# al_avg, has no interval). Higher is better for all of these.
RANKED = {
    "alignment": ("al_session_slope",),
    "pairwise": ("pairwise_winrate", "bt_score"),
}
RANK_BY = {"alignment": "al_session_slope", "pairwise": "pairwise_winrate"}
# summary.csv's columns of the Δ against the baseline (reports/paper_summary.py)
DELTA_COLUMNS = ("delta", "delta_ci_low", "delta_ci_high", "p", "p_holm")
MARKS = ((0.001, "***"), (0.01, "**"), (0.05, "*"))  # the caption's legend


@dataclass
class Witness:
    methods: list[str]
    judges: list[str]
    suites: list[str]
    # the reference's summary, with the document's bootstrap ends (random)
    summary: dict[str, dict[str, Any]]
    # (summary value id, method) -> that method's comparison with the baseline
    versus: dict[tuple[str, str], dict[str, Any]]
    lacks_replies: bool  # a missing row: comparisons count unpaired sessions
    # the judge report card's rows in the card's order (report-card.md:
    # value, n, threshold, rule, verdict); [] for a run without a judge (no
    # card is printed)
    card: list[dict[str, Any]]

    @property
    def baseline(self) -> str:
        return self.methods[0]  # the exports' default baseline


def witness_of(witness_doc: dict, document: dict) -> Witness:
    summary = ref.summary(witness_doc)
    run = witness_doc["run"]
    judges = list(run["judge"]["models"])
    for method, values in summary.items():
        published = (document.get("summary") or {}).get(method) or {}
        for key in RANDOM_SUMMARY_KEYS:
            if _count_key(key) in values:  # checked by interval_differences
                values[key] = published.get(key)
    lacks = any(row["status"] == "missing" for row in witness_doc["rows"])
    methods = list(run["file"]["methods"])
    versus = versus_baseline(witness_doc, document, summary, methods[0])
    card = []
    if (document.get("run") or {}).get("judge"):
        # position consistency and the length effect: the document's, which
        # checks.position_checks holds to the plan
        borrowed = {**witness_doc, "judge_validity": document.get("judge_validity")}
        card = ref.judge_validity(borrowed)["report_card"]
    return Witness(methods, judges, list(run["suites"]), summary, versus, lacks, card)


def versus_baseline(
    witness_doc: dict, document: dict, summary: dict, baseline: str
) -> dict[tuple[str, str], dict[str, Any]]:
    """Each method against the baseline, oriented method − baseline, p of
    Δ's paired permutation test Holm-adjusted within the column over its
    comparisons with the baseline (README "One basis per table"); the Δ
    interval is the document's, and so is a sampled p (over 13 sessions,
    checked by ``interval_checks``)."""
    index = ref.build_index(witness_doc)
    published = {
        (c["metric"], c["a"], c["b"]): c for c in document.get("comparisons") or []
    }
    comparisons = ref.comparisons(witness_doc)
    found = {}
    for metric in dict.fromkeys(c["metric"] for c in comparisons):
        family = {
            (c["b"] if c["a"] == baseline else c["a"]): c
            for c in comparisons
            if c["metric"] == metric and baseline in (c["a"], c["b"])
        }
        tested = {}
        for method, c in family.items():
            kind, p, _ = ref.permutation_test(index, metric, c["a"], c["b"])
            ends = published.get((metric, c["a"], c["b"]), {})
            tested[method] = p if kind == "exact" or p is None else ends.get("delta_p")
            if c["delta"] is None:
                tested[method] = None
        adjusted = ref.holm(list(tested.values()))
        for (method, c), p_holm in zip(family.items(), adjusted, strict=True):
            sign = 1 if c["a"] == method else -1
            ends = published.get((metric, c["a"], c["b"]), {})
            low, high = ends.get("delta_ci_low"), ends.get("delta_ci_high")
            if sign < 0:
                low, high = (None if v is None else -v for v in (high, low))
            sessions = [
                set(ref.session_means(ref.panel_values(index, m, metric)))
                for m in (method, baseline)
            ]
            delta = c["delta"]
            found[(c["value_metric"], method)] = {
                "delta": None if delta is None else sign * delta,
                "delta_ci_low": low,
                "delta_ci_high": high,
                "p": tested[method],
                "p_holm": p_holm,
                "n": c["n"],
                "unpaired": len(sessions[0] ^ sessions[1]),
            }
    return found


def export_differences(
    witness_doc: dict, document: dict, files: dict[str, str], *reports: str
) -> list[Difference]:
    """Every number of the four downloads and of each CLI report (Markdown,
    or LaTeX when it starts with a ``%`` comment) against the witness (its
    figures computed once for all of them)."""
    witness = witness_of(witness_doc, document)
    found = [
        *rows_differences(witness_doc["rows"], files["export.csv"]),
        *summary_differences(witness, files["summary.csv"]),
        *tables_differences(witness, "export.md", markdown_tables(files["export.md"])),
        *tables_differences(witness, "export.tex", latex_tables(files["export.tex"])),
    ]
    for report in reports:
        form = "tex" if report.lstrip().startswith("%") else "md"
        found += tables_differences(
            witness,
            f"report --format {form}",
            latex_tables(report) if form == "tex" else markdown_tables(report),
        )
    return found


# --- export.csv ------------------------------------------------------------


def _row_key(row: dict) -> tuple:
    round_k = row["round"]
    round_k = int(round_k) if round_k not in (None, "") else None
    fields = (row["session_id"], round_k, row["method"], row["metric"])
    return (*fields, row["judge"] or "")


def _number(text: str) -> float | None:
    return None if text == "" else float(text)


def rows_differences(witness_rows: list[dict], text: str) -> list[Difference]:
    """Each row of the witness's metrics once, with its status, and a value
    that parses back to the witness's float exactly."""
    expected = {_row_key(row): row for row in witness_rows}
    metrics = {row["metric"] for row in witness_rows}
    found: dict[tuple, list[dict]] = {}
    for row in csv.DictReader(io.StringIO(text)):
        if row["metric"] in metrics:
            found.setdefault(_row_key(row), []).append(row)
    out: list[Difference] = []
    for key in expected.keys() | found.keys():
        where = f"export.csv {key}"
        if len(found.get(key, [])) != 1 or key not in expected:
            count = len(found.get(key, []))
            out.append((where, int(key in expected), f"{count} row(s)"))
            continue
        want, got = expected[key], found[key][0]
        if (got["status"], _number(got["value"])) != (want["status"], want["value"]):
            shown = (want["status"], want["value"])
            out.append((where, shown, (got["status"], got["value"])))
    return out


# --- summary.csv -----------------------------------------------------------


def _is_count(key: str) -> bool:
    return key.partition("@")[0].endswith("_n")


def _count_key(key: str) -> str:
    base, at, judge = key.partition("@")
    return f"{base}_n{at}{judge}"


def own_interval(values: dict, metric: str) -> tuple[Any, Any]:
    """A value's own interval ends (results-format: ``<id>_ci_*``, the id
    without ``_avg``, pairwise.md's ``bt_ci_*``); (None, None) without a value."""
    names = (metric, metric.removesuffix("_avg"), OWN_INTERVAL.get(metric))
    low = next((values[f"{n}_ci_low"] for n in names if f"{n}_ci_low" in values), None)
    high = next(
        (values[f"{n}_ci_high"] for n in names if f"{n}_ci_high" in values), None
    )
    return (low, high) if values.get(metric) is not None else (None, None)


def expected_rank(witness: Witness, method: str, metric: str) -> int | None:
    """docs/methods.md "Rank groups": 1 + the methods whose interval's lower
    end is above this method's upper end by more than the comparisons'
    resolution (1e-9); no rank without both ends."""
    low, high = own_interval(witness.summary[method], metric)
    if low is None or high is None:
        return None
    above = 0
    for other in witness.methods:
        o_low, o_high = own_interval(witness.summary[other], metric)
        if other != method and o_low is not None and o_high is not None:
            above += o_low - high > 1e-9
    return 1 + above


def expected_summary_row(witness: Witness, method: str, metric: str) -> dict:
    """The numbers of one summary.csv row (results-format, paper_summary's
    header comment: the value's own CI; Δ columns on table columns only;
    the rank of a ranked value)."""
    values = witness.summary[method]
    value = values.get(metric)
    row = {"value": value, "n": values.get(_count_key(metric))}
    row["ci_low"], row["ci_high"] = own_interval(values, metric)
    ranked = {m for suite in witness.suites for m in RANKED.get(suite, ())}
    row["rank"] = expected_rank(witness, method, metric) if metric in ranked else None
    versus = witness.versus.get((metric, method)) or {}
    shown = versus.get("delta") is not None
    for name in DELTA_COLUMNS:
        row[name] = versus[name] if shown else None
    return row


def summary_differences(witness: Witness, text: str) -> list[Difference]:
    expected = {
        (method, key)
        for method, values in witness.summary.items()
        for key in values
        if not _is_count(key)
    }
    out: list[Difference] = []
    seen = set()
    for row in csv.DictReader(io.StringIO(text)):
        key = (row["method"], row["metric"])
        seen.add(key)
        if key not in expected:
            out.append((f"summary.csv {key}", "<no such value>", row["value"]))
            continue
        if row["baseline"] not in ("", witness.baseline):
            out.append(
                (f"summary.csv {key}.baseline", witness.baseline, row["baseline"])
            )
        for name, want in expected_summary_row(witness, *key).items():
            got = _number(row[name])
            if not close(want, got):
                out.append((f"summary.csv {key}.{name}", want, row[name]))
    for method, metric in expected - seen:
        want = expected_summary_row(witness, method, metric)
        if want["value"] is not None or want["n"]:  # absent: no value, no n
            out.append((f"summary.csv {(method, metric)}", want, "<absent>"))
    return out


# --- the paper tables: export.md, export.tex, the CLI report ---------------


@dataclass
class Table:
    caption: str
    header: list[str]
    rows: list[list[str]]  # the method, then each cell written as Markdown's


def _pipe_cells(line: str) -> list[str]:
    """A Markdown table row's cells (an escaped ``\\|`` stays in its cell)."""
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def markdown_tables(text: str) -> list[Table]:
    """Each pipe table, with the paragraph under it as its caption."""
    blocks = [block for block in re.split(r"\n\s*\n", text) if block.strip()]
    tables = []
    for position, block in enumerate(blocks):
        if not block.startswith("|"):
            continue
        lines = block.splitlines()
        after = blocks[position + 1 : position + 2]
        caption = after[0] if after and not after[0].startswith("|") else ""
        rows = [_pipe_cells(line) for line in lines[2:]]  # [1]: the alignment
        tables.append(Table(caption, _pipe_cells(lines[0]), rows))
    return tables


# LaTeX as the Markdown export writes it (reports/paper_text.py: latex_number,
# LATEX_SYMBOLS); "---" before "--"
FROM_LATEX = {
    "$-$": "-",
    r"$\Delta$": "Δ",
    r"$\uparrow$": "↑",
    r"$\downarrow$": "↓",
    r"\textsuperscript{2}": "²",
    "---": NO_VALUE,
    "--": "–",
}
FLOAT = re.compile(r"\\begin\{table\}.*?\\end\{table\}", re.S)
CARD_LABEL = r"\label{tab:personasteer-report-card}"  # the card's float
CAPTION = re.compile(r"^\\caption\{(.*)\}\s*$", re.M)
STACKED = re.compile(r"\\begin\{tabular\}\[[tb]\]\{@\{\}r@\{\}\}(.*?)\\end\{tabular\}")
TABULAR = re.compile(r"\\begin\{tabular\}\{lr*\}(.*?)\\end\{tabular\}", re.S)
RULE = re.compile(r"\\(?:top|mid|bottom)rule")


def _from_latex(text: str) -> str:
    for latex, plain in FROM_LATEX.items():
        text = text.replace(latex, plain)
    return text.strip()


def _latex_cell(text: str) -> str:
    r"""A cell as Markdown writes it: ``\textbf{v}`` then ``{\footnotesize Δ
    d$^{*}$}`` and ``{\footnotesize [l, h]}`` on lines of their own, to
    ``**v** (Δ d [l, h] \*)``."""
    first, *lines = [line.strip() for line in text.split("\n")]
    value = re.sub(r"^\\textbf\{(.*)\}$", r"**\1**", first)
    rest = " ".join(re.sub(r"^\{\\footnotesize (.*)\}$", r"\1", x) for x in lines)
    stars = re.search(r"\$\^\{(\*+)\}\$", rest)
    if stars:
        rest = rest.replace(stars.group(0), "") + " " + stars.group(1)
    return f"{value} ({rest.replace('*', chr(92) + '*')})" if rest else value


def latex_tables(text: str) -> list[Table]:
    """Each table float: its caption, and its tabular blocks side by side
    (a wide suite is split into blocks of columns, each with the methods)."""
    tables = []
    for found in FLOAT.finditer(text):
        body = found.group(0)
        if CARD_LABEL in body:
            tables.append(latex_card(body))
            continue
        caption = CAPTION.search(body)
        # a stacked cell or heading: its lines, one per "\n"
        body = STACKED.sub(lambda m: m.group(1).replace("\\\\", "\n"), body)
        header: list[str] = []
        rows: list[list[str]] = []
        for block in TABULAR.finditer(body):
            lines = [RULE.sub("", line) for line in block.group(1).split("\\\\")]
            cells = [
                [_from_latex(cell) for cell in re.split(r"(?<!\\)&", line)]
                for line in lines
                if line.strip()
            ]
            head, *body_rows = cells
            header += [" ".join(h.split()) for h in head[len(header) > 0 :]]
            for index, row in enumerate(body_rows):
                if index == len(rows):
                    rows.append(row[:1])
                rows[index] += [_latex_cell(cell) for cell in row[1:]]
        said = _from_latex(caption.group(1)) if caption else ""
        tables.append(Table(said, header, rows))
    return tables


# the card's LaTeX as its Markdown (report-card.md's symbols; paper_text)
CARD_FROM_LATEX = {
    r"$\geq$": "≥",
    r"$\leq$": "≤",
    r"$\rho$": "ρ",
    r"$\kappa$": "κ",
    r"$\alpha$": "α",
    r"$\tau$": "τ",
    r"\_": "_",
    r"\%": "%",
    r"\&": "&",
}
CARD_TABULAR = re.compile(r"\\begin\{tabular\}\{@\{\}p.*?\n(.*?)\\end\{tabular\}", re.S)


def latex_card(body: str) -> Table:
    """The report card's float: its caption (the verdict line) and rows."""
    found = CARD_TABULAR.search(body)
    text = (found.group(1) if found else "").replace("\\raggedright ", "")
    lines = [RULE.sub("", line) for line in text.split("\\tabularnewline")]
    cells = []
    for line in lines:
        if not line.strip():
            continue
        row = []
        for cell in re.split(r"(?<!\\)&", line):
            for latex, plain in CARD_FROM_LATEX.items():
                cell = cell.replace(latex, plain)
            row.append(_from_latex(cell))
        cells.append(row)
    caption = CAPTION.search(body)
    head, *rows = cells or [[]]
    return Table(_from_latex(caption.group(1)) if caption else "", head, rows)


def shown(value: float | None) -> str:
    """Two decimals, never "-0.00"; no value: the dash (paper_text.number)."""
    if value is None:
        return NO_VALUE
    text = f"{value:.2f}"
    return "0.00" if float(text) == 0 else text


def signed(difference: Decimal) -> str:
    return "0.00" if difference == 0 else f"{difference:+.2f}"


def marks(p_holm: float | None) -> str:
    if p_holm is None:
        return ""
    return next((mark for below, mark in MARKS if p_holm < below), "")


def span(values: list[int]) -> str:
    low, high = min(values), max(values)
    return str(low) if low == high else f"{low}–{high}"


def best_methods(witness: Witness, metric: str, arrow: str) -> set[str]:
    """Bold: the best value as shown of a ranked column (an arrow in its
    heading); none when every method shows the same value."""
    values = {
        method: Decimal(shown(witness.summary[method].get(metric)))
        for method in witness.methods
        if witness.summary[method].get(metric) is not None
    }
    if not arrow or len(set(values.values())) < 2:
        return set()
    best = max(values.values()) if arrow == "↑" else min(values.values())
    return {method for method, value in values.items() if value == best}


def expected_cell(witness: Witness, metric: str, method: str, bold: bool) -> str:
    """The value; beside a compared column's non-baseline value, Δ (the
    difference of the two values as shown), its interval and its marks."""
    value = witness.summary[method].get(metric)
    text = f"**{shown(value)}**" if bold else shown(value)
    versus = witness.versus.get((metric, method))
    if versus is None or versus["delta"] is None:
        return text
    base = witness.summary[witness.baseline][metric]
    parts = ["Δ " + signed(Decimal(shown(value)) - Decimal(shown(base)))]
    low, high = versus["delta_ci_low"], versus["delta_ci_high"]
    if low is not None and high is not None:
        parts.append(f"[{shown(low)}, {shown(high)}]")
    if marks(versus["p_holm"]):
        parts.append(marks(versus["p_holm"]).replace("*", "\\*"))
    return f"{text} ({' '.join(parts)})"


# the judge report card's table in export.md, export.tex and the CLI
# report (report-card.md): one row per criterion, in the card's order
CARD_HEADER = ["Criterion", "Judge", "Value", "n", "Threshold", "Verdict"]
CARD_RULES = {
    "at_least": "≥ {}",
    "at_most_abs": "abs. value ≤ {}",
    "interval_not_above": "fails when its 95% interval lies above {}",
}
CARD_VALUE = re.compile(r"^(—|-?\d+\.\d{3})")


def card_cells(row: dict[str, Any]) -> dict[str, str]:
    """A witness row as the card prints it: the value at three decimals,
    n, the threshold (the rules' words, report-card.md), the verdict."""
    value = row["value"]
    if value is None:
        shown_value = NO_VALUE
    else:
        shown_value = f"{value:.3f}"
        shown_value = f"{0:.3f}" if float(shown_value) == 0 else shown_value
    rules = {c: r for c, r, _ in (*ref.CARD, *ref.RECORDED_CARD)}
    rule = CARD_RULES[rules[row["criterion"]]]
    return {
        "value": shown_value,
        "n": NO_VALUE if not row["n"] else f"{row['n']:,}",
        "threshold": rule.format(f"{row['threshold']:g}"),
        "verdict": row["verdict"].replace("_", " "),
    }


def _card_halfway(value: float | None, printed: str) -> bool:
    """A value halfway between two printed three-decimal numbers (0.1375):
    either neighbour is the witness's (the docs name no rounding rule; the
    product's float noise picks one)."""
    if value is None or not CARD_VALUE.match(printed) or printed == NO_VALUE:
        return False
    thousandths = value * 1000
    tie = abs(thousandths - math.floor(thousandths) - 0.5) < 1e-6
    return tie and abs(float(printed) - value) < 0.00051


def card_differences(
    witness: Witness, name: str, cards: list[Table]
) -> list[Difference]:
    """The card's rows: each criterion's value (three decimals), n,
    threshold and verdict against the witness's card."""
    if len(cards) != bool(witness.card):
        return [(f"{name}: report cards", int(bool(witness.card)), len(cards))]
    if not cards:
        return []
    rows = cards[0].rows
    if len(rows) != len(witness.card):
        return [(f"{name}: report card rows", len(witness.card), len(rows))]
    out: list[Difference] = []
    for row, mine in zip(rows, witness.card, strict=True):
        where = f"{name}: report card {mine['criterion']}"
        if len(row) != len(CARD_HEADER):
            out.append((where, len(CARD_HEADER), len(row)))
            continue
        want = card_cells(mine)
        value = CARD_VALUE.match(row[2])
        got = {
            "value": value.group(1) if value else row[2],
            # a count of nothing, 0 or null, prints either way (differences.py)
            "n": NO_VALUE if row[3] == "0" else row[3],
            "threshold": row[4].replace("\\|", "|"),
            "verdict": row[5].partition(":")[0].replace("\\", ""),
        }
        for key, wanted in want.items():
            if got[key] != wanted and not (
                key == "value" and _card_halfway(mine["value"], got[key])
            ):
                out.append((f"{where}.{key}", wanted, got[key]))
    return out


# the pairwise suite's length-control table (pairwise.md "Length-controlled
# win rate"): its caption's first words, and (column, its interval's prefix)
LENGTH_TITLE = "Length control of the pairwise verdicts"
LENGTH_COLUMNS = {
    "Pairwise win rate": ("pairwise_winrate", "pairwise_winrate"),
    "Win rate if the longer reply always won": (
        "pairwise_longer_wins_rate",
        "pairwise_longer_wins_rate",
    ),
    "Length-controlled win rate": ("pairwise_winrate_lc", "pairwise_winrate_lc"),
    "Bradley–Terry strength": ("bt_score", "bt"),
    "Length-controlled Bradley–Terry strength": ("bt_lc_score", "bt_lc"),
}
FIGURES = re.compile(r"-?\d+(?:\.\d+)?")


def _same_figure(want: float, printed: str) -> bool:
    """Two decimals as the witness prints them; halfway, either neighbour."""
    return shown(want) == printed or (
        halfway(want) and abs(float(printed) - want) < 0.0051
    )


def length_differences(witness: Witness, name: str, tables: list[Table]) -> list:
    """Each method's win rate, longer-reply baseline, length-controlled win
    rate and strengths, each with its interval and n, against the witness
    (the intervals are the document's bootstrap ends, witness_of)."""
    # a comparison of runs prints none (each run has its own fit)
    expected = not name.startswith("compare") and any(
        "pairwise_winrate_lc" in v for v in witness.summary.values()
    )
    if len(tables) != int(expected):
        return [(f"{name}: length-control tables", int(expected), len(tables))]
    out: list[Difference] = []
    for table in tables:
        out += _methods_differences(witness, f"{name} length control", table)
        if table.header[1:] != list(LENGTH_COLUMNS):
            out.append(
                (f"{name} length control: columns", list(LENGTH_COLUMNS), table.header)
            )
            continue
        for row in table.rows:
            values = witness.summary.get(row[0]) or {}
            for cell, (metric, prefix) in zip(
                row[1:], LENGTH_COLUMNS.values(), strict=False
            ):
                where = f"{name} length control {row[0]} {metric}"
                value = values.get(metric)
                printed = FIGURES.findall(cell.replace("n=", "n "))
                if value is None:
                    if cell != NO_VALUE:
                        out.append((where, NO_VALUE, cell))
                    continue
                wanted: list[Any] = [value]
                low, high = (
                    values.get(f"{prefix}_ci_low"),
                    values.get(f"{prefix}_ci_high"),
                )
                # an interval of width 0 is not printed (docs/methods.md)
                if low is not None and high is not None and abs(high - low) > 1e-9:
                    wanted += [low, high]
                n = values.get(_count_key(metric))
                if n:
                    wanted.append(n)
                same = len(printed) == len(wanted) and all(
                    str(w) == p if isinstance(w, int) else _same_figure(w, p)
                    for w, p in zip(wanted, printed, strict=False)
                )
                if not same:
                    out.append((where, wanted, cell))
    return out


def tables_differences(
    witness: Witness, name: str, tables: list[Table]
) -> list[Difference]:
    """The suite's table, and with a panel one table per pooled metric."""
    cards = [t for t in tables if t.header == CARD_HEADER]
    length = [t for t in tables if t.caption.startswith(LENGTH_TITLE)]
    tables = [t for t in tables if t.header != CARD_HEADER and t not in length]
    suite = [t for t in tables if t.header[-1:] != [PANEL_MEAN]]
    panels = [t for t in tables if t.header[-1:] == [PANEL_MEAN]]
    out: list[Difference] = card_differences(witness, name, cards)
    out += length_differences(witness, name, length)
    if len(suite) != len(witness.suites):
        out.append((f"{name}: tables of suites", len(witness.suites), len(suite)))
    for table in suite:
        out += suite_table_differences(witness, name, table)
    per_judge = [key for key in witness.summary[witness.baseline] if "@" in key]
    pooled = {key.partition("@")[0] for key in per_judge if not _is_count(key)}
    named = [
        COLUMNS.get(t.caption.partition(" per judge of the panel")[0]) for t in panels
    ]
    if sorted(pooled) != sorted(str(metric) for metric in named):
        out.append((f"{name}: per-judge tables", sorted(pooled), named))
    for table, metric in zip(panels, named, strict=True):
        if metric in pooled:
            out += panel_table_differences(
                witness, f"{name} {metric} per judge", table, metric
            )
    return out


def _methods_differences(
    witness: Witness, where: str, table: Table
) -> list[Difference]:
    methods = [row[0] for row in table.rows]
    return (
        []
        if methods == witness.methods
        else [(f"{where}: methods", witness.methods, methods)]
    )


def halfway(value: float) -> bool:
    """Whether two decimals of ``value`` are a tie (28.125), up to float noise."""
    hundredths = value * 100
    return abs(hundredths - math.floor(hundredths) - 0.5) < 1e-6


def settle_halves(witness: Witness, table: Table, keys: list) -> Witness:
    """The docs name no rounding rule for a value exactly halfway between two
    printed numbers: either neighbour is the witness's (28.125 is 28.12 or
    28.13; the product's float noise picks one), and the one the file prints
    stands for the value in the rest of the table (its Δ and bold)."""
    summary = {method: dict(values) for method, values in witness.summary.items()}
    for row in table.rows:
        for cell, key in zip(row[1:], keys, strict=False):
            mine = summary.get(row[0], {}).get(key)
            printed = re.match(r"\**(-?\d+\.\d\d)\b", cell)
            if mine is None or printed is None or not halfway(mine):
                continue
            if abs(float(printed.group(1)) - mine) < 0.0051:  # a neighbour
                summary[row[0]][key] = float(printed.group(1))
    return replace(witness, summary=summary)


def suite_table_differences(
    witness: Witness, name: str, table: Table
) -> list[Difference]:
    out = _methods_differences(witness, name, table)
    columns = []
    headings = table.header[1:]
    if headings[:1] == ["Rank"]:
        headings = headings[1:]
        out += rank_differences(witness, name, table)
        table = replace(table, rows=[row[:1] + row[2:] for row in table.rows])
    for heading in headings:
        label, arrow = (
            (heading[:-2], heading[-1]) if heading[-1:] in ("↑", "↓") else (heading, "")
        )
        if label not in COLUMNS:
            out.append((f"{name}: column", "a column the witness knows", heading))
        columns.append((COLUMNS.get(label), arrow))
    witness = settle_halves(witness, table, [metric for metric, _ in columns])
    for position, (metric, arrow) in enumerate(columns, start=1):
        if metric is None:
            continue
        bold = best_methods(witness, metric, arrow)
        for row in table.rows:
            if row[0] in witness.methods:
                want = expected_cell(witness, metric, row[0], row[0] in bold)
                got = row[position] if position < len(row) else "<absent>"
                if got != want:
                    out.append((f"{name} {row[0]} {metric}", want, got))
    shown_metrics = [metric for metric, _ in columns if metric is not None]
    return out + caption_differences(witness, name, table.caption, shown_metrics)


def rank_differences(witness: Witness, name: str, table: Table) -> list[Difference]:
    """The Rank column: the rank of each method on the value the caption
    says it ranks by, which must be the suite's (RANK_BY)."""
    said = re.search(r"Rank \(by (.+?)\): ", table.caption)
    metric = COLUMNS.get(said.group(1)) if said else None
    wanted = [RANK_BY[s] for s in witness.suites if RANK_BY.get(s) in _columns(table)]
    out: list[Difference] = []
    if metric is None or metric not in wanted:
        out.append((f"{name}: rank by", wanted, said.group(1) if said else None))
        return out
    for row in table.rows:
        if row[0] in witness.methods:
            rank = expected_rank(witness, row[0], metric)
            want = NO_VALUE if rank is None else str(rank)
            if row[1] != want:
                out.append((f"{name} {row[0]} rank", want, row[1]))
    return out


def _columns(table: Table) -> set[str]:
    """The metrics of a table's headings."""
    found = {COLUMNS.get(h.rstrip(" ↑↓")) for h in table.header[1:]}
    return {m for m in found if m}


CAPTION_NUMBERS = {
    "n per value": r"\(n = ([^ ;)]+) per value",
    "sessions left out": r"Up to ([\d,]+) sessions",
    "no value": r"(No value could be computed)",
}


def caption_differences(
    witness: Witness, name: str, caption: str, metrics: list[str]
) -> list[Difference]:
    """The caption's n of the values (``<id>_n`` of every value shown) and
    the sessions the pairing left out (Δ's test runs on the sessions either
    method has: the caption states no other n)."""
    summary = witness.summary
    counts = [
        summary[method][_count_key(metric)]
        for method in witness.methods
        for metric in metrics
        if summary[method].get(metric) is not None
    ]
    tests = [
        versus
        for (metric, _), versus in witness.versus.items()
        if metric in metrics and versus["delta"] is not None
    ]
    left = max((versus["unpaired"] for versus in tests), default=0)
    expected = {
        "n per value": span(counts) if counts else None,
        "sessions left out": f"{left:,}" if witness.lacks_replies and left else None,
        "no value": None if counts else "No value could be computed",
    }
    out = []
    for what, pattern in CAPTION_NUMBERS.items():
        found = re.search(pattern, caption)
        said = found.group(1) if found else None
        if said != expected[what]:
            out.append((f"{name} caption: {what}", expected[what], said))
    return out


def panel_table_differences(
    witness: Witness, where: str, table: Table, metric: str
) -> list[Difference]:
    """Each judge's own value, then the panel mean (the summary value)."""
    out = _methods_differences(witness, where, table)
    if table.header[1:-1] != witness.judges:
        out.append((f"{where}: judges", witness.judges, table.header[1:-1]))
    keys = [f"{metric}@{judge}" for judge in witness.judges] + [metric]
    witness = settle_halves(witness, table, keys)
    for row in table.rows:
        if row[0] in witness.methods:
            want = [shown(witness.summary[row[0]].get(key)) for key in keys]
            if row[1:] != want:
                out.append((f"{where} {row[0]}", want, row[1:]))
    return out
