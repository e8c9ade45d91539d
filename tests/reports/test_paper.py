"""Paper-ready exports (web/paper*.py, web/views/downloads.py): LaTeX and Markdown
comparison tables, summary.csv and the Methods paragraph, from a hand-made
run and end to end through the embedded app; the LaTeX is compiled with
pdflatex (skipped locally without it, required under CI)."""

from __future__ import annotations

import csv
import doctest
import hashlib
import io
import os
import re
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from metrics import protocols, registry, stats
from metrics.judging import prompt_file
from reports import paper, paper_methods, paper_summary, paper_text
from tests import crafted
from tests.pipeline_support import evaluate

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = "a&b%c$d#e_f{g}h~i^j\\k<l>m|n--o"
CHINESE = "中文方法 «Ü» Café"
DOCUMENT = (
    "\\documentclass{article}\\usepackage{booktabs}\\usepackage{graphicx}"
    "\\usepackage[utf8]{inputenc}"
    "\\begin{document}\\input{table.tex}\\end{document}\n"
)


@pytest.mark.parametrize("module", [paper, paper_text, paper_summary, paper_methods])
def test_doctests(module):
    flags = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS
    result = doctest.testmod(module, optionflags=flags)
    assert result.attempted > 0 and result.failed == 0


# -- escaping ----------------------------------------------------------------
SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
    "中": r"\texttt{[U+4E2D]}",
    "😀": r"\texttt{[U+1F600]}",
    "þ": r"\texttt{[U+00FE]}",
    "é": "é",
}


@pytest.mark.parametrize(("char", "escaped"), SPECIALS.items())
def test_latex_escape_each_special(char, escaped):
    assert paper_text.latex_escape(f"x{char}y") == f"x{escaped}y"


def test_latex_escape_leaves_no_active_character():
    escaped = paper_text.latex_escape(HOSTILE + CHINESE + "\n\t\x01")
    unescaped = escaped
    for command in (*paper_text.LATEX_SPECIALS.values(), r"\texttt{[U+"):
        unescaped = unescaped.replace(command, "")
    assert not set(unescaped) & set("\\&%$#_~^<>|\n\t\x01")
    assert not any(0x4E00 <= ord(c) <= 0x9FFF for c in escaped)


# -- a hand-made run -------------------------------------------------------------
def comparison(a, b, diff, low, high, p_holm, n, **extra):
    return {
        "metric": "quality",
        "a": a,
        "b": b,
        "diff": diff,
        "ci_low": low,
        "ci_high": high,
        "p_value": p_holm,
        "p_holm": p_holm,
        "test": "wilcoxon",
        "effect_size": 1.0,
        "effect_size_name": "dz",
        "rank_biserial": None,
        "sd_diff": None,
        "n": n,
        **extra,
    }


def _delta(stored: bool, delta, low, high, p) -> dict:
    if not stored:
        return {}
    return {
        "value_metric": "quality_avg",
        "delta": delta,
        "delta_ci_low": low,
        "delta_ci_high": high,
        "delta_p": p,
        "delta_test": "permutation_exact",
        "delta_p_assignments": 512,
    }


def small_run(family=True, counts=True):
    methods = ["Base", HOSTILE, "Ours"]
    values = {"Base": 0.4, HOSTILE: 0.5, "Ours": 0.75}
    summary = {
        m: {
            "coherence_avg": 0.5,
            "completeness_avg": None,
            "length_avg": v,
            "structure_avg": v,
            "vocabulary_avg": v,
            "quality_avg": v,
        }
        for m, v in values.items()
    }
    # an earlier release stored neither the family nor Δ on the value basis
    extra = {"family": "quality"} if family else {}
    aggregates = {
        "summary": summary,
        "comparisons": [
            # stored as Base − method: the table shows method − Base
            comparison(
                "Base",
                HOSTILE,
                -0.1,
                -0.2,
                -0.05,
                0.004,
                7,
                **extra,
                **_delta(family, -0.1, -0.2, -0.05, 0.004),
            ),
            comparison(
                "Base",
                "Ours",
                -0.35,
                -0.4,
                -0.3,
                0.0004,
                9,
                **extra,
                **_delta(family, -0.35, -0.4, -0.3, 0.0004),
            ),
            comparison(
                HOSTILE,
                "Ours",
                -0.25,
                -0.3,
                -0.2,
                0.2,
                9,
                **extra,
                **_delta(family, -0.25, -0.3, -0.2, 0.2),
            ),
        ],
    }
    if counts:
        for i, method in enumerate(methods):
            aggregates["summary"][method]["quality_avg_n"] = 40 + i
    return SimpleNamespace(
        id="0123456789abcdef0123456789abcdef",
        token="SECRET-TOKEN-xyz",
        methods=methods,
        suites=["quality"],
        aggregates=aggregates,
        sessions=9,
        rounds=49,
        judge=None,
        options={},
        file_sha256="ab" * 32,
        finished_at=None,
    )


