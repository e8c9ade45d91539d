"""Reading a run request from a form or multipart API call (shared)."""

from __future__ import annotations

import json

from flask import current_app

import runs
from runs import RunRejected, RunRequest

MAX_SAMPLES = 15


def _problem(path: str, code: str, message: str, **params) -> dict:
    params = {"path": path, **params}
    return {
        "line": None,
        "path": path,
        "code": code,
        "message": message,
        "params": params,
    }


def uploaded_file(files):
    upload = files.get("file")
    if upload is None or not upload.filename:
        raise RunRejected(
            [_problem("file", "missing_file", "Choose a .jsonl file to upload.")]
        )
    return upload


def run_request(form) -> RunRequest:
    """Suites (repeated or comma-separated), judge model, samples. The judge
    URL is not accepted from the web: pointing our server at arbitrary hosts
    would be a server-side request forgery hole."""
    suites = [
        s.strip()
        for value in form.getlist("suites")
        for s in value.split(",")
        if s.strip()
    ]
    samples_raw = form.get("samples", "1").strip() or "1"
    if not samples_raw.isdigit() or not 1 <= int(samples_raw) <= MAX_SAMPLES:
        message = f"samples: must be an integer from 1 to {MAX_SAMPLES}."
        problem = _problem(
            "samples", "samples_out_of_range", message, maximum=MAX_SAMPLES
        )
        raise RunRejected([problem])
    model = form.get("judge_model", "").strip()[:200] or None
    if model and not current_app.config.get("JUDGE_API_URL"):
        model = None  # no judge: the model name would mean nothing
    weights = _weights(form.get("quality_weights", "").strip())
    return RunRequest(
        suites=suites or None,
        judge_model=model,
        samples=int(samples_raw),
        quality_weights=weights,
    )


def _weights(raw: str):
    """Optional JSON object, e.g. {"coherence": 0.4, ...}; runs checks it, so
    anything that is not an object is passed on to be rejected there."""
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def submit(request):
    """Store, validate, record and enqueue the uploaded run (web form and API)."""
    upload = uploaded_file(request.files)
    return runs.submit(upload.stream, upload.filename, run_request(request.form))
