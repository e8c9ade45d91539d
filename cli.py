"""Flask CLI commands (``flask --app app validate FILE``)."""

from __future__ import annotations

import json
from pathlib import Path

import click
from flask import current_app
from flask.cli import with_appcontext

import dataset


@click.command("validate")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@with_appcontext
def validate_command(file: Path, as_json: bool) -> None:
    """Check FILE against the input format; exit 0 when valid, 1 when not."""
    report = dataset.validate_file(file, **validation_limits(current_app.config))
    if as_json:
        click.echo(json.dumps(report.to_dict(), ensure_ascii=False, indent=2))
    else:
        _print_report(report)
    raise SystemExit(0 if report.valid else 1)


def validation_limits(config: dict) -> dict:
    return {
        "max_line_bytes": config["MAX_LINE_MB"] * 1024 * 1024,
        "max_errors": config["MAX_VALIDATION_ERRORS"],
    }


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


def init_app(app) -> None:
    app.cli.add_command(validate_command)
