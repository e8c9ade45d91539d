"""Uploaded files on disk, under generated ids.

``secure_filename`` would erase a Chinese or Korean file name, so a file is
stored as ``<folder>/<uuid>.jsonl`` and the user's name is kept only as data.

>>> import io, tempfile
>>> folder = tempfile.mkdtemp()
>>> upload_id, path, sha256 = store_upload(io.BytesIO(b"{}\\n"), folder)
>>> path == upload_path(folder, upload_id), path.read_bytes(), sha256[:8]
(True, b'{}\\n', 'ca3d163b')
"""

from __future__ import annotations

import hashlib
import uuid
from pathlib import Path
from typing import BinaryIO

COPY_CHUNK = 1 << 20


def store_upload(stream: BinaryIO, folder: str | Path) -> tuple[str, Path, str]:
    """Copy an upload to ``<folder>/<uuid>.jsonl``; return id, path, sha256."""
    upload_id = uuid.uuid4().hex
    path = upload_path(folder, upload_id)
    digest = hashlib.sha256()
    try:
        with path.open("wb") as out:
            while block := stream.read(COPY_CHUNK):
                digest.update(block)
                out.write(block)
    except OSError:  # a full disk: no part of the file is left behind
        path.unlink(missing_ok=True)
        raise
    return upload_id, path, digest.hexdigest()


def upload_path(folder: str | Path, upload_id: str) -> Path:
    return Path(folder) / f"{upload_id}.jsonl"


# Uploads the upload page checked, kept for the run they may become (the
# page then sends the file once): ``<folder>/pending/<uuid>.jsonl``, moved
# beside the runs' uploads when a run takes one, deleted when none does.
PENDING = "pending"


def keep_upload(stream: BinaryIO, folder: str | Path) -> tuple[str, str]:
    """Store a checked upload among the pending ones; (id, sha256)."""
    pending = Path(folder) / PENDING
    pending.mkdir(parents=True, exist_ok=True)
    upload_id, _, sha256 = store_upload(stream, pending)
    return upload_id, sha256


def adopt_kept(folder: str | Path, upload_id: str) -> Path:
    """Move a kept upload to the runs' uploads; FileNotFoundError once it
    was taken or swept."""
    path = upload_path(folder, upload_id)
    upload_path(Path(folder) / PENDING, upload_id).rename(path)
    return path


def sweep_kept(folder: str | Path, older_than_s: float) -> int:
    """Delete the pending uploads older than ``older_than_s``; how many."""
    import time

    pending, swept = Path(folder) / PENDING, 0
    deadline = time.time() - older_than_s
    for path in pending.glob("*.jsonl") if pending.is_dir() else ():
        try:
            if path.stat().st_mtime < deadline:
                path.unlink()
                swept += 1
        except FileNotFoundError:  # taken or swept meanwhile
            continue
    return swept
