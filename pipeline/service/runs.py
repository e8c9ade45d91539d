"""The run service: creating, queueing, cancelling, retrying and resuming
runs, and their results document. The one path shared by the web pages, the
API and the CLI (its judge budget: ``pipeline/service/run_budget.py``).

It takes the storage, the configuration and the queue explicitly (no Flask
application context) and sends tasks by name, so it never imports them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Protocol, cast

import dataset
from core.problems import Rejected
from core.status import ACTIVE_RUN, RETRYABLE_RUN, BatchStage
from dataset.limits import Limits
from metrics import basis, registry, results, stats
from pipeline import stalls
from pipeline.dispatch import dispatch, fail_run, plan_from_upload, plan_run
from pipeline.progress import run_progress
from pipeline.service import kept_uploads, reuse
from pipeline.service.run_budget import RunBudget
from pipeline.service.run_request import (
    RunRequest,
    check_file_name,
    checked_families,
    checked_suite_options,
    choose_suites,
    estimate_options,
    judge_options,
    protocol_of,
    public_judge,
    unstorable,
)
from store.uploads import adopt_kept, store_upload, upload_path

if TYPE_CHECKING:
    from store import StorageLike
    from store.models import Run

# ``on_valid(report)``: called once an upload is valid (see ``create``)
OnValid = Callable[[dataset.ValidationReport], object]


class TaskQueue(Protocol):  # pipeline.worker.queue.Queue, never imported here
    def send(self, task_name: str, *args: Any) -> None: ...


# the request lives in run_request
__all__ = ["RunRequest", "RunService", "protocol_of"]

log = logging.getLogger(__name__)
# a run whose requests wait this long each, on average, for the judge's
# rate limits says so on its progress page
PACED_NOTICE_S = 0.1


class RunService(RunBudget):
    def __init__(
        self,
        storage: StorageLike,
        config: dict[str, Any],
        queue: TaskQueue | None,
        broker_check: Callable[[], object] | None = None,
    ) -> None:
        self.storage = storage
        self.config = config
        self.queue = queue
        # Team mode: called before a run is recorded, so a run is refused
        # (503) rather than recorded while the broker cannot take its tasks.
        self.broker_check = broker_check
        # Embedded mode: makes sure the worker process runs (it takes back
        # what was in flight when it starts, so it starts before any claim).
        self.start_worker: Callable[[], None] | None = None

    # -- validation ----------------------------------------------------------
    def validation_options(self, request: RunRequest | None = None) -> dict[str, Any]:
        """``request``: the run asked for, whose protocol the estimates
        count the judge modes of (none: the default protocol's)."""
        return {
            "max_line_bytes": self.config["MAX_LINE_MB"] * 1024 * 1024,
            "max_errors": self.config["MAX_VALIDATION_ERRORS"],
            "suites": registry.suites(),
            "limits": Limits.from_config(self.config),
            "history_chars": self.config["JUDGE_HISTORY_CHARS"],
            "run_options": estimate_options(request),
        }

    def validate(
        self, stream: BinaryIO, filename: str, request: RunRequest | None = None
    ) -> dataset.ValidationReport:
        options = self.validation_options(request)
        return dataset.validate_stream(stream, filename, **options)

    def validate_file(
        self,
        path: str | Path,
        filename: str | None = None,
        collect_spans: bool = False,
        request: RunRequest | None = None,
    ) -> dataset.ValidationReport:
        options = self.validation_options(request)
        return dataset.validate_file(
            path, filename, collect_spans=collect_spans, **options
        )

    # -- creating runs -------------------------------------------------------
    def create(
        self,
        stream: BinaryIO,
        filename: str,
        request: RunRequest,
        on_valid: OnValid | None = None,
    ) -> Run:
        """Store, validate, record and plan a run (``queued``); not yet sent.
        A rejected upload leaves no file behind. ``on_valid(report)``: called
        once the file is valid, before the run is recorded (the CLI prints
        its estimate; it may raise ``Rejected``)."""
        if not dataset.has_allowed_extension(filename):
            raise Rejected(self.validate(stream, filename).errors)
        check_file_name(filename)
        try:
            upload_id, path, sha256 = store_upload(stream, self.config["UPLOAD_FOLDER"])
        except OSError as exc:  # the disk is full: say so, keep nothing
            raise unstorable(exc) from None
        return self._recorded(path, upload_id, sha256, filename, request, on_valid)

    def _recorded(
        self,
        path: Path,
        upload_id: str,
        sha256: str,
        filename: str,
        request: RunRequest,
        on_valid: OnValid | None = None,
    ) -> Run:
        """:meth:`_record`; a rejected upload leaves no file behind."""
        try:
            return self._record(path, upload_id, sha256, filename, request, on_valid)
        except BaseException:
            path.unlink(missing_ok=True)
            raise

    def keep(self, stream: BinaryIO, filename: str, client: str) -> str:
        """Keep a checked upload of ``client`` for the run it may become (its
        reference); Rejected over the kept uploads' budget or on a full disk."""
        return kept_uploads.keep(self.config, stream, filename, client)

    def submit_kept(self, ref: str, request: RunRequest) -> Run:
        """Create and enqueue a run of a kept upload (:meth:`keep`)."""
        upload_id, sha256, filename = kept_uploads.resolve(self.config, ref)
        try:
            path = adopt_kept(self.config["UPLOAD_FOLDER"], upload_id)
        except FileNotFoundError:  # taken by a run already, or swept
            raise Rejected.one("upload_expired", path="upload_ref") from None
        except OSError as exc:
            raise unstorable(exc) from None
        return self._enqueue_or_fail(
            self._recorded(path, upload_id, sha256, filename, request)
        )

    def _record(
        self,
        path: Path,
        upload_id: str,
        sha256: str,
        filename: str,
        request: RunRequest,
        on_valid: OnValid | None = None,
    ) -> Run:
        report = self.validate_file(path, filename, collect_spans=True, request=request)
        if not report.valid:
            raise Rejected(report.errors)
        if on_valid is not None:
            on_valid(report)
        suites = choose_suites(report, request.suites)
        options = {
            **checked_suite_options(suites, request.options),
            **judge_options(self.config, request),
        }
        judge = public_judge(self.config, suites, options)
        families = checked_families(
            request.families, report.methods, (judge or {}).get("models") or []
        )
        self._check_budget(report, suites, options, request.workspace_id, judge)
        self._check_broker()
        scope = request.workspace_id or f"client:{request.client or ''}"
        key = reuse.reuse_key(
            sha256, suites, judge, options, self.config, scope, families
        )
        workspace_id = request.workspace_id
        if workspace_id is None and request.new_workspace:
            workspace_id = self.storage.workspaces.create_workspace().id
        fields = dict(
            file_name=filename,
            file_sha256=sha256,
            upload_id=upload_id,
            sessions=report.sessions,
            rounds=report.rounds,
            methods=report.methods,
            suites=suites,
            judge=judge,
            options=options,
            reuse_key=key,
            client=request.client,
            workspace_id=workspace_id,
            name=request.name,
            families=families,
        )
        source = reuse.find_source(self.storage, sha256, key) if key else None
        if source is not None:  # identical inputs, same code: the same rows
            copied = reuse.reuse(self.storage, source, report.spans, **fields)
            return cast("Run", self.storage.runs.get_run(copied))  # just stored
        run = self.storage.runs.create_run(**fields)
        try:
            if options["batch"] and judge is not None:
                # before its chunks exist: none may go out online first
                self.storage.batches.begin(run.id)
            plan_run(self.storage, self.config, run, report.spans)
        except Exception as exc:  # recorded, never left queued
            log.exception("planning run %s failed", run.id)
            fail_run(self.storage, run.id, "planning_failed", detail=type(exc).__name__)
            raise
        return cast("Run", self.storage.runs.get_run(run.id))  # just stored

    def submit(
        self,
        stream: BinaryIO,
        filename: str,
        request: RunRequest,
        on_valid: OnValid | None = None,
    ) -> Run:
        """Create and enqueue a run; a broker outage fails it visibly (503).
        ``on_valid``: see :meth:`create`."""
        return self._enqueue_or_fail(self.create(stream, filename, request, on_valid))

    def enqueue(self, run_id: str | None = None) -> int:
        """Hand the chunks that may run now to the workers: the run's, and
        any others waiting."""
        if self.start_worker is not None:
            self.start_worker()
        queue = cast("TaskQueue", self.queue)  # the app sets it (queue.init_app)
        return dispatch(self.storage, self.config, queue.send)

    def wake(self) -> None:
        """Hand out waiting work (e.g. a comparison just asked for). With the
        broker down it waits: the watchdog sends it again later."""
        try:
            self.enqueue()
        except _broker_errors() as exc:
            log.warning("queue unavailable: %s", type(exc).__name__)

    def _check_broker(self) -> None:
        if self.broker_check is None:
            return
        try:
            self.broker_check()
        except _broker_errors() as exc:
            log.info("queue unavailable: %s", type(exc).__name__)
            raise Rejected.one("queue_unavailable", http=503) from None

    def _enqueue_or_fail(self, run: Run) -> Run:
        try:
            self.enqueue(run.id)
        except _broker_errors() as exc:
            log.warning("queue unavailable: %s", type(exc).__name__)
            fail_run(self.storage, run.id, "queue_unavailable")
            raise Rejected.one("queue_unavailable", http=503) from None
        return run

    def judge_options(self, request: RunRequest) -> dict[str, Any]:
        """The judge a request would use (the model checked as for a run)."""
        return judge_options(self.config, request)

    # -- changing runs -------------------------------------------------------
    def cancel(self, run: Run) -> bool:
        """Queued chunks see the status and skip; every row stored so far is
        kept and summarized (``pipeline/worker/interim.py``). False if final."""
        if not self.storage.runs.cancel_run(run.id):
            return False
        self.wake()
        return True

    def retry_failed(self, run: Run) -> Run:
        """A new run of the same stored upload and settings. The finished run
        stays as it is (share links show immutable results); in the new one
        every verdict that succeeded comes from the cache, so only the failed
        items reach the judge."""
        if run.status not in RETRYABLE_RUN:
            raise Rejected.one("retry_not_needed", http=409, status=run.status)
        if self.storage.runs.active_retries(run.id):
            raise Rejected.one("retry_in_progress", http=409)
        self._check_broker()
        retry = self.storage.runs.create_run(
            file_name=run.file_name,
            file_sha256=run.file_sha256,
            upload_id=run.upload_id,
            sessions=run.sessions,
            rounds=run.rounds,
            methods=run.methods,
            suites=run.suites,
            judge=run.judge,
            options={**run.options, "use_cache": True},
            call_cap=self._calls_left(run),
            client=run.client,
            retry_of=run.id,
            workspace_id=run.workspace_id,
            name=run.name,
            tags=run.tags,
            families=run.families,
        )
        plan_from_upload(self.storage, self.config, retry)
        stored = cast("Run", self.storage.runs.get_run(retry.id))  # just stored
        return self._enqueue_or_fail(stored)

    # -- reading runs --------------------------------------------------------
    def upload_path(self, run: Run) -> Path:
        return upload_path(self.config["UPLOAD_FOLDER"], run.upload_id)

    def progress(self, run: Run) -> dict[str, Any]:
        """Done/total units and estimates (``pipeline/progress.py``), and
        what the run waits on (``waiting``)."""
        found = run_progress(run)
        found["waiting"] = self._waiting(run) if run.status in ACTIVE_RUN else None
        found["stalled"] = stalls.describe(run, self.config)
        return found

    def _waiting(self, run: Run) -> dict[str, Any] | None:
        """A batch-mode run's batch at the provider, or the judge's rate
        limits when its requests wait on them (``paced_ms``: on average at
        least ``PACED_NOTICE_S`` each before they are sent)."""
        batch = self.storage.batches.progress(run.id)
        if batch is not None and batch["stage"] != BatchStage.ANSWERED:
            return {"on": "batch", **batch}
        used = self.storage.progress.judge_usage(run.id).values()
        calls = sum(model.get("calls", 0) for model in used)
        paced_s = sum(model.get("paced_ms", 0) for model in used) / 1000
        if not calls or paced_s / calls < PACED_NOTICE_S:
            return None
        return {"on": "rate_limit", "mean_wait_s": round(paced_s / calls, 1)}

    def results_head(
        self, run: Run, min_effect: float | None = None, holm: str = "metric"
    ) -> dict[str, Any]:
        """The results document without its rows (cheap at any run size);
        with ``min_effect``, each comparison also says the sessions needed
        to detect it (``stats.add_min_effect``); ``holm`` is the Holm family
        of ``delta_p_holm`` (``basis.with_holm_family``)."""
        counts = self.storage.rows.run_status_counts(run)
        head = results.head(run, counts, self.storage.progress.judge_usage(run.id))
        if min_effect is not None and head.get("comparisons"):
            head["comparisons"] = stats.add_min_effect(head["comparisons"], min_effect)
        return basis.with_holm_family(head, holm)

    def results_chunks(
        self,
        run: Run,
        indent: int | None = None,
        min_effect: float | None = None,
        holm: str = "metric",
    ) -> Iterator[str]:
        """The whole results document as JSON text, rows streamed from the
        database: what the CLI's ``--out``, the JSON export and
        ``/api/v1/runs/<token>/results`` write."""
        head = self.results_head(run, min_effect, holm)
        opening = results.json_opening(head, indent)
        rows = self.storage.rows.iter_rows(run.id, detail=False)
        return chain([opening], results.json_rows(rows))

    def results_document(
        self, run: Run, min_effect: float | None = None, holm: str = "metric"
    ) -> dict[str, Any]:
        """The whole document in memory (tests and small runs)."""
        counts = self.storage.rows.run_status_counts(run)
        used = self.storage.progress.judge_usage(run.id)
        found = results.build(run, self.storage.rows.iter_rows(run.id), counts, used)
        if min_effect is not None and found.get("comparisons"):
            found["comparisons"] = stats.add_min_effect(
                found["comparisons"], min_effect
            )
        return basis.with_holm_family(found, holm)


def _broker_errors() -> tuple[type[Exception], ...]:
    """What a publish raises when the broker cannot be reached."""
    from kombu.exceptions import OperationalError
    from redis.exceptions import RedisError

    return OperationalError, RedisError, OSError
