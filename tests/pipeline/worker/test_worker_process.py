"""Embedded mode's worker process (pipeline/worker/worker_process.py): a Celery
worker on the local broker, off the web process, at a lower priority,
restarted when it dies, one per instance, gone when the web process goes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import crafted
from tests.pipeline_support import base_config, submit, wait_for
from tests.services import SUBPROCESS_DEADLINE_S

ROOT = Path(__file__).resolve().parents[3]
# The worker runs at nice 10: beside busy processes its runs take far longer
# than the suite's 300 s per-test ceiling allows for.
pytestmark = pytest.mark.timeout(1500)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split()[2] != "Z"  # not a zombie


def test_runs_are_evaluated_in_a_lower_priority_process(worker_process_app, tmp_path):
    app = worker_process_app
    path = crafted.write(tmp_path / "q.jsonl", crafted.alignment_sessions())
    document = wait_for(app, submit(app, path, None, suites=["quality"]))
    assert document["run"]["status"] == "done" and document["rows"]
    supervisor = app.extensions["worker"]
    assert supervisor.pid not in (None, os.getpid())
    assert os.getpriority(os.PRIO_PROCESS, supervisor.pid) >= 10
    # the settings (secret key, judge key) reached it without a file left behind
    assert supervisor.config_path is not None
    assert not supervisor.config_path.exists()
    pid = supervisor.pid
    supervisor.stop()
    assert not alive(pid)


def test_a_killed_worker_is_restarted_and_the_run_completes(
    worker_process_app, judge_server, tmp_path
):
    app = worker_process_app
    judge_server.state.latency = 0.05
    path = crafted.write(tmp_path / "a.jsonl", crafted.alignment_sessions())
    run_id = submit(app, path, judge_server, suites=["alignment"])
    storage, supervisor = app.extensions["storage"], app.extensions["worker"]
    deadline = time.monotonic() + 600
    while storage.runs.get_run(run_id).done == 0:
        assert time.monotonic() < deadline, "no progress"
        time.sleep(0.05)
    first = supervisor.pid
    os.kill(first, signal.SIGKILL)  # mid-run
    document = wait_for(app, run_id, timeout=600)
    assert document["run"]["status"] == "done"
    assert supervisor.restarts == 1 and supervisor.pid not in (None, first)
    scored = [r for r in document["rows"] if r["metric"] == "al"]
    assert scored and {r["status"] for r in scored} == {"ok"}
    keys = [(r["session_id"], r["round"], r["method"], r["metric"]) for r in scored]
    assert len(keys) == len(set(keys))


def test_the_worker_ends_when_the_web_process_dies(tmp_path):
    settings = {
        **base_config(tmp_path),
        "EMBEDDED_WORKER": "process",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'd.sqlite3'}",
    }
    script = (
        "import os, sys\n"
        "from app import create_app\n"
        f"app = create_app({settings!r})\n"
        "app.extensions['worker'].ensure_started()\n"
        "print(app.extensions['worker'].pid, flush=True)\n"
        "os._exit(0)\n"  # no clean-up: as a crash or a kill would
    )
    web = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        timeout=SUBPROCESS_DEADLINE_S,
        capture_output=True,
        text=True,
    )
    pid = int(web.stdout.split()[-1])
    deadline = time.monotonic() + 30
    while alive(pid):
        assert time.monotonic() < deadline, "the worker outlived the web process"
        time.sleep(0.2)


def test_the_cli_evaluate_starts_the_worker_process(app_factory, tmp_path):
    app = app_factory(EMBEDDED_WORKER="process")
    supervisor = app.extensions["worker"]
    out = tmp_path / "r.json"
    result = app.test_cli_runner().invoke(
        args=[
            "evaluate",
            str(ROOT / "sample_data.jsonl"),
            "--suite",
            "quality",
            "--out",
            str(out),
            "--concurrency",
            "3",
        ]
    )
    assert result.exit_code == 0, result.output
    assert supervisor.pid not in (None, os.getpid())
    assert out.stat().st_size > 0


def test_a_commands_worker_keeps_neither_the_lock_nor_its_stdout(tmp_path):
    """A command's worker is spawned, as a web process's is (issue 60 removed
    the forked worker): it runs the command's run, holds no descriptor of the
    instance lock (the lock ends with its supervisor), writes nothing on the
    command's stdout (the results document), and ends with the command."""
    settings = {
        **base_config(tmp_path),
        "EMBEDDED_WORKER": "process",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'd.sqlite3'}",
    }
    path = crafted.write(tmp_path / "q.jsonl", crafted.alignment_sessions())
    script = (
        "import json, os\n"
        "from app import create_app\n"
        "from tests.pipeline_support import submit, wait_for\n"
        f"app = create_app({settings!r})\n"
        "supervisor = app.extensions['worker']\n"
        "supervisor.ensure_started()\n"
        f"run = submit(app, __import__('pathlib').Path({str(path)!r}), None, "
        "suites=['quality'])\n"
        "status = wait_for(app, run)['run']['status']\n"
        "pid = supervisor.pid\n"
        "fds = [os.readlink(f'/proc/{pid}/fd/{fd}') for fd in os.listdir(f'/proc/{pid}/fd')]\n"
        "print(json.dumps({'pid': pid, 'status': status, 'fds': fds,\n"
        "    'parent': int(open(f'/proc/{pid}/stat').read().rsplit(')', 1)[1].split()[1]),\n"
        "    'cmdline': open(f'/proc/{pid}/cmdline').read()}))\n"
    )
    command = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        timeout=600,
        capture_output=True,
        text=True,
    )
    assert command.returncode == 0, command.stderr[-3000:]
    found = json.loads(command.stdout)  # the only line on stdout
    assert found["status"] == "done"
    assert "--worker" in found["cmdline"]  # spawned: python app.py --worker
    assert found["parent"] != os.getpid() and found["pid"] != found["parent"]
    assert not any(fd.endswith("queue.lock") for fd in found["fds"]), found["fds"]
    deadline = time.monotonic() + 60
    while alive(found["pid"]):
        assert time.monotonic() < deadline, "the worker outlived its command"
        time.sleep(0.2)


