"""What ``evaluate`` says on stderr while a run goes (a progress bar) and
once it has ended: why rows are not scored (counted by reason, so a partial
exit says what failed) and the run's two links.

>>> causes = [("al", "unscored", "http_error", 4, {"status": 500}),
...           ("binary", "unscored", "http_error", 2, {"status": 500}),
...           ("al", "not_applicable", "missing_field", 3, {"field": "text"})]
>>> for line in failure_lines(causes):
...     print(line)
not scored: 6 rows unscored: judge answered HTTP 500
not scored: 3 rows not_applicable: session lacks text
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from typing import Any

import click
from flask import current_app

from core.status import FINAL_RUN, RunStatus
from metrics.notes import NOTES, Note

LOCAL_SERVER = "http://127.0.0.1:{port}"  # where the README's start command serves
FAILURE_REASONS_SHOWN = 10  # the commonest; the results hold every row


def failure_lines(causes: list[tuple[str, str, str, int, dict[str, Any]]]) -> list[str]:
    """One line per (status, reason), most rows first, metrics merged:
    ``storage.rows.unscored_causes`` gives them per metric."""
    counted: Counter[tuple[str, str]] = Counter()
    for _metric, status, code, rows, params in causes:
        counted[(status, reason(code, params))] += rows
    return [
        f"not scored: {rows:,} rows {status}: {reason}"
        for (status, reason), rows in counted.most_common(FAILURE_REASONS_SHOWN)
    ]


def reason(code: str, params: dict[str, Any]) -> str:
    """A note's English sentence (the CLI speaks English, as its messages do)."""
    if code not in NOTES:
        return code or "no reason recorded"
    try:
        return Note(code, params).english
    except (KeyError, TypeError, ValueError):  # parameters of another release
        return code


def print_failures(causes: list[tuple[str, str, str, int, dict[str, Any]]]) -> None:
    for line in failure_lines(causes):
        click.echo(line, err=True)


def print_links(run: Any, public_url: str | None, port: int = 5000) -> None:
    """The run's two links, absolute: on ``PUBLIC_URL``, else on the address
    the README's start command serves (``PORT``), said to be a guess (this command does
    not know where a server runs). The results on stdout never hold the
    manage token: they are meant to be published."""
    base = (public_url or "").rstrip("/") or LOCAL_SERVER.format(port=port)
    if not public_url:
        click.echo(
            f"note: PUBLIC_URL is not set; the links assume a server at {base} "
            "(set PUBLIC_URL to the address your teammates open)",
            err=True,
        )
    click.echo(f"status: {run.status}", err=True)
    if run.status == RunStatus.FAILED and run.error:  # why, as the run page says
        click.echo(f"failed: {run.error}", err=True)
    click.echo(f"dashboard (share): {base}/r/{run.token}", err=True)
    if run.manage_token:
        click.echo(f"manage (keep private): {base}/r/{run.manage_token}", err=True)


def wait_with_progress(run_id: str, poll_s: float = 0.05):
    """The run once it has ended, its progress shown on stderr meanwhile."""
    storage = current_app.extensions["storage"]
    run = storage.runs.get_run(run_id)
    with click.progressbar(
        length=max(run.total, 1), label="evaluating", file=sys.stderr
    ) as bar:
        shown, status, polls = 0, run.status, 0
        while status not in FINAL_RUN:
            time.sleep(poll_s)
            status, done, total = storage.runs.run_state(run_id)
            if total:
                bar.length = total
            polls += 1
            if polls % BATCH_EVERY == 1:  # a batch-mode run's batch, once a second
                bar.label = _batch_label(storage.batches.progress(run_id))
            bar.update(done - shown)
            shown = done
    return storage.runs.get_run(run_id)


BATCH_EVERY = 20  # polls of run_state between two looks at the batch


def _batch_label(batch: dict | None) -> str:
    """What the run waits on, as the bar's label.

    >>> _batch_label({"stage": "waiting", "done": 3, "total": 40})
    "waiting for the provider's batch: 3 of 40 requests done"
    >>> _batch_label(None)
    'evaluating'
    """
    if batch is None or batch["stage"] == "answered":
        return "evaluating"
    if batch["stage"] == "collect":
        return "gathering the judge's requests for the provider's batch"
    return (
        f"waiting for the provider's batch: {batch['done']} of {batch['total']}"
        " requests done"
    )
