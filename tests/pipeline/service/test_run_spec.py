"""A run's settings as a frozen, typed spec (pipeline/service/run_spec.py): made
from what the run recorded, and the only thing the worker reads of them."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from config import DEFAULTS
from pipeline.service.run_request import RunRequest
from pipeline.service.run_spec import RunSpec
from testing.judge_server import ScriptedJudge
from tests import crafted
from tests.pipeline_support import submit, wait_for

ROOT = Path(__file__).resolve().parents[3]
WORKER_MODULES = (
    "worker/execution.py",
    "batch/run_judge.py",
    "dispatch.py",
    "worker/finalizer.py",
)


def test_the_spec_is_what_the_run_recorded(app_factory, tmp_path, judge_server):
    app = app_factory(
        JUDGE_TEMPERATURE=0.3, JUDGE_HISTORY_CHARS=5000, JUDGE_MODELS=["a", "b"]
    )
    path = crafted.write(tmp_path / "s.jsonl", crafted.alignment_sessions())
    run_id = submit(
        app,
        path,
        judge_server,
        suites=["alignment", "pairwise"],
        judge_models=["a", "b"],
        samples=2,
        options={"pairwise_baseline": "Base"},
    )
    app.config.update(JUDGE_TEMPERATURE=0.9, JUDGE_HISTORY_CHARS=100)
    spec = RunSpec.of(app.extensions["storage"].runs.get_run(run_id))
    assert spec.suites == ("alignment", "pairwise")
    assert dict(spec.suite_options) == {"pairwise_baseline": "Base"}
    assert (spec.judge.models, spec.judge.samples) == (("a", "b"), 2)
    assert (spec.judge.temperature, spec.judge.history_chars) == (0.3, 5000)
    with pytest.raises(TypeError):
        spec.suite_options["pairwise_baseline"] = "Ours"  # type: ignore[index]


@pytest.mark.parametrize("module", WORKER_MODULES)
def test_the_worker_reads_no_raw_options(module):
    """Settings reach the worker through RunSpec.of(run), never run.options."""
    text = (ROOT / "pipeline" / module).read_text(encoding="utf-8")
    assert not re.search(r"\brun\.options\b", text)


def _recorded(app, path, judge, **asked):
    """A run made (its settings recorded) and not yet sent to a worker."""
    request = RunRequest(judge_url=judge.url, judge_model="scripted", **asked)
    with path.open("rb") as stream:
        return app.extensions["runs"].create(stream, path.name, request).id


# the worker's configuration once the run is recorded: no chunk may use it
WORKER_LIMITS = {
    "JUDGE_MAX_TOKENS": 999,
    "JUDGE_MAX_RETRIES": 0,
    "JUDGE_TIMEOUT_S": 0.5,
    "JUDGE_BACKOFF_CAP_S": 9.0,
}
RUN_LIMITS = {
    "JUDGE_MAX_TOKENS": 321,
    "JUDGE_MAX_RETRIES": 2,
    "JUDGE_TIMEOUT_S": 30.0,
    "JUDGE_BACKOFF_CAP_S": 0.2,
}


def test_every_chunk_asks_with_the_judge_limits_the_run_recorded(
    app_factory, tmp_path, judge_server
):
    """Recorded at submit: 321 tokens a reply, two retries. The worker that
    judges the run is configured with 999 and none: every request still
    asks 321 tokens, and a reply whose first two answers are 500s is
    retried and scored (with the worker's 0 retries it was an error)."""
    app = app_factory(
        JUDGE_API_URL=judge_server.url, JUDGE_MODEL="scripted", **RUN_LIMITS
    )
    sessions = crafted.alignment_sessions()
    sessions[0]["rounds"][0]["responses"]["Ours"] += " [[fault=500x2]]"
    path = crafted.write(tmp_path / "limits.jsonl", sessions)
    run_id = _recorded(app, path, judge_server, suites=["alignment"])
    app.config.update(WORKER_LIMITS)
    with (tmp_path / "bodies.jsonl").open("wb") as bodies:
        judge_server.state.record_to = bodies
        app.extensions["runs"].enqueue(run_id)
        document = wait_for(app, run_id)
        judge_server.state.record_to = None
    sent = [
        json.loads(line)
        for line in (tmp_path / "bodies.jsonl").read_bytes().splitlines()
    ]
    assert sent and {body["max_tokens"] for body in sent} == {321}
    assert document["run"]["status"] == "done", document["run"]["counts"]
    run = app.extensions["storage"].runs.get_run(run_id)
    settings = RunSpec.of(run).judge_config(app.config)
    assert (settings.max_tokens, settings.max_retries) == (321, 2)
    assert (settings.timeout_s, settings.backoff_cap_s) == (30.0, 0.2)


def test_a_batch_run_asks_with_the_limits_it_recorded(app_factory, tmp_path):
    """The batch files' lines carry the run's recorded max_tokens, not the
    worker's."""
    with ScriptedJudge(batch_seconds=0.2) as server:
        app = app_factory(
            JUDGE_API_URL=server.url,
            JUDGE_MODEL="scripted",
            JUDGE_BATCH_FIRST_POLL_S=0.2,
            **RUN_LIMITS,
        )
        path = crafted.write(tmp_path / "batch.jsonl", crafted.alignment_sessions())
        run_id = _recorded(app, path, server, suites=["alignment"], batch=True)
        app.config.update(WORKER_LIMITS)
        app.extensions["runs"].enqueue(run_id)
        document = wait_for(app, run_id)
        lines = [
            line for batch in server.batches.batches.values() for line in batch.lines
        ]
    assert document["run"]["status"] == "done"
    assert lines and {line["body"]["max_tokens"] for line in lines} == {321}


def test_a_run_recorded_without_limits_takes_the_workers_and_says_so(caplog):
    """Runs of earlier releases recorded no judge limits: their chunks use
    the worker's configuration, and the log says so."""
    run = SimpleNamespace(
        id="r1",
        suites=["alignment"],
        judge={"model": "m"},
        options={"judge_model": "m", "samples": 1},
    )
    config = {
        **DEFAULTS,
        "JUDGE_API_URL": "http://judge",
        "JUDGE_MODEL": "m",
        "JUDGE_MAX_TOKENS": 777,
    }
    spec = RunSpec.of(run)
    assert spec.judge.limits is None
    with caplog.at_level(logging.WARNING, logger="pipeline.service.run_spec"):
        settings = spec.judge_config(config, run_id=run.id)
    assert settings is not None and settings.max_tokens == 777
    assert "r1" in caplog.text and "JUDGE_MAX_TOKENS" in caplog.text


def test_the_model_and_the_absence_of_a_judge_are_the_runs(
    app_factory, tmp_path, judge_server
):
    """A run that named no model is judged by the instance's model at
    submit, not the worker's; a run made with no judge configured (its
    header: none) is not judged by a worker that has one."""
    app = app_factory(JUDGE_API_URL=judge_server.url, JUDGE_MODEL="scripted")
    path = crafted.write(tmp_path / "m.jsonl", crafted.alignment_sessions())
    service = app.extensions["runs"]
    with path.open("rb") as stream:
        named_none = service.create(stream, path.name, RunRequest(suites=["alignment"]))
    app.config.update(JUDGE_API_URL=None, JUDGE_MODEL=None)
    with path.open("rb") as stream:
        judgeless = service.create(stream, path.name, RunRequest(suites=["alignment"]))
    assert judgeless.judge is None
    app.config.update(JUDGE_API_URL=judge_server.url, JUDGE_MODEL="other")
    service.enqueue(named_none.id)
    assert wait_for(app, named_none.id)["run"]["status"] == "done"
    assert dict(judge_server.state.models) == {"scripted": judge_server.state.calls}
    calls = judge_server.state.calls
    document = wait_for(app, judgeless.id)
    assert document["run"]["judge"] is None
    assert judge_server.state.calls == calls  # nothing asked
