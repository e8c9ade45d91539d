"""``flask --app app convert [--from LAYOUT] FILE --out FILE.jsonl``: another
tool's dialogue layout into ours (``docs/importers.md``), then validated.

Exit codes: 0 converted (every record, or some with the others reported),
2 nothing converted or a bad option.
"""

from __future__ import annotations

import json
from pathlib import Path

import click
from flask import current_app
from flask.cli import with_appcontext

from cli.commands import _print_problems, _readable, fail
from cli.judge import INVALID
from core.problem_words import NO_PROFILE
from dataset.convert import convert_file, detect_file
from dataset.importers import IMPORTERS, Options

# the option that stands in for what a skipped record lacks
OPTION_HINTS = {NO_PROFILE: " (give --profile)"}


@click.command("convert")
@click.option(
    "--from",
    "layout",
    default=None,
    type=click.Choice(sorted(IMPORTERS)),
    help="The layout FILE is in (detected from its first records when omitted).",
)
@click.argument("file", type=click.Path(path_type=Path))
@click.option(
    "--out",
    "out",
    required=True,
    type=click.Path(path_type=Path),
    help="Where to write the converted JSONL.",
)
@click.option(
    "--method",
    default="model",
    show_default=True,
    help="Method name of the converted replies.",
)
@click.option(
    "--profile",
    default="",
    help="user_profile for records that carry none (else they are skipped).",
)
@click.option(
    "--personality", default="", help="user_personality for records that carry none."
)
@with_appcontext
def convert_command(layout, file, out, method, profile, personality) -> None:
    """Convert FILE (JSONL, a JSON array or CSV) to our JSONL at --out."""
    source = _readable(file)
    if out.resolve() == source.resolve():
        fail("--out must not be the input file", INVALID)
    options = Options(method=method, profile=profile, personality=personality)
    try:
        layout = layout or _detected(source)
        report = convert_file(source, layout, out, options)
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"{source}: {exc}", INVALID)
    for number, reason in report.reasons:
        hint = OPTION_HINTS.get(reason, "")
        click.echo(f"skipped record {number}: {reason}{hint}", err=True)
    _more(report.skipped, report.reasons)
    _print_made_ids(report)
    if not report.converted:
        fail(f"no record of {source} could be converted from {layout}", INVALID)
    checked = current_app.extensions["runs"].validate_file(out).to_dict()
    _print_problems(checked["errors"])
    _print_problems(checked["warnings"], "warning")
    state = "valid" if checked["valid"] else "INVALID"
    click.echo(f"{out}: {report.converted} sessions converted, "
               f"{report.skipped} records skipped; {state}")  # fmt: skip


def _more(count: int, shown: list) -> None:
    if count > len(shown):
        click.echo(f"… and {count - len(shown)} more", err=True)


def _print_made_ids(report) -> None:
    """The session ids the converter made (``docs/importers.md``): for
    records whose own id an earlier record took, and for those without."""
    for number, own, first, made in report.renamed:
        taken = json.dumps(own, ensure_ascii=False)
        click.echo(
            f"record {number}: session id {taken} is already used by record "
            f"{first}; written as {made}",
            err=True,
        )
    _more(report.renamed_count, report.renamed)
    if report.generated_count:
        made = ", ".join(made for _, made in report.generated[:3])
        more = ", …" if report.generated_count > 3 else ""
        click.echo(
            f"{report.generated_count} record(s) carry no session id: ids made "
            f"from the record number ({made}{more})",
            err=True,
        )


def _detected(source: Path) -> str:
    found = detect_file(source)
    if found is None:
        fail(f"{source}: layout not recognised; name it with --from", INVALID)
    click.echo(f"{source}: detected layout {found}", err=True)
    return found