def test_the_first_request_starts_the_worker(app_factory):
    app = app_factory(EMBEDDED_WORKER="process")
    supervisor = app.extensions["worker"]
    assert supervisor.pid is None  # creating the app starts nothing
    app.test_client().get("/")
    assert supervisor.pid is not None


def test_one_worker_per_instance_and_the_next_supervisor_takes_over(app_factory):
    """A second app on the same instance (another gunicorn worker, a CLI
    command beside the server) starts no second worker; when the first
    stops, it starts one."""
    first = app_factory(EMBEDDED_WORKER="process").extensions["worker"]
    second = app_factory(EMBEDDED_WORKER="process").extensions["worker"]
    first.ensure_started()
    second.ensure_started()
    assert first.pid is not None and second.pid is None
    first.stop()
    deadline = time.monotonic() + 120
    while second.pid is None:
        assert time.monotonic() < deadline, "no worker took over"
        time.sleep(0.1)


def test_another_database_in_the_same_checkout_gets_a_worker_of_its_own(
    app_factory, tmp_path
):
    """Two processes of one instance folder on two databases: each has its
    own queue and worker (a second app on another DATABASE_URL waited
    forever, its tasks served against the first one's database)."""
    first = app_factory(EMBEDDED_WORKER="process")
    other = app_factory(
        EMBEDDED_WORKER="process",
        DATABASE_URL=f"sqlite:///{tmp_path / 'other.sqlite3'}",
    )
    assert first.config["QUEUE_FOLDER"] != other.config["QUEUE_FOLDER"]
    first.extensions["worker"].ensure_started()
    path = crafted.write(tmp_path / "o.jsonl", crafted.alignment_sessions())
    run_id = submit(other, path, None, suites=["quality"])
    assert wait_for(other, run_id, timeout=600)["run"]["status"] == "done"
    assert first.extensions["worker"].pid != other.extensions["worker"].pid


@pytest.mark.parametrize("value", ["process", "none"])
def test_the_setting_is_read_and_checked(value):
    import config

    assert config.from_environ({"EMBEDDED_WORKER": value})["EMBEDDED_WORKER"] == value
    with pytest.raises(config.ConfigError):
        config.from_environ({"EMBEDDED_WORKER": "thread"})


def test_the_watchdog_starts_with_the_worker(app_factory):
    """Before any chunk is sent: a restarted worker with nothing new to send
    must still take back what the dead one held."""
    from pipeline.worker.worker_process import begin

    app = app_factory()
    app.extensions["runs"].start_worker = None
    begin(app)
    watchdog = app.extensions["watchdog"]
    assert watchdog._thread is not None and watchdog._thread.is_alive()


def test_the_worker_process_loads_no_pages_and_no_commands(tmp_path):
    """``python app.py --worker`` runs tasks only: the web's and the CLI's
    modules were 0.15 s of its CPU before its first judge call (issue 61
    item 8). Its lifeline ends at once (stdin empty): it exits, and what it
    imported before serving is in ``-X importtime``'s lines."""
    settings = tmp_path / "worker.json"
    settings.write_text(json.dumps(base_config(tmp_path)))
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "app.py", "--worker", str(settings)],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_DEADLINE_S,
    )
    loaded = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    assert "pipeline.worker.worker_process" in loaded, done.stderr[-2000:]
    assert not loaded & {"web", "cli"}
    assert not settings.exists()  # read, then deleted: it holds the secret key


def test_the_worker_app_has_no_pages(tmp_path):
    """``create_app(serve=False)``: what tasks need (storage, queue, judge
    pool, watchdog), no routes but the static files' Flask adds."""
    from app import create_app

    worker = create_app(base_config(tmp_path), serve=False)
    assert {"storage", "queue", "judge_pool", "watchdog"} <= set(worker.extensions)
    assert [rule.endpoint for rule in worker.url_map.iter_rules()] == ["static"]
