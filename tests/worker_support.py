"""The tests' embedded worker: the same Celery worker the app's worker
process runs (threads pool, the local broker, ``worker_process.begin`` when
it is built), but in the test's own process, so a test that creates an app per
case does not pay a process start each time. Most tests use it
(``EMBEDDED_WORKER=none``); tests/pipeline/worker/test_worker_process.py and the drills
run the supervised child the product starts."""

from __future__ import annotations

import threading
from typing import Any

from jinja2.bccache import Bucket, BytecodeCache


class InProcessWorker:
    """Started once, on the app's first task (as the supervisor does)."""

    def __init__(self, app):
        self.app = app
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._worker: Any = None  # celery's WorkController (celery ships no types)
        self._stopping = False
        self._started = False

    def ensure_started(self) -> None:
        if self._started or self._stopping:
            return  # the common case, without the lock: called on every enqueue
        with self._lock:
            if self._started or self._stopping:
                return
            self._started = True  # begin() enqueues, which calls this again
            # built: worker_init runs worker_process.begin (its first sweep)
            self._worker = self.app.extensions["queue"].celery.WorkController(
                pool="threads",
                concurrency=self.app.config["EMBEDDED_WORKER_THREADS"],
                loglevel="WARNING",
                without_heartbeat=True,
                without_gossip=True,
                without_mingle=True,
            )
            self._thread = threading.Thread(
                target=self._worker.start, name="test-celery-worker", daemon=True
            )
            self._thread.start()

    def stop(self) -> None:
        """Stop the worker and wait for its tasks (not under the lock: a task
        finishing meanwhile may send another). A later enqueue starts a new
        one, which takes back what this one left, as after a restart."""
        with self._lock:
            worker, thread = self._worker, self._thread
            self._stopping = True
        try:
            if worker is not None:
                worker.stop(in_sighandler=False)
            if thread is not None:
                thread.join(timeout=10)
        finally:
            with self._lock:
                self._worker = self._thread = None
                self._started = self._stopping = False


def attach(app) -> InProcessWorker | None:
    """Give an embedded app built with ``EMBEDDED_WORKER=none`` its
    in-process worker, started by its first enqueue."""
    if app.config.get("REDIS_URL") or app.config["EMBEDDED_WORKER"] != "none":
        return None
    worker = app.extensions["test_worker"] = InProcessWorker(app)
    app.extensions["runs"].start_worker = worker.ensure_started
    return worker


def create_test_app(settings: dict):
    """``create_app``, with the tests' worker attached when it is embedded,
    on a database that already has the schema (tests/schema_support.py)."""
    from app import create_app
    from tests import schema_support

    schema_support.prepare_for_app(settings)
    app = create_app(settings)
    app.jinja_env.bytecode_cache = COMPILED_TEMPLATES
    attach(app)
    return app


class CompiledTemplates(BytecodeCache):
    """Jinja's compiled templates, kept for every app of the test process.

    Each app has its own Jinja environment, which compiles each template it
    renders once; with an app per test that was every test's first pages
    (12% of test_batch_output's busy samples, py-spy). Jinja checks each
    stored compilation against the template's source (a changed template
    compiles again); the apps are all ``create_app``'s, with the same
    extensions and autoescaping, so one compilation serves them all."""

    def __init__(self) -> None:
        self.compiled: dict[str, bytes] = {}

    def load_bytecode(self, bucket: Bucket) -> None:
        if (code := self.compiled.get(bucket.key)) is not None:
            bucket.bytecode_from_string(code)

    def dump_bytecode(self, bucket: Bucket) -> None:
        self.compiled[bucket.key] = bucket.bytecode_to_string()


COMPILED_TEMPLATES = CompiledTemplates()


def stop_worker(app) -> None:
    """Stop whichever worker this app started (none in team mode)."""
    for name in ("test_worker", "worker"):
        if app.extensions.get(name) is not None:
            app.extensions[name].stop()
