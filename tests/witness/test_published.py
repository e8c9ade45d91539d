"""The witness on what a reader downloads (issue 56): every number of
export.csv, summary.csv, export.md, export.tex and ``flask report`` (md and
tex) is the witness's (tests/witness/published.py). The generated runs of
tests/witness/test_witness.py check their downloads; here, a fixed run and
one changed number in each file."""

from __future__ import annotations

import re

import pytest

from testing.judge_server import ScriptedJudge
from tests.witness import checks, harness, plans
from tests.witness.published import export_differences
from tests.worker_support import stop_worker


@pytest.fixture(scope="module")
def witness_app(tmp_path_factory):
    folder = tmp_path_factory.mktemp("published")
    app = harness.make_app(folder)
    with ScriptedJudge() as judge:
        yield app, judge, folder
    stop_worker(app)


def published(witness_app, plan) -> tuple[dict, dict[str, str], list[str]]:
    """The run's document, its four downloads and its CLI reports."""
    app, judge, folder = witness_app
    outcome = harness.run_in_worker(app, judge, plan, folder)
    files, reports = harness.downloads(app, outcome)
    return outcome.document, files, reports


def assert_same(witness: dict, document: dict, files: dict, report: str) -> None:
    found = export_differences(witness, document, files, report)
    assert not found, "\n".join(
        f"{where}: witness {mine!r}, file {theirs!r}" for where, mine, theirs in found
    )


def _plan() -> plans.Plan:
    """Two judges, three methods; RAG has no reply in s2 (a Δ leaves a
    session out), judge-b cannot read one reply (a panel value rests on
    fewer items)."""
    a = plans.Answer
    said = {"Ours": (70, 1), "Base": (50, 0), "RAG": (90, 1)}
    items = []
    for session in ("s1", "s2"):
        for round_k in (1, 2):
            for method, (total, vote) in said.items():
                first = a("verdict", total + 10 * round_k - 10, vote)
                answers = (first, a("verdict", total - 20, 1))
                if (session, round_k, method) == ("s1", 2, "Base"):
                    answers = (answers[0], a("garbage"))
                missing = session == "s2" and method == "RAG"
                items.append(
                    plans.Item(session, round_k, method, None if missing else answers)
                )
    return plans.Plan("personasteer", plans.JUDGES, tuple(said), 2, 2, items)


# (file, pattern, replacement): one number each file states, changed
CHANGES = [
    ("export.csv", r"(,al,)(\d+\.0,ok,)", r"\g<1>1\2"),
    ("export.csv", r"(,binary,)1\.0,ok,", r"\g<1>0.0,ok,"),
    ("summary.csv", r"(,al_avg,AL average,[^,]+,)(\d+)", r"\g<1>9\2"),
    ("summary.csv", r"(,binary_rate,Keep-chatting rate,)[\d.]+", r"\g<1>0.123"),
    ("summary.csv", r"(,Ours,)(-\d+\.\d+),", r"\g<1>\g<2>1,"),  # a Δ, one digit on
    ("export.md", r"(\| \*\*)(\d)", r"\g<1>1\2"),
    ("export.md", r"(\(Δ [^)]*)\)", r"\1 \\*)"),
    ("export.md", r"\| — \|", "| 0.00 |"),
    ("export.md", r"\(n = ([\d–]+) per value", "(n = 9 per value"),
    ("export.md", r"Up to 1 sessions", "Up to 2 sessions"),
    ("export.tex", r"\\textbf\{([\d.]+)\}", r"\1"),
    ("export.tex", r"(footnotesize \$\\Delta\$ )(\$-\$)?", r"\1+1"),
    ("export.tex", r"(Ours & )[\d.]+( & [\d.]+ & [\d.]+ \\\\)", r"\g<1>1.00\2"),
    # the judge report card (issue 58): a value, a verdict, an n, the card
    ("export.md", r"(\| judge-a \| )(\$-\$|-)?\d\.\d{3}", r"\g<1>0.999"),
    ("export.md", r"\| fail \|", "| pass |"),
    ("export.tex", r"( & )(\d+)( & \\raggedright \$\\geq\$ 0\.667)", r"\g<1>1\2\3"),
    ("export.tex", r"(judge-a & \\raggedright )(\$-\$)?\d\.\d{3}", r"\g<1>0.999"),
    (
        "export.tex",
        r"(?s)\\begin\{table\}[^$]{0,80}Judge report card.*?\\end\{table\}",
        "",
    ),
]


def test_a_changed_number_is_a_difference(witness_app):
    """Each file checked says where it differs from the witness."""
    plan = _plan()
    document, files, reports = published(witness_app, plan)
    witness = checks.witness_document(plan)
    for report in reports:
        assert_same(witness, document, files, report)
    for name, pattern, replacement in CHANGES:
        changed, count = re.subn(pattern, replacement, files[name], count=1)
        assert count == 1, (name, pattern)
        found = export_differences(
            witness, document, {**files, name: changed}, reports[0]
        )
        assert found, (name, pattern)
        assert all(where.startswith(name) for where, _, _ in found), found
    changed = reports[1].replace("62.50", "62.49", 1)  # the CLI's LaTeX
    found = export_differences(witness, document, files, changed)
    assert found
    assert all(where.startswith("report --format tex") for where, _, _ in found)


def test_the_length_control_table_is_the_witness_s(witness_app):
    """A pairwise run: export.md and export.tex (and the CLI report) carry
    the length-control table beside the raw win rate (issue 58: the win
    rate, the longer-reply baseline, the length-controlled win rate and
    strengths, each with its interval and n); every figure is the witness's,
    and a changed one is found. Before: no such table in either file."""
    a = plans.Answer
    strengths = {"Ours": 40, "Base": 20, "RAG": 20}
    items = [
        plans.Item(
            session,
            round_k,
            method,
            (a("verdict", 60, 1), a("verdict", 50, 1)),
            strength + (20 if (session, round_k, method) == ("s2", 1, "RAG") else 0),
        )
        for session in ("s1", "s2", "s3")
        for round_k in (1, 2)
        for method, strength in strengths.items()
    ]
    plan = plans.Plan(
        "personasteer",
        plans.JUDGES,
        tuple(strengths),
        3,
        2,
        items,
        suites=("alignment", "pairwise"),
    )
    document, files, reports = published(witness_app, plan)
    witness = checks.witness_document(plan)
    for report in reports:
        assert_same(witness, document, files, report)
    assert "Length control of the pairwise verdicts" in files["export.md"]
    assert r"\label{tab:personasteer-length-control}" in files["export.tex"]
    for name, pattern in (
        ("export.md", r"(Length control[^\n]*\n|\| Ours \| )(\d\.\d\d)(?= \[)"),
        (
            "export.tex",
            r"(length-control\}(?:.|\n)*?Ours & \\begin\{tabular\}\[t\]\{@\{\}r@\{\}\})"
            r"(\d\.\d\d)",
        ),
    ):
        changed, count = re.subn(pattern, r"\g<1>9.99", files[name], count=1)
        assert count == 1, (name, pattern)
        found = export_differences(
            witness, document, {**files, name: changed}, reports[0]
        )
        assert any("length control" in where for where, _, _ in found), found
