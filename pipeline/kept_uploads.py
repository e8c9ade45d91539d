"""Uploads checked once and kept for the run they may become: the upload
page sends a file to be checked (``POST /api/v1/validate`` with ``keep``),
gets an ``upload_ref`` back, and starts the run with the reference instead
of sending the file again (``store/uploads.py``: ``keep_upload``).

A reference is the kept upload's id, digest and name, signed with the
instance's secret and valid for ``KEPT_S``: it cannot be forged or reused
for another file, and it names nothing a client did not send. An unused
kept upload is deleted after ``KEPT_S``."""

from __future__ import annotations

from typing import Any, BinaryIO

from itsdangerous import BadSignature, URLSafeTimedSerializer

from core.problems import Rejected
from pipeline.run_request import check_file_name
from store.uploads import keep_upload, sweep_kept

KEPT_S = 3600  # an hour between the check and the run


def _signer(config: dict[str, Any]) -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(config["SECRET_KEY"], salt="kept-upload")


def reference(
    config: dict[str, Any], upload_id: str, sha256: str, filename: str
) -> str:
    return _signer(config).dumps([upload_id, sha256, filename])


def resolve(config: dict[str, Any], ref: str) -> tuple[str, str, str]:
    """(upload id, sha256, file name) of a reference; Rejected when it is
    forged, malformed or older than ``KEPT_S``."""
    try:
        upload_id, sha256, filename = _signer(config).loads(ref, max_age=KEPT_S)
    except (BadSignature, ValueError, TypeError):
        raise Rejected.one("upload_expired", path="upload_ref") from None
    return str(upload_id), str(sha256), str(filename)


def keep(config: dict[str, Any], stream: BinaryIO, filename: str) -> str | None:
    """Keep a checked upload for the run it may become: its reference, or
    None when it cannot be kept (the page then sends the file again)."""
    folder = config["UPLOAD_FOLDER"]
    sweep_kept(folder, KEPT_S)  # the unused ones of an hour ago
    try:
        check_file_name(filename)
        upload_id, sha256 = keep_upload(stream, folder)
    except (Rejected, OSError):
        return None
    return reference(config, upload_id, sha256, filename)