def test_latex_table_has_booktabs_rules_bold_best_and_oriented_deltas():
    tex = paper.to_latex(small_run(), "Base")
    assert (tex.count(r"\toprule"), tex.count(r"\bottomrule")) == (2, 2)  # 2 blocks
    assert r"\midrule" in tex and r"\documentclass" not in tex
    assert r"\textbf{0.75}" in tex and r"\textbf{0.40}" not in tex
    assert r"$\Delta$ +0.35$^{***}$" in tex and "[0.30, 0.40]" in tex
    assert r"$\Delta$ +0.10$^{**}$" in tex and "[0.05, 0.20]" in tex
    assert r"a\&b\%c\$d\#e\_f\{g\}h\textasciitilde{}i" in tex
    assert HOSTILE not in tex and "SECRET" not in tex
    base_row = next(line for line in tex.splitlines() if line.startswith("Base &"))
    assert r"\Delta" not in base_row
    assert "---" in tex  # completeness: no value, a dash


def test_caption_states_tests_correction_and_real_n():
    text = paper.caption(small_run(), paper.tables(small_run(), "Base")[0], "Base")
    assert "n = 40–42 per value" in text
    assert (
        "Δ vs Base: a method's value − the value of Base, on the column's basis" in text
    )
    # its comparisons pair 7 and 9 sessions: the exact bootstrap (the caption
    # said "2,000 resamples of the sessions" whatever the n)
    assert (
        "95% paired bootstrap CI of the sessions, both values recomputed "
        "(the exact bootstrap distribution: every resample of the 9 or fewer" in text
    )
    assert (
        "* p<0.05, ** p<0.01, *** p<0.001, two-sided paired permutation test of Δ "
        "on the same basis" in text
    )
    assert "every assignment up to 13 sessions, else 9,999 seeded random" in text
    assert "Holm-adjusted within each column over its comparisons with Base." in text


def test_older_runs_say_what_they_have():
    run = small_run(family=False, counts=False)
    text = paper.caption(run, paper.tables(run, "Base")[0], "Base")
    assert "per value" not in text
    # Δ is still the difference of the values shown; its interval and its
    # test on the value's basis were not stored: no mark (the stored Wilcoxon
    # p is on another basis)
    assert "Holm-adjusted within each column" in text
    md = paper.to_markdown(run, "Base")
    assert "(Δ +0.35)" in md and "(Δ +0.35 \\*" not in md


def test_baseline_changes_the_deltas():
    tex = paper.to_latex(small_run(), "Ours")
    assert "vs Ours" in tex and r"$\Delta$ $-$0.35$^{***}$" in tex
    assert paper.baseline_of(small_run(), "nope") == "Base"


def test_markdown_table_escapes_pipes_and_has_the_caption_below():
    md = paper.to_markdown(small_run(), "Base")
    lines = md.splitlines()
    assert lines[0].startswith("| Method | Coherence ↑ |")
    assert lines[1] == "|:--|" + "--:|" * 6
    hostile_row = next(line for line in lines if line.startswith("| a"))
    assert hostile_row.replace("\\|", "").count("|") == 8  # 7 cells
    assert "(Δ +0.35 [0.30, 0.40] \\*\\*\\*)" in md
    assert "**0.75**" in md
    assert lines[6].startswith("Response quality heuristics. Values are means")


