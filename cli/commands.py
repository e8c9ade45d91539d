"""``flask --app app validate FILE`` and ``flask --app app evaluate FILE``.

Exit codes: 0 done (or valid), 3 partial, 1 failed (including a queue or
database that cannot be reached), 2 invalid input (the file, an option).
"""

from __future__ import annotations

import itertools
import json
import shlex
from collections.abc import Iterable
from functools import partial
from pathlib import Path
from typing import NoReturn

import click
from flask import current_app
from flask.cli import with_appcontext

from cli.judge import FAILED, INVALID, PROTOCOL_HELP, print_estimate, protocol_fields
from cli.outcome import print_failures, print_links, wait_with_progress
from core.problems import Rejected
from core.status import RunStatus
from dataset.convert import detect_file
from dataset.importers import IMPORTERS
from metrics import registry
from pipeline.service.run_request import MAX_RUN_NAME_CHARS, family_pairs
from pipeline.service.runs import RunRequest

EXIT_CODES = {
    RunStatus.DONE: 0,
    RunStatus.PARTIAL: 3,
    RunStatus.FAILED: 1,
    RunStatus.CANCELLED: 1,
}


def _service():
    return current_app.extensions["runs"]


def fail(message: str, code: int) -> NoReturn:
    """One line on stderr, then exit: never a traceback."""
    click.echo(f"error: {message}", err=True)
    raise SystemExit(code)


def out_folder(out: str | Path | None) -> None:
    """Before any work: exit 2 when ``--out`` names a file in a folder that
    does not exist (it was said after the run, as a traceback)."""
    folder = Path(out).parent if out is not None else None
    if folder is not None and not folder.is_dir():
        fail(f"{out}: the folder {folder} does not exist", INVALID)


def write_out(
    out: str | Path, chunks: Iterable[str], newline: str | None = None
) -> str | None:
    """Write ``chunks`` to the file ``out``; None, or why it could not be
    written (a full disk, no permission), a partly written file removed."""
    opened = False  # a file already there is kept when open() fails
    try:
        with open(out, "w", encoding="utf-8", newline=newline) as stream:
            opened = True
            stream.writelines(chunks)
    except OSError as exc:
        if opened and Path(out).is_file():  # never /dev/full or a pipe
            Path(out).unlink(missing_ok=True)
        return exc.strerror or str(exc)
    return None


def _where(problem: dict) -> str:
    return f"line {problem['line']}: " if problem["line"] is not None else ""


def _print_problems(problems: list[dict], kind: str = "error") -> None:
    for problem in problems:
        click.echo(
            f"{kind:<7} {_where(problem)}{problem['message']}{_times(problem)}",
            err=True,
        )


def _times(problem: dict) -> str:
    """How often a grouped warning occurred, and its first lines."""
    count = problem.get("count") or 1
    if count < 2:
        return ""
    lines = ", ".join(str(line) for line in problem.get("lines") or [] if line)
    more = ", …" if count > len(problem.get("lines") or []) else ""
    return f" ({count:,} times; lines {lines}{more})"


def _readable(path: Path) -> Path:
    if path.is_dir():
        fail(f"{path}: is a directory, not a .jsonl file", INVALID)
    if not path.is_file():
        fail(f"{path}: no such file", INVALID)
    try:
        with path.open("rb"):
            pass
    except OSError as exc:
        fail(f"{path}: {exc.strerror}", INVALID)
    return path


@click.command("validate")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@with_appcontext
def validate_command(file: Path, as_json: bool) -> None:
    """Check FILE against the input format; exit 0 when valid, 1 when not."""
    report = _service().validate_file(_readable(file))
    summary = report.to_dict()
    if not report.valid:  # another tool's layout: say which, and how to convert
        summary["looks_like"], summary["convert_command"] = _convert_hint(file)
    if as_json:
        click.echo(json.dumps(summary, ensure_ascii=False, indent=2))
    else:
        _print_problems(summary["errors"])
        _print_problems(summary["warnings"], "warning")
        if report.valid:
            methods, suites = ", ".join(report.methods), ", ".join(report.suites)
            click.echo(
                f"valid: {report.sessions} sessions; methods {methods}; suites {suites}"
            )
        else:
            click.echo(f"invalid: {report.errors_total} error(s)")
        if summary.get("looks_like"):
            title = IMPORTERS[summary["looks_like"]].title
            click.echo(
                f"This file looks like {title}; convert it with: "
                f"{summary['convert_command']}"
            )
    raise SystemExit(0 if report.valid else 1)


