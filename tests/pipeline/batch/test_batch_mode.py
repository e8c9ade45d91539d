"""Batch mode end to end (issue 49): a run's judge requests go through the
scripted judge's Files and Batches endpoints over real HTTP, and its rows
equal an online run's on the same replies."""

from __future__ import annotations

import os
import signal
import time

import pytest
import requests

from pipeline.service.run_request import RunRequest
from testing.judge_server import ScriptedJudge
from tests import crafted
from tests.pipeline_support import FAST_JUDGE, base_config, submit, wait_for
from tests.worker_support import create_test_app

SESSIONS, ROUNDS, METHODS = 10, 5, ("Base", "Ours")  # 100 replies, 2 modes: 200 calls


def sessions(extra: str = "") -> list[dict]:
    """Hash-scored replies (no directive: the verdicts differ), ``extra``
    written into the first session's replies of its first round."""
    return [
        crafted.session(
            f"s{index}",
            {
                method: [
                    f"{method} reply {index}.{k}" + (extra if index == k == 0 else "")
                    for k in range(ROUNDS)
                ]
                for method in METHODS
            },
        )
        for index in range(SESSIONS)
    ]


@pytest.fixture
def server():
    with ScriptedJudge(batch_seconds=1.0) as judge:
        yield judge


def scores(document) -> dict:
    return {
        (r["session_id"], r["round"], r["method"], r["metric"]): r["value"]
        for r in document["rows"]
    }


def judge_app(app_factory, server, **config):
    return app_factory(
        JUDGE_API_URL=server.url,
        JUDGE_MODEL="scripted",
        JUDGE_BATCH_FIRST_POLL_S=0.2,
        **FAST_JUDGE,
        **config,
    )


def test_a_batch_run_gives_the_online_runs_rows_with_no_request_online(
    app_factory, server, tmp_path
):
    app = judge_app(app_factory, server)
    # three sessions, 60 requests each way (ten were 200: the size is not
    # the point; what the batch and the online run give is)
    path = crafted.write(tmp_path / "runs.jsonl", sessions()[:3])
    online = wait_for(
        app, submit(app, path, server, suites=["alignment"], use_cache=False)
    )
    asked_online = server.state.online_requests
    assert asked_online == 60 and server.state.batch_lines == 0
    run_id = submit(
        app, path, server, suites=["alignment"], use_cache=False, batch=True
    )
    batched = wait_for(app, run_id)
    assert batched["run"]["status"] == "done"
    assert server.state.batch_lines == 60
    assert server.state.online_requests == asked_online  # none online
    assert scores(batched) == scores(online)
    assert batched["summary"] == online["summary"]
    used = batched["judge_usage"]["scripted"]
    assert used["calls"] == used["batch_calls"] == 60
    storage = app.extensions["storage"]
    assert [b.status for b in storage.batches.batches(run_id)] == ["completed"]
    token = storage.runs.get_run(run_id).token
    page = app.test_client().get(f"/r/{token}?lang=en").get_data(as_text=True)
    assert 'data-testid="judge-batch-calls">60 of them through' in page
    assert 'data-testid="judge-batch-cost"' not in page  # it was the batch


def test_failed_and_expired_lines_go_online_and_the_run_completes(
    app_factory, server, tmp_path
):
    app = judge_app(app_factory, server)
    lines = sessions()
    # in the last round: a reply is in the history of its method's later rounds
    lines[1]["rounds"][-1]["responses"]["Base"] += " [[batch=expired]]"
    lines[2]["rounds"][-1]["responses"]["Ours"] += " [[batch=failed]]"
    path = crafted.write(tmp_path / "faults.jsonl", lines)
    run_id = submit(app, path, server, suites=["alignment"], batch=True)
    document = wait_for(app, run_id)
    assert document["run"]["status"] == "done"
    # two replies, two modes each: 4 of 200 lines failed or expired, asked online
    assert server.state.batch_lines == 200
    assert server.state.online_requests == 4
    used = document["judge_usage"]["scripted"]
    assert used["calls"] == 204 and used["batch_calls"] == 200


def test_a_panel_sends_a_file_per_judge_split_at_the_request_limit(
    app_factory, server, tmp_path
):
    """A provider's batch holds one model's requests: two judges, two sets
    of files; 80 requests a judge at most 30 a file: three files each."""
    app = judge_app(app_factory, server, JUDGE_BATCH_MAX_REQUESTS=30)
    path = crafted.write(tmp_path / "panel.jsonl", sessions()[:4])
    run_id = submit(
        app,
        path,
        server,
        suites=["alignment"],
        batch=True,
        judge_models=["scripted", "scripted+10"],
    )
    document = wait_for(app, run_id)
    assert document["run"]["status"] == "done"
    made = app.extensions["storage"].batches.batches(run_id)
    assert sorted((b.model, b.part, b.total) for b in made) == [
        (model, part, total)
        for model in ("scripted", "scripted+10")
        for part, total in enumerate((30, 30, 20))
    ]
    assert server.state.batch_lines == 160 and server.state.online_requests == 0
    used = document["judge_usage"]
    assert used["scripted"]["batch_calls"] == used["scripted+10"]["batch_calls"] == 80


