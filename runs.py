"""Creating and queueing runs: the one path shared by web, API and CLI.

Uploads are stored under generated ids (``secure_filename`` would erase a
Chinese or Korean name); the user's file name is kept only as data.
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from flask import current_app
from kombu.exceptions import OperationalError
from redis.exceptions import RedisError

import dataset
import jobs
from evaluator import JudgeConfig
from metrics import quality, roleplay
from metrics.alignment import PROMPTS
from metrics.registry import SUITES

COPY_CHUNK = 1 << 20


class RunRejected(Exception):
    """The upload cannot become a run; ``errors`` are validation-style dicts."""

    def __init__(self, errors: list[dict], status: int = 400):
        super().__init__(errors[0]["message"] if errors else "rejected")
        self.errors = errors
        self.status = status


class QueueUnavailable(RunRejected):
    """The broker refused the run; it is recorded as failed, nothing runs (503)."""

    def __init__(self):
        message = "The evaluation queue is unavailable; nothing was started."
        problem = {
            "line": None,
            "path": "",
            "code": "queue_unavailable",
            "message": message,
        }
        super().__init__([{**problem, "params": {}}], status=503)


@dataclass
class RunRequest:
    suites: list[str] | None = None  # None: every suite the file can run
    judge_url: str | None = None
    judge_model: str | None = None
    samples: int = 1
    concurrency: int | None = None
    use_cache: bool = True
    quality_weights: dict | None = None  # None: the defaults


def store_upload(stream: BinaryIO, folder: str | Path) -> tuple[str, Path, str]:
    """Copy an upload to ``<folder>/<uuid>.jsonl``; return id, path, sha256."""
    upload_id = uuid.uuid4().hex
    path = Path(folder) / f"{upload_id}.jsonl"
    digest = hashlib.sha256()
    with path.open("wb") as out:
        while block := stream.read(COPY_CHUNK):
            digest.update(block)
            out.write(block)
    return upload_id, path, digest.hexdigest()


def upload_path(config: dict, upload_id: str) -> Path:
    return Path(config["UPLOAD_FOLDER"]) / f"{upload_id}.jsonl"


def judge_config(config: dict, options: dict) -> JudgeConfig | None:
    """The judge a run uses: its own settings plus the key from this process."""
    url = options.get("judge_url") or config.get("JUDGE_API_URL")
    model = options.get("judge_model") or config.get("JUDGE_MODEL")
    if not (url and model):
        return None
    return JudgeConfig(
        base_url=url,
        model=model,
        api_key=config.get("JUDGE_API_KEY"),
        timeout_s=config["JUDGE_TIMEOUT_S"],
        max_retries=config["JUDGE_MAX_RETRIES"],
        concurrency=options.get("concurrency") or config["JUDGE_CONCURRENCY"],
        samples=options.get("samples", 1),
    )


def _choose_suites(
    report: dataset.ValidationReport, wanted: list[str] | None
) -> list[str]:
    if not wanted:
        return report.suites
    unknown = [name for name in wanted if name not in SUITES]
    unusable = [name for name in wanted if name in SUITES and name not in report.suites]
    if unknown or unusable:
        message = (
            f"Suites not available for this file: {', '.join(unknown + unusable)}."
        )
        detail = {
            "line": None,
            "path": "suites",
            "code": "bad_suite",
            "message": message,
        }
        raise RunRejected([{**detail, "params": {"suites": unknown + unusable}}])
    return [name for name in report.suites if name in wanted]


def create_run(stream: BinaryIO, filename: str, request: RunRequest):
    """Store, validate and record a run (status ``queued``); not yet enqueued."""
    config = current_app.config
    storage = current_app.extensions["storage"]
    if not dataset.has_allowed_extension(filename):
        report = dataset.validate_stream(stream, filename)
        raise RunRejected([p.to_dict() for p in report.errors])
    upload_id, path, sha256 = store_upload(stream, config["UPLOAD_FOLDER"])
    report = dataset.validate_file(path, filename, **validation_limits(config))
    if not report.valid:
        path.unlink(missing_ok=True)
        raise RunRejected(report.to_dict()["errors"])
    suites = _choose_suites(report, request.suites)
    weights = _quality_weights(request.quality_weights) if "quality" in suites else None
    options = {
        "quality_weights": weights,
        "samples": request.samples,
        "judge_url": request.judge_url,
        "judge_model": request.judge_model,
        "concurrency": request.concurrency,
        "use_cache": request.use_cache,
    }
    judge = judge_config(config, options)
    if judge and not any(SUITES[name].uses_judge for name in suites):
        judge = None  # nothing of this run asks the judge
    return storage.create_run(
        file_name=filename,
        file_sha256=sha256,
        upload_id=upload_id,
        sessions=report.sessions,
        rounds=report.rounds,
        methods=report.methods,
        suites=suites,
        judge=_public_judge(judge, suites) if judge else None,
        options=options,
    )


FAILED = ("unscored", "error")


def retry_failed(run):
    """A new run of the same stored upload and settings. The finished run stays
    as it is (share links show immutable results); in the new one every verdict
    that succeeded comes from the cache, so only the failed items reach the judge.
    """
    if run.status not in ("partial", "failed", "cancelled"):
        raise RunRejected([_problem("retry_not_needed", status=run.status)], status=409)
    storage = current_app.extensions["storage"]
    options = {key: value for key, value in run.options.items() if key != "chunks"}
    retry = storage.create_run(
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
    return _enqueue_or_fail(retry)


def _problem(code: str, **params) -> dict:
    message = f"The run is {params.get('status')}: nothing to retry."
    return {
        "line": None,
        "path": "",
        "code": code,
        "message": message,
        "params": params,
    }


def _quality_weights(weights: dict | None) -> dict:
    """Checked up front so a bad weight set is a 400, not a failed worker."""
    try:
        return quality.validate_weights(weights)
    except (TypeError, ValueError) as exc:
        detail = {
            "line": None,
            "path": "quality_weights",
            "code": "bad_weights",
            "message": str(exc),
        }
        raise RunRejected([{**detail, "params": {"detail": str(exc)}}]) from None


def _public_judge(judge: JudgeConfig, suites: list[str]) -> dict:
    """What the results may show: model, sampling and the prompt versions used."""
    prompts = dict(PROMPTS) if "alignment" in suites else {}
    if "roleplay" in suites:
        prompts.update(roleplay.PROMPTS)
    if "slots" in suites:
        prompts["slot_judge"] = "slot_judge_v1"
    return {**judge.public(), "prompts": prompts}


def validation_limits(config: dict) -> dict:
    return {
        "max_line_bytes": config["MAX_LINE_MB"] * 1024 * 1024,
        "max_errors": config["MAX_VALIDATION_ERRORS"],
    }


def submit(stream: BinaryIO, filename: str, request: RunRequest):
    """Create and enqueue a run; a broker outage fails it visibly (503)."""
    return _enqueue_or_fail(create_run(stream, filename, request))


def _enqueue_or_fail(run):
    try:
        enqueue(run.id)
    except (OperationalError, RedisError, OSError) as exc:
        storage = current_app.extensions["storage"]
        storage.set_status(
            run.id, "failed", error=f"queue unavailable: {type(exc).__name__}"
        )
        raise QueueUnavailable from None
    return run


def enqueue(run_id: str) -> None:
    """Hand the run to the workers (starting the embedded one if that is us)."""
    from tasks import start_run  # tasks import runs' helpers

    if jobs.is_embedded(current_app.config):
        current_app.extensions["embedded_worker"].ensure_started()
    start_run.delay(run_id)


def resume_unfinished() -> int:
    """Re-send unfinished runs after a restart (finished chunks are skipped)."""
    pending = current_app.extensions["storage"].unfinished_runs()
    for run in pending:
        enqueue(run.id)
    return len(pending)


def results_document(run) -> dict:
    from metrics import results

    storage = current_app.extensions["storage"]
    rows = storage.row_dicts(run.id)
    return results.build(run, rows, storage.run_status_counts(run))
