"""Helpers shared by the end-to-end pipeline tests."""

from __future__ import annotations

import os
import signal
import time

from pipeline.service.runs import RunRequest
from tests import workers

# 2 s: no reply of the local scripted judge takes that long, even on a busy
# machine (0.5 s timed out under load, and a retried request counts as a
# call); its timeout fault sleeps longer (tests/conftest.py: judge_server)
FAST_JUDGE = {"JUDGE_TIMEOUT_S": 2.0, "JUDGE_MAX_RETRIES": 2, "JUDGE_CONCURRENCY": 4}


# The rate limits stay on in tests (their code runs on every request) but no
# test other than tests/web/security/test_limits.py should ever reach them.
GENEROUS_RATE_LIMITS = {
    "RATE_LIMIT_UPLOADS": "1000000 per hour",
    "RATE_LIMIT_VALIDATIONS": "1000000 per hour",
    "RATE_LIMIT_RETRIES": "1000000 per hour",
    "RATE_LIMIT_WORKSPACES": "1000000 per hour",
    "RATE_LIMIT_COMPARISONS": "1000000 per hour",
    "RATE_LIMIT_EXPLORE": "1000000 per hour",
    "RATE_LIMIT_JUDGE_CHECKS": "1000000 per hour",
}


def base_config(tmp_path) -> dict:
    return {
        "TESTING": True,
        "SECRET_KEY": "test",
        "INSTANCE_PATH": str(tmp_path / "instance"),
        "UPLOAD_FOLDER": str(tmp_path / "uploads"),
        "RESULTS_FOLDER": str(tmp_path / "results"),
        "JUDGE_API_URL": None,
        "JUDGE_MODEL": None,
        # the worker in the test's process (tests/worker_support.py); the
        # supervised child: tests/pipeline/worker/test_worker_process.py and the drills
        "EMBEDDED_WORKER": "none",
        **FAST_JUDGE,
        **GENEROUS_RATE_LIMITS,
    }


class RedisDeployment:
    def __init__(self, app, env, log_path):
        self.app, self.env, self.log_path = app, env, log_path
        self.workers = []

    def start_worker(self):
        self.workers.append(workers.start_worker(self.env, self.log_path))
        return self.workers[-1]

    def stop_all(self):
        for process in self.workers:
            workers.stop(process)


class Embedded:
    """The embedded default: the app supervises its worker process, which
    the supervisor restarts after a kill."""

    def __init__(self, app):
        self.app = app

    def kill_worker(self) -> None:
        supervisor = self.app.extensions["worker"]
        pid, restarts = supervisor.pid, supervisor.restarts
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 120
        while supervisor.restarts == restarts or supervisor.pid in (None, pid):
            assert time.monotonic() < deadline, "the worker was not restarted"
            time.sleep(0.05)


class Redis:
    """Team mode: a Celery worker on Redis; a new one is started by hand."""

    def __init__(self, deployment):
        self.app, self.deployment = deployment.app, deployment

    def kill_worker(self) -> None:
        workers.kill(self.deployment.workers[-1])
        self.deployment.start_worker()


def submit(app, path, judge, **options):
    request = RunRequest(
        judge_url=judge.url if judge else None,
        judge_model="scripted" if judge else None,
        **options,
    )
    service = app.extensions["runs"]
    with path.open("rb") as stream:
        run = service.create(stream, path.name, request)
    service.enqueue(run.id)
    return run.id


def wait_for(
    app, run_id, timeout=600.0, statuses=("done", "partial", "failed", "cancelled")
):
    storage = app.extensions["storage"]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = storage.runs.get_run(run_id)
        if run.status in statuses:
            return app.extensions["runs"].results_document(run)
        time.sleep(0.1)
    raise AssertionError(f"run {run_id} still {storage.runs.get_run(run_id).status}")


def evaluate(app, path, judge, **options):
    return wait_for(app, submit(app, path, judge, **options))