def test_a_provider_without_batches_runs_online_and_says_so(app_factory, tmp_path):
    with ScriptedJudge(batch_fail_all=True, batch_seconds=0.5) as server:
        app = judge_app(app_factory, server)
        path = crafted.write(tmp_path / "x.jsonl", sessions()[:2])
        run_id = submit(app, path, server, suites=["alignment"], batch=True)
        document = wait_for(app, run_id)
    assert document["run"]["status"] == "done"
    state = app.extensions["storage"].batches.state(run_id)
    assert (state.stage, state.note) == ("answered", "failed")


def test_cancelling_the_run_cancels_its_batch(app_factory, tmp_path):
    with ScriptedJudge(batch_seconds=600) as server:
        app = judge_app(app_factory, server)
        path = crafted.write(tmp_path / "c.jsonl", sessions()[:2])
        run_id = submit(app, path, server, suites=["alignment"], batch=True)
        storage = app.extensions["storage"]
        wait_until(lambda: storage.batches.state(run_id).stage == "waiting")
        made = storage.batches.batches(run_id)
        waiting = app.extensions["runs"].progress(storage.runs.get_run(run_id))[
            "waiting"
        ]
        assert (waiting["on"], waiting["stage"], waiting["total"]) == (
            "batch",
            "waiting",
            40,
        )
        app.extensions["runs"].cancel(storage.runs.get_run(run_id))
        wait_for(app, run_id)
        url = f"{server.url}/batches/{made[0].batch_id}"
        wait_until(
            lambda: (
                requests.get(url, timeout=10).json()["status"]
                in ("cancelling", "cancelled")
            )
        )


def test_a_restart_of_the_app_picks_up_its_batch(tmp_path):
    """The batch is at the provider when the app (web and worker) stops; a
    new app on the same database reads it, sending nothing twice."""
    with ScriptedJudge(batch_seconds=4.0) as server:
        config = {
            **base_config(tmp_path),
            "REDIS_URL": None,
            "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
            "EMBEDDED_WORKER": "process",
            "JUDGE_API_URL": server.url,
            "JUDGE_MODEL": "scripted",
            "JUDGE_BATCH_FIRST_POLL_S": 0.2,
        }
        first = create_test_app(config)
        # three sessions: 60 lines in the one batch (the size is not the point)
        path = crafted.write(tmp_path / "r.jsonl", sessions()[:3])
        run_id = submit(first, path, server, suites=["alignment"], batch=True)
        storage = first.extensions["storage"]
        wait_until(lambda: [b for b in storage.batches.batches(run_id) if b.batch_id])
        stop_abruptly(first)
        assert storage.runs.get_run(run_id).status == "running"
        second = create_test_app(config)
        try:
            second.extensions["runs"].enqueue()
            document = wait_for(second, run_id)
        finally:
            second.extensions["watchdog"].stop()
            second.extensions["worker"].stop()
    assert document["run"]["status"] == "done"
    made = [(b.round, b.part, b.batch_id) for b in storage.batches.batches(run_id)]
    assert server.state.batch_lines == 60, made  # the one batch, not sent again
    assert server.state.online_requests == 0


def stop_abruptly(app) -> None:
    """The app's process ends: its worker is killed, nothing is cancelled."""
    supervisor = app.extensions["worker"]
    app.extensions["watchdog"].stop()
    with supervisor._lock:  # not restarted: the app is gone with it
        supervisor._stopping = True
    os.kill(supervisor.pid, signal.SIGKILL)
    supervisor.stop()


