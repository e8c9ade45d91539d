"""Flask CLI commands (``flask --app app validate FILE``)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import click
from flask import current_app
from flask.cli import with_appcontext

import dataset
import runs


@click.command("validate")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@with_appcontext
def validate_command(file: Path, as_json: bool) -> None:
    """Check FILE against the input format; exit 0 when valid, 1 when not."""
    report = dataset.validate_file(file, **runs.validation_limits(current_app.config))
    if as_json:
        click.echo(json.dumps(report.to_dict(), ensure_ascii=False, indent=2))
    else:
        _print_report(report)
    raise SystemExit(0 if report.valid else 1)


def _print_report(report: dataset.ValidationReport) -> None:
    summary = report.to_dict()
    for problem in summary["errors"]:
        click.echo(f"error   {_where(problem)}{problem['message']}", err=True)
    for problem in summary["warnings"]:
        click.echo(f"warning {_where(problem)}{problem['message']}", err=True)
    if report.valid:
        methods = ", ".join(report.methods)
        suites = ", ".join(report.suites)
        click.echo(
            f"valid: {report.sessions} sessions; methods {methods}; suites {suites}"
        )
    else:
        click.echo(f"invalid: {report.errors_total} error(s)")


def _where(problem: dict) -> str:
    return f"line {problem['line']}: " if problem["line"] is not None else ""


EXIT_CODES = {"done": 0, "partial": 3, "failed": 1, "cancelled": 1}
FINAL = tuple(EXIT_CODES)


@click.command("evaluate")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--suite", "suites", multiple=True, help="Suite to run (repeatable).")
@click.option("--judge-url", help="OpenAI-compatible base URL ending in /v1.")
@click.option("--judge-model", help="Judge model name.")
@click.option(
    "--concurrency", type=click.IntRange(1, 512), help="Judge calls in flight."
)
@click.option("--samples", type=click.IntRange(1, 15), default=1, show_default=True)
@click.option(
    "--no-cache", is_flag=True, help="Ask the judge even for cached verdicts."
)
@click.option(
    "--out", type=click.Path(dir_okay=False, path_type=Path), help="Results file."
)
@click.option(
    "--quality-weights", help='JSON, e.g. {"coherence": 0.3, ...} (five keys).'
)
@with_appcontext
def evaluate_command(
    file,
    suites,
    judge_url,
    judge_model,
    concurrency,
    samples,
    no_cache,
    out,
    quality_weights,
):
    """Evaluate FILE through the queue and workers; write results v1 JSON.

    Exit 0 done, 3 partial, 1 failed, 2 invalid input.
    """
    request = runs.RunRequest(
        suites=list(suites) or None,
        judge_url=judge_url,
        judge_model=judge_model,
        samples=samples,
        concurrency=concurrency,
        use_cache=not no_cache,
        quality_weights=json.loads(quality_weights) if quality_weights else None,
    )
    try:
        with file.open("rb") as stream:
            run = runs.create_run(stream, file.name, request)
    except runs.RunRejected as rejected:
        for problem in rejected.errors:
            click.echo(f"error   {_where(problem)}{problem['message']}", err=True)
        raise SystemExit(2) from None
    runs.enqueue(run.id)
    run = _wait_with_progress(run.id)
    document = json.dumps(runs.results_document(run), ensure_ascii=False, indent=2)
    if out:
        out.write_text(document + "\n", encoding="utf-8")
    else:
        click.echo(document)
    click.echo(f"status: {run.status}; dashboard: /r/{run.token}", err=True)
    raise SystemExit(EXIT_CODES[run.status])


def _wait_with_progress(run_id: str, poll_s: float = 0.2):
    storage = current_app.extensions["storage"]
    run = storage.get_run(run_id)
    with click.progressbar(
        length=max(run.total, 1), label="evaluating", file=sys.stderr
    ) as bar:
        shown = 0
        while run.status not in FINAL:
            time.sleep(poll_s)
            run = storage.get_run(run_id)
            if run.total:
                bar.length = run.total
            bar.update(run.done - shown)
            shown = run.done
    return run


def init_app(app) -> None:
    app.cli.add_command(validate_command)
    app.cli.add_command(evaluate_command)
