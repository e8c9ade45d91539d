"""Reading a run request from a form or multipart API call (shared)."""

from __future__ import annotations

import hashlib
import hmac
import json

from flask import current_app, request

from core.problems import Rejected
from metrics import registry
from pipeline.runs import RunRequest


def uploaded_file(files):
    upload = files.get("file")
    if upload is None or not upload.filename:
        raise Rejected.one("missing_file", path="file")
    return upload


def run_request(form) -> RunRequest:
    """Suites (repeated or comma-separated), judge model, samples and the
    suites' options (JSON). The judge URL is not accepted from the web:
    pointing our server at arbitrary hosts would be a server-side request
    forgery hole."""
    config = current_app.config
    suites = [
        s.strip()
        for value in form.getlist("suites")
        for s in value.split(",")
        if s.strip()
    ]
    maximum = config["MAX_SAMPLES"]
    samples_raw = form.get("samples", "1").strip() or "1"
    # isdecimal + ASCII: "²".isdigit() is True, and int("²") raises
    if not (samples_raw.isascii() and samples_raw.isdecimal()) or not (
        1 <= int(samples_raw) <= maximum
    ):
        raise Rejected.one("samples_out_of_range", path="samples", maximum=maximum)
    model = form.get("judge_model", "").strip()[:200] or None
    if model and not config.get("JUDGE_API_URL"):
        model = None  # no judge: the model name would mean nothing
    return RunRequest(
        suites=suites or None,
        judge_model=model,
        samples=int(samples_raw),
        options=_suite_options(form),
        client=client_id(),
    )


def client_id() -> str:
    """Who is asking, for fair scheduling: a keyed hash of the client address
    (the address itself is never stored)."""
    key = str(current_app.config["SECRET_KEY"]).encode()
    address = (request.remote_addr or "unknown").encode()
    return hmac.new(key, address, hashlib.sha256).hexdigest()[:16]


def _suite_options(form) -> dict:
    """Each suite option present in the form, as JSON. A value that is not
    JSON is passed on as text for the option's validator to reject."""
    options = {}
    for suite in registry.suites():
        for option in suite.options:
            raw = form.get(option.name, "").strip()
            if raw:
                try:
                    options[option.name] = json.loads(raw)
                except (ValueError, RecursionError):  # e.g. 100,000 "["
                    options[option.name] = raw
    return options


def submit(request):
    """Store, validate, record and enqueue the uploaded run (web form and API)."""
    upload = uploaded_file(request.files)
    service = current_app.extensions["runs"]
    return service.submit(upload.stream, upload.filename, run_request(request.form))