def test_summary_csv_reports_only_known_n_and_ci():
    run = small_run()
    run.methods, run.suites = ["=Base"], ["simulation", "style"]
    run.aggregates = {
        "summary": {
            "=Base": {
                "pas_avg": 0.5,
                "pas_ci_low": 0.4,
                "pas_ci_high": 0.6,
                "pas_avg_n": 9,
                "nvcs_avg": 0.7,
                "ertd_avg": None,
            }
        },
        "panels": {
            "style": {
                "=Base": {"nvcs": {"mean": 0.7, "n": 8, "ci_low": 0.6, "ci_high": 0.8}}
            }
        },
    }
    rows = list(csv.DictReader(io.StringIO(paper_summary.summary_csv(run))))
    by_metric = {row["metric"]: row for row in rows}
    assert list(rows[0]) == list(paper_summary.SUMMARY_FIELDS)
    assert {row["method"] for row in rows} == {"'=Base"}
    pas = by_metric["pas_avg"]
    assert (pas["value"], pas["n"], pas["ci_low"], pas["ci_high"]) == (
        "0.5",
        "9",
        "0.4",
        "0.6",
    )
    nvcs = by_metric["nvcs_avg"]
    assert (nvcs["n"], nvcs["ci_low"], nvcs["ci_high"]) == ("8", "0.6", "0.8")
    ertd = by_metric["ertd_avg"]
    assert (ertd["value"], ertd["n"], ertd["ci_low"]) == ("", "", "")
    assert by_metric["bvs_avg"]["label"] == "Behavioral variance (BVS)"
    assert by_metric["bvs_avg"]["value"] == "" and by_metric["bvs_avg"]["n"] == ""


# -- Methods paragraph -------------------------------------------------------------
def test_methods_paragraph_names_judge_prompts_and_their_hashes():
    run = small_run()
    run.suites = ["alignment", "simulation"]
    protocol = protocols.builtin("personasteer")
    run.judge = {
        "model": "judge-x",
        "temperature": 0.0,
        "samples": 3,
        "prompts": {"alignment": protocol.modes["alignment"].prompt, "jera": "jera_v1"},
        "history_chars": 12000,
        "protocol": protocol.public(),
    }
    used = {
        "judge-x": {
            "calls": 12,
            "cached": 0,
            "prompt_tokens": 3400,
            "completion_tokens": 900,
            "reasks": 1,
            "cost_usd": None,
        }
    }
    text = paper_methods.methods_paragraph(run, used)
    digest = hashlib.sha256(prompt_file("jera_v1").read_bytes()).hexdigest()
    assert f"metrics/suites/roleplay/prompts/jera_v1.txt (SHA-256 {digest})" in text
    assert f"protocols/personasteer.toml, version 2, SHA-256 {protocol.sha256}" in text
    assert f"alignment: personasteer/alignment@{protocol.sha256[:12]}" in text
    assert "The judge judge-x was sent 12 requests, 1 re-ask (3,400 prompt" in text
    assert "judge-x (temperature 0.0, 3 samples per item" in text
    assert "last 12,000 characters" in text
    # 9 paired sessions: the exact bootstrap, not 2,000 seeded resamples
    # (the paragraph said "2,000 resamples, seed 20240521" for any n)
    assert "the exact bootstrap distribution" in text
    assert f"seed {stats.BOOTSTRAP_SEED}" not in text
    assert "Welch's t-test" in text and "Cohen's d (pooled" in text
    assert "Holm-adjusted within each metric" in text
    assert text == paper_methods.methods_paragraph(run, used)  # deterministic
    assert "SECRET" not in text


def test_methods_paragraph_without_a_judge_says_so():
    run = small_run()
    run.suites = ["alignment", "quality"]
    text = paper_methods.methods_paragraph(run)
    assert "No LLM judge was configured for this run" in text
    assert "alignment were not scored" in text and "Welch" not in text
    run.suites, run.aggregates = ["quality"], {"comparisons": []}
    text = paper_methods.methods_paragraph(run)
    assert "No metric of these suites uses an LLM judge." in text
    assert "No paired comparisons were computed." in text and "Holm" not in text


