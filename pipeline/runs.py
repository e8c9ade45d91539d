"""The run service: creating, queueing, cancelling, retrying and resuming
runs, and their results document. The one path shared by the web pages, the
API and the CLI.

It takes the storage, the configuration and the queue explicitly (no Flask
application context) and sends tasks by name, so it never imports them.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import dataset
from core.problems import Problem, Rejected
from core.status import ACTIVE_RUN, RETRYABLE_RUN, RunStatus
from evaluator import JudgeConfig
from metrics import registry, results
from store.uploads import store_upload, upload_path

log = logging.getLogger(__name__)


@dataclass
class RunRequest:
    suites: list[str] | None = None  # None: every suite the file can run
    judge_url: str | None = None  # CLI only: never accepted from the web (SSRF)
    judge_model: str | None = None
    samples: int = 1
    concurrency: int | None = None
    use_cache: bool = True
    options: dict[str, Any] = field(default_factory=dict)  # suite options by name


class RunService:
    def __init__(self, storage, config: dict, queue, broker_check=None):
        self.storage = storage
        self.config = config
        self.queue = queue
        # Team mode: called before a run is recorded; resumes the unfinished
        # runs if the broker lost its tasks (see pipeline/resume.py).
        self.broker_check = broker_check

    # -- validation ----------------------------------------------------------
    def validation_options(self) -> dict:
        return {
            "max_line_bytes": self.config["MAX_LINE_MB"] * 1024 * 1024,
            "max_errors": self.config["MAX_VALIDATION_ERRORS"],
            "suites": registry.suites(),
        }

    def validate(self, stream: BinaryIO, filename: str) -> dataset.ValidationReport:
        return dataset.validate_stream(stream, filename, **self.validation_options())

    def validate_file(self, path, filename: str | None = None):
        return dataset.validate_file(path, filename, **self.validation_options())

    # -- creating runs -------------------------------------------------------
    def create(self, stream: BinaryIO, filename: str, request: RunRequest):
        """Store, validate and record a run (status ``queued``); not yet enqueued."""
        if not dataset.has_allowed_extension(filename):
            raise Rejected(self.validate(stream, filename).errors)
        folder = self.config["UPLOAD_FOLDER"]
        upload_id, path, sha256 = store_upload(stream, folder)
        report = self.validate_file(path, filename)
        if not report.valid:
            path.unlink(missing_ok=True)
            raise Rejected(report.errors)
        try:
            suites = _choose_suites(report, request.suites)
            options = {
                **_suite_options(suites, request.options),
                **_run_options(request),
            }
            self._check_broker()
        except Rejected:
            path.unlink(missing_ok=True)
            raise
        judge = self.public_judge(suites, options)
        return self.storage.create_run(
            file_name=filename,
            file_sha256=sha256,
            upload_id=upload_id,
            sessions=report.sessions,
            rounds=report.rounds,
            methods=report.methods,
            suites=suites,
            judge=judge,
            options=options,
        )

    def public_judge(self, suites: list[str], options: dict) -> dict | None:
        """What results may show of the judge: model, sampling, prompt versions."""
        used = [registry.get(name) for name in suites if registry.get(name).uses_judge]
        config = JudgeConfig.from_settings(self.config, options)
        if config is None or not used:
            return None  # nothing of this run asks the judge
        prompts = {
            mode: version for suite in used for mode, version in suite.prompts.items()
        }
        return {**config.public(), "prompts": prompts}

    def submit(self, stream: BinaryIO, filename: str, request: RunRequest):
        """Create and enqueue a run; a broker outage fails it visibly (503)."""
        return self._enqueue_or_fail(self.create(stream, filename, request))

    def enqueue(self, run_id: str) -> None:
        """Hand the run to the workers (starting the embedded one if that is us)."""
        self.queue.start_run(run_id)

    def _check_broker(self) -> None:
        if self.broker_check is None:
            return
        try:
            self.broker_check()
        except _broker_errors() as exc:
            log.info("queue unavailable: %s", type(exc).__name__)
            raise Rejected.one("queue_unavailable", http=503) from None

    def _enqueue_or_fail(self, run):
        try:
            self.enqueue(run.id)
        except _broker_errors() as exc:
            error = f"queue unavailable: {type(exc).__name__}"
            self.storage.set_status(run.id, RunStatus.FAILED, error=error)
            raise Rejected.one("queue_unavailable", http=503) from None
        return run

    # -- changing runs -------------------------------------------------------
    def cancel(self, run) -> bool:
        """Queued chunks see the status and skip; False if already final."""
        current = self.storage.get_run(run.id)
        if current is None or current.status not in ACTIVE_RUN:
            return False
        self.storage.set_status(run.id, RunStatus.CANCELLED)
        return True

    def retry_failed(self, run):
        """A new run of the same stored upload and settings. The finished run
        stays as it is (share links show immutable results); in the new one
        every verdict that succeeded comes from the cache, so only the failed
        items reach the judge."""
        if run.status not in RETRYABLE_RUN:
            raise Rejected.one("retry_not_needed", http=409, status=run.status)
        options = {key: value for key, value in run.options.items() if key != "chunks"}
        self._check_broker()
        retry = self.storage.create_run(
            file_name=run.file_name,
            file_sha256=run.file_sha256,
            upload_id=run.upload_id,
            sessions=run.sessions,
            rounds=run.rounds,
            methods=run.methods,
            suites=run.suites,
            judge=run.judge,
            options={**options, "use_cache": True, "retry_of": run.token},
        )
        return self._enqueue_or_fail(retry)

    def resume_unfinished(self, created_before=None) -> int:
        """Re-send unfinished runs after a restart (finished chunks are
        skipped); with ``created_before`` (a datetime), only older runs."""
        pending = self.storage.unfinished_runs(created_before)
        for run in pending:
            self.enqueue(run.id)
        if pending:
            log.info("resumed %d unfinished run(s)", len(pending))
        return len(pending)

    # -- reading runs --------------------------------------------------------
    def upload_path(self, run):
        return upload_path(self.config["UPLOAD_FOLDER"], run.upload_id)

    def results_document(self, run) -> dict:
        counts = self.storage.run_status_counts(run)
        return results.build(run, self.storage.iter_rows(run.id), counts)


def _broker_errors() -> tuple[type[Exception], ...]:
    """What a publish raises when the broker cannot be reached."""
    from kombu.exceptions import OperationalError
    from redis.exceptions import RedisError

    return OperationalError, RedisError, OSError


def _choose_suites(
    report: dataset.ValidationReport, wanted: list[str] | None
) -> list[str]:
    if not wanted:
        return report.suites
    unusable = [name for name in wanted if name not in report.suites]
    if unusable:
        raise Rejected.one("bad_suite", path="suites", suites=unusable)
    return [name for name in report.suites if name in wanted]


def _suite_options(suites: list[str], raw: dict[str, Any]) -> dict[str, Any]:
    """Every option of the chosen suites, checked up front so a bad value is
    a 400 naming it, not a failed worker."""
    options = {}
    for name in suites:
        for option in registry.get(name).options:
            try:
                options[option.name] = option.validate(raw.get(option.name))
            except (TypeError, ValueError) as exc:
                problem = Problem.make(
                    None, option.name, option.problem, detail=str(exc)
                )
                raise Rejected([problem]) from None
    return options


def _run_options(request: RunRequest) -> dict[str, Any]:
    return {
        "samples": request.samples,
        "judge_url": request.judge_url,
        "judge_model": request.judge_model,
        "concurrency": request.concurrency,
        "use_cache": request.use_cache,
    }
