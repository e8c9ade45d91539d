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
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

COPY_CHUNK = 1 << 20


def store_upload(stream: BinaryIO, folder: str | Path) -> tuple[str, Path, str]:
    """Copy an upload to ``<folder>/<uuid>.jsonl``; return id, path, sha256."""
    upload_id = uuid.uuid4().hex
    path = upload_path(folder, upload_id)
    return upload_id, path, _copy(stream, path)


def _copy(stream: BinaryIO, path: Path) -> str:
    """Copy ``stream`` to ``path``; its sha256."""
    digest = hashlib.sha256()
    try:
        with path.open("wb") as out:
            while block := stream.read(COPY_CHUNK):
                digest.update(block)
                out.write(block)
    except OSError:  # a full disk: no part of the file is left behind
        path.unlink(missing_ok=True)
        raise
    return digest.hexdigest()


def upload_path(folder: str | Path, upload_id: str) -> Path:
    return Path(folder) / f"{upload_id}.jsonl"


# Uploads the upload page checked, kept for the run they may become (the
# page then sends the file once): ``<folder>/pending/<uuid>.<owner>.jsonl``
# (``owner``: the client that sent it, a keyed hash), moved beside the runs'
# uploads when a run takes one, deleted when none does.
PENDING = "pending"


@dataclass(frozen=True)
class Kept:
    """A pending upload: its id, owner ("" for one kept before owners were
    named), size in bytes and modification time (ns)."""

    upload_id: str
    owner: str
    size: int
    mtime_ns: int


def keep_upload(stream: BinaryIO, folder: str | Path, owner: str) -> tuple[str, str]:
    """Store a checked upload among the pending ones, under its owner
    (letters and digits); (id, sha256).

    >>> import io, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> upload_id, _ = keep_upload(io.BytesIO(b"{}\\n"), folder, "c1")
    >>> [(k.upload_id == upload_id, k.owner, k.size) for k in kept_uploads(folder)]
    [(True, 'c1', 3)]
    >>> adopt_kept(folder, upload_id).read_bytes(), kept_uploads(folder)
    (b'{}\\n', [])
    """
    if not owner.isalnum():
        raise ValueError(f"an owner is letters and digits, not {owner!r}")
    pending = Path(folder) / PENDING
    pending.mkdir(parents=True, exist_ok=True)
    upload_id = uuid.uuid4().hex
    return upload_id, _copy(stream, pending / f"{upload_id}.{owner}.jsonl")


def _kept_paths(folder: str | Path, upload_id: str) -> list[Path]:
    """The pending file of ``upload_id`` (a hex id: no glob character), with
    or without its owner in the name."""
    return sorted((Path(folder) / PENDING).glob(f"{upload_id}*.jsonl"))


def adopt_kept(folder: str | Path, upload_id: str) -> Path:
    """Move a kept upload to the runs' uploads; FileNotFoundError once it
    was taken, swept or replaced."""
    path = upload_path(folder, upload_id)
    for kept in _kept_paths(folder, upload_id):
        kept.rename(path)  # FileNotFoundError: another request took it first
        return path
    raise FileNotFoundError(upload_id)


def drop_kept(folder: str | Path, upload_id: str) -> None:
    """Delete a kept upload (nothing when it is gone already)."""
    for kept in _kept_paths(folder, upload_id):
        kept.unlink(missing_ok=True)


def kept_uploads(folder: str | Path) -> list[Kept]:
    """The pending uploads, oldest first."""
    pending, found = Path(folder) / PENDING, []
    for path in pending.glob("*.jsonl") if pending.is_dir() else ():
        upload_id, _, owner = path.name.removesuffix(".jsonl").partition(".")
        try:
            stat = path.stat()
        except FileNotFoundError:  # taken or swept meanwhile
            continue
        found.append(Kept(upload_id, owner, stat.st_size, stat.st_mtime_ns))
    return sorted(found, key=lambda kept: (kept.mtime_ns, kept.upload_id))


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
