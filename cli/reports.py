"""``flask --app app report RUN`` and ``flask --app app compare RUN RUN…``:
the paper exports the web offers as downloads (``reports/``), written by
the command line, in English like the downloads.

RUN is a run's view or manage token (the links ``evaluate`` prints) or
its id (in the results file). Exit codes: 0 written, 1 nothing to report
(the run has no results yet, or failed before any), 2 invalid input (an
unknown run, runs that cannot be compared, an ``--out`` that cannot be
written).
"""

from __future__ import annotations

import json

import click
from flask import current_app
from flask.cli import with_appcontext

from cli.commands import fail, out_folder, write_out
from cli.judge import FAILED, INVALID, show_problems
from core.problems import Rejected

RUN_FORMATS = ("tex", "md", "csv", "json", "methods")
COMPARE_FORMATS = ("tex", "md", "csv", "json")


def _run(storage, key: str):
    """The run a token or an id names; exit 2 when none does."""
    found = storage.runs.find_run(key)
    run = found.item if found is not None else storage.runs.get_run(key)
    if run is None:
        fail(f"no run has the token or id {key!r}", INVALID)
    return run


def _write(text: str, out) -> None:
    """The report as the download's bytes (a CSV keeps its CRLF); exit 2
    in one line when ``--out`` cannot be written."""
    if out is None:
        click.echo(text.encode("utf-8"), nl=False)  # bytes: written as they are
        return
    unwritten = write_out(out, [text], newline="")
    if unwritten is not None:
        fail(f"{out}: {unwritten}", INVALID)
    click.echo(f"written to {out}", err=True)


def _run_report(
    run,
    fmt: str,
    baseline: str,
    cjk: bool,
    min_effect: float | None = None,
    holm: str = "metric",
) -> str:
    from metrics.results import judge_usage
    from reports import paper, paper_methods, paper_summary

    storage = current_app.extensions["storage"]
    if fmt == "json":
        runs = current_app.extensions["runs"]
        document = runs.results_document(run, min_effect, holm)
        return json.dumps(document, ensure_ascii=False, indent=1) + "\n"
    if fmt == "methods":
        used = judge_usage(run, storage.progress.judge_usage(run.id))
        return paper_methods.methods_paragraph(run, used, holm) + "\n"
    if fmt == "csv":
        return paper_summary.summary_csv(run, baseline, holm)
    if fmt == "md":
        return paper.to_markdown(run, baseline, holm)
    return paper.to_latex(run, baseline, cjk, holm)


_OPTIONS = (
    click.option(
        "--baseline",
        help="Method (or run/method) the others are compared with; default: the first.",
    ),
    click.option(
        "--cjk", is_flag=True, help="LaTeX: typeset Chinese and Korean with CJKutf8."
    ),
    click.option(
        "--out",
        type=click.Path(dir_okay=False, writable=True),
        help="Write to this file instead of stdout.",
    ),
    click.option(
        "--min-effect",
        type=float,
        callback=lambda _c, _p, v: _min_effect(v),
        help="JSON: each comparison also gives sessions_for_min_effect, the "
        "paired sessions needed to detect this standardized effect dz (> 0) "
        "with 80% power at alpha 0.05.",
    ),
    click.option(
        "--holm",
        type=click.Choice(["metric", "table"]),  # metrics.basis.HOLM_FAMILIES
        default="metric",
        show_default=True,
        help="Holm family of the tables' marks and of delta_p_holm: within each "
        "column (metric), or across every column of a table (table).",
    ),
)


def _min_effect(value: float | None) -> float | None:
    from metrics.stats import valid_min_effect

    if value is not None and not valid_min_effect(value):
        raise click.BadParameter(f"{value} is not a dz above 0")
    return value


def _with_options(command):
    for option in reversed(_OPTIONS):
        command = option(command)
    return command


# A token may begin with "-" (URL-safe base64): an argument, not an option.
TOKENS_AS_GIVEN = {"ignore_unknown_options": True}


@click.command("report", context_settings=TOKENS_AS_GIVEN)
@click.argument("run_key", metavar="RUN")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(RUN_FORMATS),
    default="md",
    show_default=True,
    help="tex, md: comparison tables; csv: summary (n and CI); "
    "json: results v1; methods: the Methods paragraph.",
)
@_with_options
@with_appcontext
def report_command(run_key, fmt, baseline, cjk, out, min_effect, holm) -> None:
    """Write a finished run's report: the paper tables, summary.csv, the
    results document or the Methods paragraph (English)."""
    from reports import paper  # the numeric libraries, on use (cli/__init__.py)

    out_folder(out)
    run = _run(current_app.extensions["storage"], run_key)
    if fmt != "json" and (not run.aggregates or not run.methods):
        fail(f"run {run.id} is {run.status}: it has no results to report", FAILED)
    chosen = paper.baseline_of(run, baseline) if run.methods else ""
    _write(_run_report(run, fmt, chosen, cjk, min_effect, holm), out)


@click.command("compare", context_settings=TOKENS_AS_GIVEN)
@click.argument("run_keys", metavar="RUN RUN…", nargs=-1, required=True)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(COMPARE_FORMATS),
    default="md",
    show_default=True,
    help="tex, md: tables; csv: summary (n and CI); json: the comparison document.",
)
@_with_options
@with_appcontext
def compare_command(run_keys, fmt, baseline, cjk, out, min_effect, holm) -> None:
    """Compare finished runs over their shared sessions (the first run's
    first method is the default baseline), as the /compare page does."""
    from pipeline.service.comparison import compare_now
    from reports import paper, paper_summary

    out_folder(out)
    storage = current_app.extensions["storage"]
    runs = [_run(storage, key) for key in run_keys]
    try:
        comparison = compare_now(storage, runs, current_app.config)
    except Rejected as rejected:
        show_problems(rejected)
        raise SystemExit(INVALID) from None
    chosen = paper.baseline_of(comparison, baseline)
    if fmt == "json":
        from metrics.basis import with_holm_family
        from metrics.stats import add_min_effect

        document = comparison.document()
        document["comparisons"] = add_min_effect(document["comparisons"], min_effect)
        document = with_holm_family(document, holm)
        text = json.dumps(document, ensure_ascii=False, indent=1) + "\n"
    elif fmt == "csv":
        text = paper_summary.summary_csv(comparison, chosen, holm)
    elif fmt == "md":
        text = paper.to_markdown(comparison, chosen, holm)
    else:
        text = paper.to_latex(comparison, chosen, cjk, holm)
    _write(text, out)
