"""Runs a plan through the product: the code a worker runs (the in-process
Celery worker on the local broker, SQLite) or the whole served app over
HTTP, against the scripted judge on loopback; and collects what a user
reads: the results document, the exports and the CLI report."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from dataset.convert import convert_file
from dataset.importers import Options
from pipeline.leases import LEASES
from tests.pipeline_support import GENEROUS_RATE_LIMITS, submit, wait_for
from tests.witness.plans import JUDGES, Plan
from tests.worker_support import create_test_app

# USD per million tokens, input/output: each judge its own, so a cost
# counted under the wrong judge shows
PRICES = {"judge-a": (1.0, 2.0), "judge-b": (3.0, 5.0)}
# and in batch files (a batch part at the batch prices)
BATCH_PRICES = {"judge-a": (0.5, 1.5), "judge-b": (2.0, 2.5)}


def settings(folder: Path) -> dict:
    prices = {
        m: {"input": i, "output": o, "batch_input": b_in, "batch_output": b_out}
        for m, ((i, o), (b_in, b_out)) in (
            (m, (PRICES[m], BATCH_PRICES[m])) for m in PRICES
        )
    }
    return {
        "TESTING": True,
        "SECRET_KEY": "witness",
        "INSTANCE_PATH": str(folder / "instance"),
        "DATABASE_URL": f"sqlite:///{folder / 'witness.sqlite3'}",
        "UPLOAD_FOLDER": str(folder / "uploads"),
        "RESULTS_FOLDER": str(folder / "results"),
        "REDIS_URL": None,
        "JUDGE_API_URL": None,
        "JUDGE_MODEL": None,
        "JUDGE_MODELS": ",".join(JUDGES),
        "JUDGE_PRICES": prices,
        # a 500 is an error row at once: the plan counts one request for it
        "JUDGE_MAX_RETRIES": 0,
        "JUDGE_TIMEOUT_S": 30.0,
        "JUDGE_CONCURRENCY": 4,
        "JUDGE_BATCH_FIRST_POLL_S": 0.1,
        "JUDGE_BATCH_MAX_POLL_S": 0.5,
        # about a session a chunk, two under way at once: a cancelled run
        # keeps some of them (with every chunk under way, a cancel mostly
        # found none stored)
        "CHUNK_UNITS": 4,
        "RUN_INFLIGHT_CHUNKS": 2,
        "EMBEDDED_WORKER": "none",
        **GENEROUS_RATE_LIMITS,
    }


def make_app(folder: Path):
    return create_test_app(settings(folder))


@dataclass
class Outcome:
    """What one run gave: the results document and what the judge saw."""

    document: dict
    token: str = ""
    manage: str = ""
    reported: dict[str, Counter] = field(default_factory=dict)  # per judge model
    protocol: str = ""
    asked: Counter = field(default_factory=Counter)  # requests taken, per model
    batch_lines: int = 0  # the lines of batch files it sent the provider

    def taken(self) -> int:
        """Every request the judge took: online, and in batch files."""
        return sum(self.asked.values()) + self.batch_lines


def _reported(judge) -> dict[str, Counter]:
    with judge.state.reported.lock:
        return {m: Counter(c) for m, c in judge.state.reported.by_model.items()}


def _since(before: dict[str, Counter], after: dict[str, Counter]) -> dict[str, Counter]:
    return {m: after[m] - before.get(m, Counter()) for m in after}


def run_in_worker(app, judge, plan: Plan, folder: Path) -> Outcome:
    """The plan's file submitted through the run service and evaluated by
    the worker (evaluation, finalize), as ``flask evaluate`` does; cancelled
    on the way when the plan says so."""
    plan.nonce = uuid.uuid4().hex[:12]
    path = written(plan, folder, app)
    before, asked = _reported(judge), Counter(judge.state.models)
    run_id = submit(
        app,
        path,
        judge,
        suites=list(plan.suites),
        judge_models=list(plan.judges),
        protocol=plan.protocol,
    )
    canceller = _cancel_later(app, run_id, judge, plan.cancel_after)
    document = wait_for(app, run_id, timeout=600.0)
    if canceller is not None:
        canceller.join(timeout=120)
    run = app.extensions["storage"].runs.get_run(run_id)
    if run.status == "cancelled":  # what a chunk was doing when it was cancelled
        run = _settle(app, run_id)
        document = app.extensions["runs"].results_document(run)
    return _outcome(document, run.token, run.manage_token, judge, before, asked)


def written(plan: Plan, folder: Path, app=None) -> Path:
    """The plan's file in our format, ``<nonce>.jsonl``. A plan in ALOE's
    layout is written as ALOE's file and converted as a user does: with
    ``app``, through the CLI, after ``validate`` named the layout and the
    command (an ALOE file once got only "required field is missing");
    without, through the converter the upload page calls."""
    path = folder / f"{plan.nonce}.jsonl"
    if plan.layout == "ours":
        return plan.write(path)
    source = plan.write_aloe(folder / f"{plan.nonce}.aloe.jsonl")
    if app is None:
        assert convert_file(source, "aloe", path, Options()).converted == plan.sessions
        return path
    cli = app.test_cli_runner()
    checked = cli.invoke(args=["validate", "--json", str(source)])
    assert checked.exit_code == 1, checked.output
    hint = json.loads(checked.output)
    assert hint["looks_like"] == "aloe" and "--from aloe" in hint["convert_command"]
    done = cli.invoke(
        args=["convert", "--from", "aloe", str(source), "--out", str(path)]
    )
    assert done.exit_code == 0, done.output
    return path


def _outcome(document, token, manage, judge, before, asked) -> Outcome:
    outcome = Outcome(document, token, manage)
    outcome.reported = _since(before, _reported(judge))
    outcome.asked = Counter(judge.state.models) - asked
    return outcome


def _settle(app, run_id: str):
    """The cancelled run once no chunk of it is worked on (its requests in
    flight when it was cancelled are paid, and counted, as they end) and
    what it stored is summarized."""
    storage = app.extensions["storage"]
    deadline = time.monotonic() + 120
    while True:
        # the leases first: a run read before its last chunk wrote its
        # counters and let go would be stale
        working = run_id in {held for held, _chunk in LEASES.keys()}  # noqa: SIM118
        run = storage.runs.get_run(run_id)
        if not working and run.aggregates is not None:
            return run
        assert time.monotonic() < deadline, f"cancelled run {run_id} never settled"
        # every 50 ms: it waits for a chunk's last replies and an
        # aggregation (10 ms polls were 1.4% of test_witness's busy samples)
        time.sleep(0.05)


def _cancel_later(app, run_id: str, judge, after: int | None):
    """Cancel the run once the judge has taken ``after`` more requests (not
    when the run ended first)."""
    if after is None:
        return None
    start = judge.state.calls
    storage, service = app.extensions["storage"], app.extensions["runs"]

    def cancel() -> None:
        deadline = time.monotonic() + 120
        polls = 0
        while judge.state.calls - start < after and time.monotonic() < deadline:
            # the judge's count every 1 ms (the cancel lands on its request);
            # the run's status, a query, every 50 ms (only to stop waiting)
            if polls % 50 == 0 and storage.runs.get_run(run_id).status not in (
                "queued",
                "running",
            ):
                return
            polls += 1
            time.sleep(0.001)
        service.cancel(storage.runs.get_run(run_id))

    thread = threading.Thread(target=cancel, name="witness-cancel", daemon=True)
    thread.start()
    return thread


def run_over_http(
    base_url: str, session, judge, plan: Plan, folder: Path, workspace: str = ""
) -> Outcome:
    """The plan's file uploaded to the served app (``POST /api/v1/runs``),
    polled until final, and its results read back over HTTP."""
    plan.nonce = uuid.uuid4().hex[:12]
    path = written(plan, folder)
    before, asked = _reported(judge), Counter(judge.state.models)
    lines_before = judge.state.batch_lines
    with path.open("rb") as stream:
        answer = session.post(
            f"{base_url}/api/v1/runs",
            files={"file": (path.name, stream, "application/jsonl")},
            data={
                "suites": ",".join(plan.suites),
                "judge_model": ",".join(plan.judges),
                "workspace": workspace,  # (its manage token)
                "protocol": plan.protocol,
                # as the upload form's checkbox: sent only when ticked (an
                # empty field is refused since the API checks fields as sent)
                **({"batch": "1"} if plan.batch else {}),
            },
            timeout=60,
        )
    assert answer.status_code == 202, answer.text
    created = answer.json()
    token = created["token"]
    deadline = time.monotonic() + 600
    while True:
        status = session.get(f"{base_url}/api/v1/runs/{token}", timeout=60).json()
        if status["status"] in ("done", "partial", "failed", "cancelled"):
            break
        assert time.monotonic() < deadline, f"run {token} still {status['status']}"
        time.sleep(0.1)
    document = session.get(f"{base_url}/api/v1/runs/{token}/results", timeout=60).json()
    manage = created.get("manage_token", "")
    outcome = _outcome(document, token, manage, judge, before, asked)
    outcome.protocol = plan.protocol
    outcome.batch_lines = judge.state.batch_lines - lines_before
    return outcome


class History(list):
    """The runs served so far (their usage is what an expected cost reads);
    shown short in a failing example's report."""

    def __repr__(self) -> str:
        return f"<{len(self)} earlier runs>"