def wait_until(found, timeout: float = 120.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = found()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("not reached in time")


@pytest.fixture
def deployment_env():
    return {"JUDGE_BATCH_FIRST_POLL_S": "0.2"}


def test_a_batch_run_in_each_deployment(deployment, tmp_path):
    """The supervised worker on SQLite, and a Celery worker on Redis with
    PostgreSQL (the answers' upserts, the claims): the same run, 0 online."""
    app = deployment.app
    path = crafted.write(tmp_path / "d.jsonl", sessions()[:3])
    with ScriptedJudge(batch_seconds=1.0) as server:
        run_id = submit(app, path, server, suites=["alignment"], batch=True)
        document = wait_for(app, run_id)
    assert document["run"]["status"] == "done"
    assert server.state.batch_lines == 60 and server.state.online_requests == 0
    assert len(app.extensions["storage"].batches.batches(run_id)) == 1


def test_a_batch_run_of_a_file_judged_online_reuses_its_rows(
    app_factory, server, tmp_path
):
    """The rows do not depend on how the judge was asked: a finished online
    run of the same file and settings is reused, and nothing is sent."""
    app = judge_app(app_factory, server)
    path = crafted.write(tmp_path / "again.jsonl", sessions()[:2])
    online = wait_for(app, submit(app, path, server, suites=["alignment"]))
    asked = server.state.online_requests
    batched = wait_for(app, submit(app, path, server, suites=["alignment"], batch=True))
    run = app.extensions["storage"].runs.get_run(batched["run"]["id"])
    assert run.reused_from == online["run"]["id"]
    assert server.state.online_requests == asked and server.state.batch_lines == 0
    assert scores(batched) == scores(online)


def test_a_batch_whose_id_was_lost_is_found_not_sent_again(
    app_factory, server, tmp_path
):
    """A step that made the provider's batch and died before storing its id:
    the next finds the batch of its uploaded file instead of making another."""
    from pipeline.batch import batch_files

    app = judge_app(app_factory, server)
    path = crafted.write(tmp_path / "lost.jsonl", sessions()[:1])
    service = app.extensions["runs"]
    with path.open("rb") as stream:  # made, never queued: no worker takes it
        run = service.create(
            stream,
            path.name,
            RunRequest(
                judge_url=server.url,
                judge_model="scripted",
                suites=["alignment"],
                batch=True,
            ),
        )
    storage = app.extensions["storage"]
    found = [
        (
            f"id{n}",
            {
                "model": "scripted",
                "messages": [{"role": "user", "content": f"[[al={n}]]"}],
            },
        )
        for n in range(3)
    ]
    batch_files.send(storage, app.config, run, 1, "scripted", found)
    (made,) = storage.batches.batches(run.id)
    storage.batches.update_batch(made.id, batch_id=None)  # the id lost
    batch_files.send(storage, app.config, run, 1, "scripted", found)
    (again,) = storage.batches.batches(run.id)
    assert again.batch_id == made.batch_id and len(server.batches.batches) == 1
    assert server.state.batch_lines == 3


def test_a_run_cancelled_while_its_batch_is_sent_cancels_that_batch(
    app_factory, tmp_path, monkeypatch
):
    """The finalizer cancels the batches it finds; one made after it looked
    (the run cancelled while the step was sending) is cancelled by the step."""
    from pipeline.batch import batch_files, steps

    with ScriptedJudge(batch_seconds=600) as server:
        app = judge_app(app_factory, server)
        path = crafted.write(tmp_path / "late.jsonl", sessions()[:1])
        with path.open("rb") as stream:  # made, never queued: the step is called here
            run = app.extensions["runs"].create(
                stream,
                path.name,
                RunRequest(
                    judge_url=server.url,
                    judge_model="scripted",
                    suites=["alignment"],
                    batch=True,
                ),
            )
        storage = app.extensions["storage"]
        send = batch_files.send

        def send_then_cancelled(*args, **kwargs):
            send(*args, **kwargs)
            storage.runs.set_status(run.id, "cancelled")

        monkeypatch.setattr(batch_files, "send", send_then_cancelled)
        steps.take_step(storage, app.config, run.id)
        (made,) = storage.batches.batches(run.id)
        url = f"{server.url}/batches/{made.batch_id}"
        assert requests.get(url, timeout=10).json()["status"] in (
            "cancelling",
            "cancelled",
        )


def test_tokens_are_counted_once_per_line_the_provider_answered(
    app_factory, server, tmp_path
):
    """Items that ask the same request share one line of the batch; the
    tokens the provider billed for it are counted once (they were counted
    per item reading the answer: 40 items' worth for 30 lines)."""
    app = judge_app(app_factory, server)
    path = crafted.write(tmp_path / "dup.jsonl", crafted.alignment_sessions())
    document = wait_for(
        app, submit(app, path, server, suites=["alignment"], batch=True)
    )
    used = document["judge_usage"]["scripted"]
    billed = server.state.reported.by_model["scripted"]
    assert used["batch_calls"] == server.state.batch_lines < 40  # duplicates share
    for name in ("prompt_tokens", "completion_tokens"):
        assert used[name] == used[f"batch_{name}"] == billed[name]
    assert document["run"]["counts"]["prompt_tokens"] == billed["prompt_tokens"]
