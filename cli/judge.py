"""``flask --app app judge-check``: one real request per mode of a protocol,
to see what the judge answers before a run spends anything; and the
``--protocol`` option and the pre-run estimate ``evaluate`` shares."""

from __future__ import annotations

import json
from pathlib import Path

import click
from flask import current_app
from flask.cli import with_appcontext

from core.problems import Rejected
from pipeline.service.runs import RunRequest, protocol_of

PROTOCOL_HELP = "A built-in judge protocol by name, or a protocol file (.toml)."
INVALID, FAILED = 2, 1  # every command's exit codes (evaluate's runs: EXIT_CODES)


def protocol_fields(value: str | None) -> dict:
    """RunRequest fields for ``--protocol``: a readable file's text, else a name."""
    if not value:
        return {}
    path = Path(value)
    if path.is_file():
        return {"protocol_text": path.read_text(encoding="utf-8")}
    return {"protocol": value}


def show_problems(rejected: Rejected) -> None:
    for problem in rejected.errors:
        where = f"line {problem['line']}: " if problem["line"] is not None else ""
        click.echo(f"error   {where}{problem['message']}", err=True)


def print_estimate(spend: dict) -> None:
    """What the run would spend, on stderr, before it starts."""
    for model, found in spend.get("judges", {}).items():
        cost = found["cost_usd_max"]
        money = f"; at most US${cost:,.4f}" if cost is not None else "; no price set"
        click.echo(
            f"estimate {model}: {found['calls']:,} judge calls, about "
            f"{found['prompt_tokens']:,} prompt tokens, at most "
            f"{found['completion_tokens_max']:,} completion tokens{money}",
            err=True,
        )


@click.command("judge-check")
@click.option("--protocol", help=PROTOCOL_HELP)
@click.option("--judge-url", help="OpenAI-compatible base URL ending in /v1.")
@click.option("--judge-model", help="Judge model name.")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
@with_appcontext
def judge_check_command(protocol, judge_url, judge_model, as_json) -> None:
    """Send one request per mode of the protocol; show the raw reply, the
    verdict read, latency, tokens and whether structured output was honoured.
    Exit 0 when every mode gave a verdict, 1 otherwise, 2 on bad input."""
    from pipeline.service.judge_check import check_judge  # the HTTP client, on use

    request = RunRequest(**protocol_fields(protocol))
    options = {"judge_url": judge_url, "judge_model": judge_model}
    try:
        results = check_judge(current_app.config, options, protocol_of(request))
    except Rejected as rejected:
        show_problems(rejected)
        raise SystemExit(INVALID) from None
    if as_json:
        click.echo(json.dumps(results, ensure_ascii=False, indent=2))
    else:
        for found in results:
            _print_result(found)
    raise SystemExit(
        0 if all(r.get("verdict") is not None for r in results) else FAILED
    )


def _print_result(found: dict) -> None:
    click.echo(f"== {found['mode']} ({found['model']})")
    if "error" in found:
        click.echo(f"   error: {found['error']} after {found['latency_s']} s")
        return
    verdict = found["verdict"] if found["verdict"] is not None else "none"
    click.echo(
        f"   verdict: {verdict}"
        + (f"  parts: {found['parts']}" if found["parts"] else "")
    )
    if found["refused"]:
        click.echo(f"   refused: {found['refused']}")
    click.echo(
        f"   {found['latency_s']} s, {found['prompt_tokens']} prompt + "
        f"{found['completion_tokens']} completion tokens "
        f"({found['reasoning_tokens']} reasoning), finish_reason {found['finish_reason']}, "
        f"structured output: {found['structured'] or 'not asked'}"
    )
    click.echo("   reply: " + found["raw"].replace("\n", "\n          "))
