"""Embedded mode: the web process dies mid-run (SIGKILL; its worker process
follows it); the next start's worker takes the unfinished run back and it
completes with every row exactly once."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from testing.judge_server import ScriptedJudge
from tests import crafted
from tests.pipeline.worker.test_worker_crash import sessions
from tests.pipeline_support import wait_for

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500)]  # a nice-10 worker
ROOT = Path(__file__).resolve().parents[3]

FIRST_LIFE = """
import sys, time
from app import create_app
from pipeline.service.runs import RunRequest
path = sys.argv[1]
app = create_app({"INSTANCE_PATH": sys.argv[2]})
service = app.extensions["runs"]
with open(path, "rb") as stream:
    run = service.create(stream, "crash.jsonl", RunRequest(suites=["alignment"]))
service.enqueue(run.id)
print(run.id, flush=True)
storage = app.extensions["storage"]
while storage.runs.get_run(run.id).done == 0:
    time.sleep(0.05)
print("progress", flush=True)
time.sleep(600)  # killed before this ends
"""


def test_unfinished_run_resumes_after_a_hard_restart(app_factory, tmp_path):
    path = crafted.write(tmp_path / "crash.jsonl", sessions())
    database = f"sqlite:///{tmp_path / 'restart.sqlite3'}"
    with ScriptedJudge(latency=0.05) as judge:
        env = {
            **os.environ,
            "DATABASE_URL": database,
            "UPLOAD_FOLDER": str(tmp_path / "uploads"),
            "SECRET_KEY": "test",
            "JUDGE_API_URL": judge.url,
            "JUDGE_MODEL": "scripted",
            "JUDGE_CONCURRENCY": "2",
            "CHUNK_UNITS": "10",
        }
        env.pop("REDIS_URL", None)
        first = subprocess.Popen(
            [sys.executable, "-c", FIRST_LIFE, str(path), str(tmp_path / "instance")],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            run_id = first.stdout.readline().strip()
            assert first.stdout.readline().strip() == "progress"
        finally:
            first.kill()  # SIGKILL: no shutdown, queued tasks vanish with the process
            first.wait(timeout=10)
            first.stdout.close()
        app = app_factory(
            DATABASE_URL=database,
            UPLOAD_FOLDER=str(tmp_path / "uploads"),
            JUDGE_API_URL=judge.url,
            JUDGE_MODEL="scripted",
            CHUNK_UNITS=10,
            EMBEDDED_WORKER="process",
            INSTANCE_PATH=str(tmp_path / "instance"),  # the first life's
        )
        storage = app.extensions["storage"]
        before = storage.runs.get_run(run_id)
        assert before.status == "running" and 0 < before.done < before.total
        app.test_client().get("/")  # serving starts its worker: it resumes
        document = wait_for(app, run_id, timeout=600)
    assert document["run"]["status"] == "done"
    keys = [
        (r["session_id"], r["round"], r["method"], r["metric"])
        for r in document["rows"]
    ]
    # al, its five dimensions, binary and the response's length
    assert len(keys) == len(set(keys)) == 12 * 5 * 2 * 8
    run = storage.runs.get_run(run_id)
    assert run.done == run.total
    assert document["summary"]["Ours"]["al_slope"] == pytest.approx(10.0)