# -- end to end -----------------------------------------------------------------
def require_pdflatex() -> str:
    found = shutil.which("pdflatex")
    if found:
        return found
    message = "pdflatex is not installed (apt-get install texlive-latex-recommended)"
    if os.environ.get("CI"):
        pytest.fail(f"{message}; required under CI")
    pytest.skip(message)


def compile_fragment(tex: str, directory: Path, cjk: bool = False) -> Path:
    pdflatex = require_pdflatex()
    if cjk:
        require_cjkutf8()
    directory.mkdir(exist_ok=True)
    (directory / "table.tex").write_text(tex, encoding="utf-8")
    preamble = "\\usepackage{CJKutf8}\\begin{document}" if cjk else "\\begin{document}"
    document = DOCUMENT.replace("\\begin{document}", preamble)
    (directory / "doc.tex").write_text(document, encoding="utf-8")
    done = subprocess.run(
        [pdflatex, "-interaction=nonstopmode", "-halt-on-error", "doc.tex"],
        cwd=directory,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:]
    assert (directory / "doc.pdf").is_file()
    assert overfull_points(directory / "doc.log") <= 1.0
    return directory / "doc.pdf"


def overfull_points(log: Path) -> float:
    """The widest overfull box the log reports (0 when none)."""
    text = log.read_text(encoding="latin-1")
    found = re.findall(r"Overfull \\[hv]box \(([\d.]+)pt too", text)
    return max((float(points) for points in found), default=0.0)


def require_cjkutf8() -> None:
    kpsewhich = shutil.which("kpsewhich")
    found = (
        kpsewhich
        and subprocess.run(
            [kpsewhich, "CJKutf8.sty"], capture_output=True, text=True, check=False
        ).stdout.strip()
    )
    if found:
        return
    message = "CJKutf8 is not installed (scripts/bootstrap.sh installs latex-cjk-*)"
    if os.environ.get("CI"):
        pytest.fail(f"{message}; required under CI")
    pytest.skip(message)


def finished_token(app, path: Path) -> tuple[str, object]:
    document = evaluate(app, path, None, suites=["quality"])
    run = app.extensions["storage"].runs.get_run(document["run"]["id"])
    assert run.status == "done"
    return run.token, run


def test_sample_run_downloads(embedded_app, tmp_path):
    token, run = finished_token(embedded_app, ROOT / "sample_data.jsonl")
    client = embedded_app.test_client()
    expected = {
        "export.tex": ("text/x-tex; charset=utf-8", "tex"),
        "export.md": ("text/markdown; charset=utf-8", "md"),
        "summary.csv": ("text/csv; charset=utf-8", "summary.csv"),
        "methods.txt": ("text/plain; charset=utf-8", "methods.txt"),
    }
    bodies = {}
    for name, (mimetype, extension) in expected.items():
        response = client.get(f"/r/{token}/{name}")
        assert response.status_code == 200, name
        assert response.headers["Content-Type"] == mimetype
        disposition = f'attachment; filename="personasteer-{run.id[:12]}.{extension}"'
        assert response.headers["Content-Disposition"] == disposition
        bodies[name] = response.get_data(as_text=True)
        assert token not in bodies[name] and token[:8] not in disposition
    tex = bodies["export.tex"]
    assert r"\label{tab:personasteer-quality}" in tex and "vs Base" in tex
    assert "random assignments), Holm-adjusted within each column" in tex
    assert "| Ours |" in bodies["export.md"]
    rows = list(csv.DictReader(io.StringIO(bodies["summary.csv"])))
    assert len(rows) == 3 * len(registry.get("quality").summary_metrics())
    assert {r["suite"] for r in rows} == {"quality"}
    methods = bodies["methods.txt"]
    assert "3 methods (Base, RAG, Ours) on 9 sessions" in methods
    assert run.file_sha256 in methods and "No metric of these suites uses" in methods
    assert paper_methods.platform_version() in methods
    baseline = client.get(f"/r/{token}/export.tex?baseline=Ours").get_data(True)
    assert "vs Ours" in baseline
    compile_fragment(tex, tmp_path / "sample")