def estimate(base_url: str, session, plan: Plan, folder: Path, workspace: str) -> dict:
    """``judge_calls`` of ``POST /api/v1/validate`` for the plan's file with
    the run's fields (the upload page's check before a run)."""
    path = folder / f"{plan.nonce}.jsonl"
    with path.open("rb") as stream:
        answer = session.post(
            f"{base_url}/api/v1/validate",
            files={"file": (path.name, stream, "application/jsonl")},
            data={
                "suites": ",".join(plan.suites),
                "judge_model": ",".join(plan.judges),
                "workspace": workspace,
                "protocol": plan.protocol,
            },
            timeout=60,
        )
    assert answer.status_code == 200, answer.text
    return answer.json()["judge_calls"]


def exports(client, token: str) -> dict[str, str]:
    """What a reader downloads: the rows, the summary and the paper tables."""
    found = {}
    for name in ("export.csv", "summary.csv", "export.md", "export.tex"):
        response = client.get(f"/r/{token}/{name}")
        assert response.status_code == 200, (name, response.status_code)
        found[name] = response.get_data(as_text=True)
    return found


def cli_report(app, run_id: str, form: str = "md") -> str:
    result = app.test_cli_runner().invoke(args=["report", run_id, "--format", form])
    assert result.exit_code == 0, result.output
    return result.output


def wait(app, run_id: str) -> dict:
    return wait_for(app, run_id)


def downloads(app, outcome: Outcome) -> tuple[dict[str, str], list[str]]:
    """What a reader takes away: the four downloads and the CLI report in
    Markdown and LaTeX; none for a run cancelled before it stored a result
    (it has no paper tables: 404)."""
    client = app.test_client()
    cancelled = outcome.document["run"]["status"] == "cancelled"
    if cancelled and client.get(f"/r/{outcome.token}/export.md").status_code == 404:
        return {}, []
    run_id = outcome.document["run"]["id"]
    reports = [cli_report(app, run_id, form) for form in ("md", "tex")]
    return exports(client, outcome.token), reports
