"""``flask --app app convert [--from LAYOUT] FILE… --out FILE.jsonl``: another
tool's dialogue layout into ours (``docs/importers.md``), then validated.
Several files (or a folder of them: its ``.json``, ``.jsonl`` and ``.csv``
files, in its subfolders too) go into one output, as CharacterBench's one file per dimension do.

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
from dataset.convert import convert_files, detect_file
from dataset.importers import IMPORTERS, Options

FOLDER_SUFFIXES = (".json", ".jsonl", ".csv")  # the files of a folder converted

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
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
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
@click.option(
    "--language",
    default="zh",
    show_default=True,
    type=click.Choice(["zh", "en"]),
    help="CharacterBench: the Chinese original or its English translation "
    "(translation_en); the other is kept in meta.",
)
@with_appcontext
def convert_command(layout, files, out, method, profile, personality, language) -> None:
    """Convert FILE… (JSONL, a JSON array or CSV; or a folder of them) to
    our JSONL at --out."""
    sources = _sources(files)
    if any(out.resolve() == source.resolve() for source in sources):
        fail("--out must not be the input file", INVALID)
    options = Options(
        method=method, profile=profile, personality=personality, language=language
    )
    try:
        layout = layout or _detected(sources)
        reports = convert_files(sources, layout, out, options)
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"{exc}", INVALID)
    converted = skipped = 0
    for source, report in reports:
        where = f"{source}: " if len(sources) > 1 else ""
        for number, reason in report.reasons:
            hint = OPTION_HINTS.get(reason, "")
            click.echo(f"{where}skipped record {number}: {reason}{hint}", err=True)
        _more(report.skipped, report.reasons)
        _print_made_ids(report)
        converted, skipped = converted + report.converted, skipped + report.skipped
    if not converted:
        named = ", ".join(map(str, sources))
        fail(f"no record of {named} could be converted from {layout}", INVALID)
    checked = current_app.extensions["runs"].validate_file(out).to_dict()
    _print_problems(checked["errors"])
    _print_problems(checked["warnings"], "warning")
    state = "valid" if checked["valid"] else "INVALID"
    click.echo(
        f"{out}: {converted} sessions converted, {skipped} records skipped; {state}"
    )


def _sources(files) -> list[Path]:
    """The files named, a folder standing for its files and its subfolders’
    (by path; hidden ones left out): PrefEval nests its result files."""
    sources: list[Path] = []
    for path in files:
        if path.is_dir():
            found = sorted(
                p
                for p in path.rglob("*")
                if p.suffix.lower() in FOLDER_SUFFIXES
                and p.is_file()
                and not any(part.startswith(".") for part in p.relative_to(path).parts)
            )
            if not found:
                fail(f"{path}: no .json, .jsonl or .csv file in this folder", INVALID)
            sources.extend(found)
        else:
            sources.append(_readable(path))
    return sources


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


def _detected(sources: list[Path]) -> str:
    """The one layout every file is detected in."""
    found = {source: detect_file(source) for source in sources}
    for source, layout in found.items():
        if layout is None:
            fail(f"{source}: layout not recognised; name it with --from", INVALID)
    layouts = sorted(set(found.values()), key=str)
    if len(layouts) > 1:
        first = {layout: source for source, layout in reversed(found.items())}
        named = ", ".join(f"{layout} ({first[layout]})" for layout in layouts)
        fail(
            f"the files are in different layouts: {named}; convert them one "
            "layout at a time",
            INVALID,
        )
    named = str(sources[0]) if len(sources) == 1 else f"{len(sources)} files"
    click.echo(f"{named}: detected layout {layouts[0]}", err=True)
    return str(layouts[0])
