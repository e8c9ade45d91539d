"""Uploads checked once and kept for the run they may become: the upload
page sends a file to be checked (``POST /api/v1/validate`` with ``keep``),
gets an ``upload_ref`` back, and starts the run with the reference instead
of sending the file again (``store/uploads.py``: ``keep_upload``).

A reference is the kept upload's id, digest and name, signed with the
instance's secret and valid for ``KEPT_S``: it cannot be forged or reused
for another file, and it names nothing a client did not send. An unused
kept upload is deleted after ``KEPT_S``.

Kept uploads have a budget, so checks alone cannot fill the disk: a client
(``web.security.access.client_id``) keeps its newest
``KEPT_UPLOADS_PER_CLIENT`` (a newer check replaces its oldest), and all of
them together hold at most ``KEPT_UPLOADS_MB``. Over it a keep is refused
(``keep_refused``, 429) and the file is sent with the run instead; the
upload page does that by itself."""

from __future__ import annotations

from typing import Any, BinaryIO

from itsdangerous import BadSignature, URLSafeTimedSerializer

from core.problems import Rejected
from pipeline.service.run_request import check_file_name, unstorable
from store.uploads import Kept, drop_kept, keep_upload, kept_uploads, sweep_kept

KEPT_S = 3600  # an hour between the check and the run
MB = 1024 * 1024  # as MAX_UPLOAD_MB


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


def keep(config: dict[str, Any], stream: BinaryIO, filename: str, client: str) -> str:
    """Keep a checked upload of ``client`` for the run it may become: its
    reference. Rejected when it is not kept: over the budget (429) or on a
    full disk (507); the file is then sent with the run."""
    folder = config["UPLOAD_FOLDER"]
    ceiling = int(config["KEPT_UPLOADS_MB"] * MB)
    newest = config["KEPT_UPLOADS_PER_CLIENT"]
    check_file_name(filename)
    size = stream.seek(0, 2)
    stream.seek(0)
    sweep_kept(folder, KEPT_S)  # the unused ones of an hour ago
    kept = kept_uploads(folder)
    freed = sum(old.size for old in _replaced(kept, client, newest - 1))
    if _bytes(kept) - freed + size > ceiling:  # not written to be deleted
        raise _refused(config)
    try:
        upload_id, sha256 = keep_upload(stream, folder, client)
    except OSError as exc:
        raise unstorable(exc) from None
    # with this one, the client's oldest beyond its newest go (a check of
    # another of its tabs at the same time too); then the ceiling holds
    # over every file written so far, its own included
    kept = kept_uploads(folder)
    for old in _replaced(kept, client, newest):
        if old.upload_id != upload_id:
            drop_kept(folder, old.upload_id)
    if _bytes(kept_uploads(folder)) > ceiling:  # others were kept meanwhile
        drop_kept(folder, upload_id)
        raise _refused(config)
    return reference(config, upload_id, sha256, filename)


def _replaced(kept: list[Kept], client: str, newest: int) -> list[Kept]:
    """The client's kept uploads beyond its ``newest`` (oldest first)."""
    own = [upload for upload in kept if upload.owner == client]
    return own[: max(len(own) - newest, 0)]


def _bytes(kept: list[Kept]) -> int:
    return sum(upload.size for upload in kept)


def _refused(config: dict[str, Any]) -> Rejected:
    limit = config["KEPT_UPLOADS_MB"]  # 1024, not 1024.0; 0.12, not 0.1181545...
    limit = int(limit) if float(limit).is_integer() else round(limit, 2)
    return Rejected.one("keep_refused", path="keep", http=429, limit=limit)
