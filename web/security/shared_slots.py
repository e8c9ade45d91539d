"""At most N requests of one costly kind at once, across every web process
of an instance (gunicorn's workers, the dev server's threads): a slot is an
exclusive ``flock`` on one of N files in the instance folder, dropped by the
kernel when its holder ends however it ends, so a killed worker never keeps
one. Why not Flask-Limiter: it counts requests over time, not how many run
at once; why not Redis: the embedded default has none, and one host's
processes are what a conversion's CPU and memory cost falls on.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def slot(folder: str | Path, kind: str, count: int) -> Iterator[bool]:
    """Yields True holding one of ``count`` slots of ``kind``, or False at
    once when every slot is taken (the caller answers 503)."""
    base = Path(folder)
    base.mkdir(parents=True, exist_ok=True)
    for index in range(count):
        descriptor = os.open(base / f"{kind}.{index}.slot", os.O_CREAT | os.O_RDWR)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(descriptor)
            continue
        try:
            yield True
        finally:
            os.close(descriptor)  # (closing drops the lock)
        return
    yield False