def test_hostile_method_names_compile(embedded_app, tmp_path):
    session = crafted.session(
        "s1",
        {
            "Base": ["The weather is nice today.", "It might rain later."],
            HOSTILE: ["Machine learning is fun.", "Therefore, we learn."],
            CHINESE: ["Cats are animals.", "Pizza is food."],
        },
    )
    other = {**session, "session_id": "s2"}
    path = crafted.write(tmp_path / "hostile.jsonl", [session, other])
    token, _run = finished_token(embedded_app, path)
    client = embedded_app.test_client()
    tex = client.get(f"/r/{token}/export.tex").get_data(as_text=True)
    assert r"\texttt{[U+4E2D U+6587 U+65B9 U+6CD5]}" in tex and "Café" in tex
    assert r"\textbackslash{}k\textless{}l\textgreater{}m\textbar{}n-{}-o" in tex
    md = client.get(f"/r/{token}/export.md").get_data(as_text=True)
    assert "中文方法 \\«Ü\\»" not in md and "中文方法 «Ü» Café" in md
    assert "a\\&b%c$d#e\\_f{g}h\\~i^j\\\\k\\<l\\>m\\|n--o" in md
    against = client.get(f"/r/{token}/export.tex", query_string={"baseline": CHINESE})
    against_tex = against.get_data(as_text=True)
    assert r"vs \texttt{[U+4E2D U+6587 U+65B9 U+6CD5]}" in against_tex
    compile_fragment(tex + against_tex, tmp_path / "hostile")
    # Chinese (and Korean) typeset through CJKutf8 when asked
    cjk = client.get(f"/r/{token}/export.tex?cjk=cjkutf8").get_data(as_text=True)
    assert r"\begin{CJK}{UTF8}{gbsn}中文方法\end{CJK}" in cjk and "U+4E2D" not in cjk
    assert r"\usepackage{CJKutf8}" in cjk
    compile_fragment(cjk, tmp_path / "cjk", cjk=True)


def test_runs_without_results_have_no_paper_exports(embedded_app):
    client = embedded_app.test_client()
    assert client.get("/r/no-such-token/export.tex").status_code == 404
    assert client.get("/r/no-such-token/methods.txt").status_code == 404


# -- the judge report card (issue 58) -----------------------------------------------
def card_run() -> SimpleNamespace:
    """A run whose judge (a hostile name) fails the length criterion, and
    whose self-preference interval had no width (every session +6)."""
    judge = "gpt_4&co"
    families = {"methods": {"Ours": "acme"}, "judges": {judge: "ACME", "other": "x"}}
    validity = {
        "length_spearman": {judge: 0.45, "other": 0.1},
        "length_spearman_n": {judge: 60, "other": 60},
        "inter_judge_alpha": 0.91,
        "inter_judge_alpha_n": 30,
        "self_preference": [
            {
                "judge": judge,
                "method": "Ours",
                "family": "ACME",
                "value": 6.0,
                "n": 5,
                "ci_low": None,
                "ci_high": None,
                "ci_note": "ci_no_spread",
            }
        ],
    }
    return SimpleNamespace(
        id="0123456789abcdef",
        methods=["Base", "Ours"],
        suites=["alignment"],
        status="done",
        judge={"model": judge, "models": [judge, "other"]},
        options={},
        families=families,
        aggregates={
            "summary": {"Base": {"al_avg": 50.0}, "Ours": {"al_avg": 56.0}},
            "comparisons": [],
            "judge_validity": validity,
        },
    )