def _convert_hint(path: Path) -> tuple[str | None, str | None]:
    """The layout of another tool ``path`` is in, detected as the upload
    page detects it, and the command that converts it (None, None: ours,
    or no layout we know)."""
    try:
        layout = detect_file(path)
    except OSError:
        return None, None
    if layout is None:
        return None, None
    out = path.with_name(f"{path.stem}.converted.jsonl")
    words = ["flask", "--app", "app", "convert", "--from", layout]
    command = shlex.join([*words, str(path), "--out", str(out)])
    return layout, command


def _option_flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _suite_option_flags(function):
    """One ``--<option>`` (JSON) per option any suite declares."""
    for suite in registry.suites():
        for option in suite.options:
            help_text = f"JSON value of the {suite.name} suite's option {option.name}."
            function = click.option(
                _option_flag(option.name), option.name, help=help_text
            )(function)
    return function


def _parse_options(raw: dict) -> dict:
    options = {}
    for name, text in raw.items():
        if text is None:
            continue
        try:
            options[name] = json.loads(text)
        except json.JSONDecodeError as exc:
            fail(f"{name} is not valid JSON: {exc.msg} (column {exc.colno})", INVALID)
    return options


def _named(pairs: tuple[str, ...]) -> dict[str, str]:
    """``--option NAME=JSON`` pairs (any suite's option, by name)."""
    named = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            fail(f"--option {pair!r} is not NAME=JSON", INVALID)
        named[name.strip()] = value
    return named


def _families(methods: tuple[str, ...], judges: tuple[str, ...]) -> dict | None:
    """``--method-family`` and ``--judge-family`` as a run's families (a
    pair without ``=`` exits 2 naming it)."""
    try:
        found = {
            "methods": family_pairs(",".join(methods), "--method-family"),
            "judges": family_pairs(",".join(judges), "--judge-family"),
        }
    except Rejected as rejected:
        fail("; ".join(p.message for p in rejected.problems), INVALID)
    return found if any(found.values()) else None