def test_the_report_card_is_in_both_exports(tmp_path):
    """export.md and export.tex carry the card: criterion, judge, value, n,
    threshold and verdict per row, the overall verdict line, escaped; the
    LaTeX compiles with no overfull box. Before: export.md had no n column
    and export.tex no card at all."""
    run = card_run()
    markdown = paper.to_markdown(run, "Base")
    assert "Judge report card: not fit to publish with: failing" in markdown
    assert "| Criterion | Judge | Value | n | Threshold | Verdict |" in markdown
    assert (
        "| Length bias within methods (abs. ρ) | gpt\\_4\\&co | 0.450 | 60 "
        "| abs. value ≤ 0.3 | fail |"
    ) in markdown
    assert (
        "| Agreement between the panel's judges (α) |  | 0.910 | 30 | ≥ 0.667 | pass |"
        in markdown
    )
    # a zero-width interval: no interval, the reason, and still a failure
    assert "| 6.000 (no interval: every resample" in markdown
    tex = paper.to_latex(run, "Base")
    assert r"\label{tab:personasteer-report-card}" in tex
    assert r"\caption{Judge report card: not fit to publish with: failing" in tex
    assert (
        r"\raggedright Length bias within methods (abs. $\rho$) & \raggedright "
        r"gpt\_4\&co & \raggedright 0.450 & 60 & \raggedright abs. value $\leq$ 0.3 "
        r"& \raggedright fail \tabularnewline"
    ) in tex
    assert r"0.910 & 30 & \raggedright $\geq$ 0.667 & \raggedright pass" in tex
    assert "[U+" not in tex.partition("report card")[2]  # every symbol typesets
    compile_fragment(tex, tmp_path / "card")


def test_no_judge_no_card():
    run = card_run()
    run.judge = None
    assert "report card" not in paper.to_markdown(run, "Base")
    assert "report-card" not in paper.to_latex(run, "Base")


def test_the_length_control_table_follows_the_pairwise_table(tmp_path):
    """The raw win rate and strength beside the longer-reply baseline and the
    length-controlled values, each with its interval and n (issue 58); the
    baseline's strength (fixed at 0: an interval of width 0) has none; the
    LaTeX compiles."""
    values = {
        "Base": {
            "pairwise_winrate": 0.2,
            "pairwise_winrate_ci_low": 0.1,
            "pairwise_winrate_ci_high": 0.3,
            "pairwise_winrate_n": 8,
            "bt_score": 0.0,
            "bt_ci_low": 0.0,
            "bt_ci_high": 0.0,
            "bt_score_n": 8,
            "pairwise_winrate_lc": 0.45,
            "pairwise_winrate_lc_ci_low": 0.3,
            "pairwise_winrate_lc_ci_high": 0.6,
            "pairwise_winrate_lc_n": 8,
            "pairwise_longer_wins_rate": 0.1,
            "pairwise_longer_wins_rate_n": 8,
            "bt_lc_score": 0.0,
            "bt_lc_ci_low": 0.0,
            "bt_lc_ci_high": 0.0,
        },
        "Ours": {
            "pairwise_winrate": 0.8,
            "bt_score": 1.39,
            "pairwise_winrate_lc": 0.55,
            "pairwise_longer_wins_rate": 0.9,
            "bt_lc_score": -0.2,
            "bt_lc_ci_low": -0.9,
            "bt_lc_ci_high": 0.4,
            "bt_lc_score_n": 8,
        },
    }
    pairwise = next(
        s.name for s in registry.suites() if "bt_lc_score" in [m.id for m in s.metrics]
    )
    run = SimpleNamespace(
        id="0123456789abcdef",
        methods=["Base", "Ours"],
        suites=[pairwise],
        aggregates={"summary": values, "comparisons": []},
    )
    markdown = paper.to_markdown(run, "Base")
    assert "Length control of the pairwise verdicts." in markdown
    assert (
        "| Base | 0.20 [0.10, 0.30] (n=8) | 0.10 (n=8) | 0.45 [0.30, 0.60] (n=8) "
        "| 0.00 (n=8) | 0.00 |"
    ) in markdown
    assert (
        "| Ours | 0.80 | 0.90 | 0.55 | 1.39 | -0.20 [-0.90, 0.40] (n=8) |" in markdown
    )
    assert markdown.index("Pairwise win rate ↑") < markdown.index("Length control")
    tex = paper.to_latex(run, "Base")
    assert r"\label{tab:personasteer-length-control}" in tex
    assert r"{\footnotesize [$-$0.90, 0.40]}" in tex
    compile_fragment(tex, tmp_path / "length")