@click.command("evaluate")
@click.argument("file", type=click.Path(path_type=Path))
@click.option(
    "--suite",
    "suites",
    multiple=True,
    help=f"Suite to run (repeatable): {', '.join(registry.names())}.",
)
@click.option("--judge-url", help="OpenAI-compatible base URL ending in /v1.")
@click.option(
    "--judge-model",
    "judge_models",
    multiple=True,
    help="Judge model name; repeat it for a judge panel (each model judges every item).",
)
@click.option(
    "--concurrency",
    type=click.IntRange(1, 512),
    help="Judge calls in flight in the worker this command starts (embedded mode; "
    "a running server's worker and team-mode workers use theirs).",
)
@click.option(
    "--samples",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Judge samples per item (at most MAX_SAMPLES).",
)
@click.option(
    "--no-cache", is_flag=True, help="Ask the judge even for cached verdicts."
)
@click.option(
    "--batch",
    is_flag=True,
    help="Send the judge's requests through the provider's Batch API (Files + "
    "Batches endpoints: about half the price, up to 24 h); re-asks and failed "
    "requests go online.",
)
@click.option(
    "--out", type=click.Path(dir_okay=False, path_type=Path), help="Results file."
)
@click.option("--protocol", help=PROTOCOL_HELP)
@click.option(
    "--option",
    "named_options",
    multiple=True,
    metavar="NAME=JSON",
    help="A suite option by name (repeatable).",
)
@click.option("--name", help="The run's name, shown in its workspace and comparisons.")
@click.option(
    "--method-family",
    "method_families",
    multiple=True,
    metavar="METHOD=FAMILY",
    help="The model family of a method, for the judge's self-preference check "
    "(repeatable).",
)
@click.option(
    "--judge-family",
    "judge_families",
    multiple=True,
    metavar="MODEL=FAMILY",
    help="The model family of a judge model (repeatable).",
)
@click.option(
    "--workspace",
    metavar="TOKEN",
    help="Add the run to this workspace (its manage token, as the web's upload).",
)
@_suite_option_flags
@with_appcontext
def evaluate_command(
    file,
    suites,
    judge_url,
    judge_models,
    concurrency,
    samples,
    no_cache,
    batch,
    out,
    protocol,
    named_options,
    name,
    method_families,
    judge_families,
    workspace,
    **suite_options,
):
    """Evaluate FILE through the queue and workers; write results v1 JSON.

    Exit 0 done, 3 partial, 1 failed, 2 invalid input.
    """
    out_folder(out)
    if samples > current_app.config["MAX_SAMPLES"]:
        fail(
            f"--samples must be at most {current_app.config['MAX_SAMPLES']} (MAX_SAMPLES)",
            INVALID,
        )
    request = RunRequest(
        suites=list(suites) or None,
        judge_url=judge_url,
        judge_model=judge_models[0] if judge_models else None,
        judge_models=list(judge_models) or None,
        samples=samples,
        use_cache=not no_cache,
        batch=batch,
        client="cli",
        options=_parse_options({**suite_options, **_named(named_options)}),
        name=(name or "").strip()[:MAX_RUN_NAME_CHARS] or None,
        workspace_id=_workspace_id(workspace),
        families=_families(method_families, judge_families),
        **protocol_fields(protocol),
    )
    if concurrency:  # the judge pool of the worker this command starts
        current_app.config["JUDGE_CONCURRENCY"] = concurrency
    worker = current_app.extensions["worker"]
    if worker is not None:  # embedded: it starts while this reads the file
        worker.ensure_started()
    run = _submit(_readable(file), request)
    run = wait_with_progress(run.id)
    # rows streamed from the database: a run of any size in constant memory
    document = _service().results_chunks(run, indent=2)
    unwritten = None
    if out:
        unwritten = write_out(out, itertools.chain(document, ["\n"]))
    else:
        for chunk in document:
            click.echo(chunk, nl=False)
        click.echo()
    if run.status != RunStatus.DONE:  # what failed, counted by reason
        print_failures(current_app.extensions["storage"].rows.unscored_causes(run.id))
    print_links(
        run, current_app.config.get("PUBLIC_URL"), current_app.config.get("PORT", 5000)
    )
    if unwritten is not None:  # the run is stored: its results can be had
        again = f"flask --app app report {run.id} --format json --out FILE"
        fail(f"{out}: {unwritten}; the run is stored, `{again}` writes it", FAILED)
    raise SystemExit(EXIT_CODES[run.status])


def _workspace_id(token: str | None) -> str | None:
    """The workspace a run joins: as on the web, only its manage token adds."""
    if not token:
        return None
    found = current_app.extensions["storage"].workspaces.find_workspace(token.strip())
    if found is None:
        fail("--workspace: no workspace has this token", INVALID)
    if not found.can_manage:
        fail(
            "--workspace: this is a view token; give the workspace's manage token",
            INVALID,
        )
    return found.item.id


def _estimate(report, request: RunRequest) -> None:
    """Calls, tokens and cost ceiling on stderr before the run starts (the
    submission calls it once the file is valid: the file is read once)."""
    print_estimate(_service().judge_calls(report, request))


def _submit(path: Path, request: RunRequest):
    from sqlalchemy.exc import SQLAlchemyError

    try:
        with path.open("rb") as stream:
            return _service().submit(
                stream, path.name, request, on_valid=partial(_estimate, request=request)
            )
    except Rejected as rejected:
        _print_problems(rejected.errors)
        raise SystemExit(FAILED if rejected.status >= 500 else INVALID) from None
    except SQLAlchemyError as exc:
        fail(f"the database cannot be reached: {type(exc).__name__}", FAILED)
