"""Resuming unfinished runs exactly once per start, however the app starts.

* Embedded default (no Redis): the in-memory queue died with the last
  process, so the process that serves resumes: ``python app.py`` at start,
  ``flask run`` and gunicorn on their first request. An exclusive lock on
  ``instance/resume.lock``, held for the life of the process, makes a second
  local process (another gunicorn worker, a CLI command) leave it alone.
* Team mode (Redis): tasks survive in Redis as long as Redis keeps its data,
  so only a broker that lost it calls for a resume; :class:`BrokerEpoch`
  detects that once per broker lifetime, from a worker starting or from the
  next run being submitted.
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
import weakref
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

log = logging.getLogger(__name__)
EPOCH_KEY = "personasteer:broker-epoch"


class EmbeddedResume:
    def __init__(self, service, instance_path: str | Path):
        self.service = service
        self.lock_path = Path(instance_path) / "resume.lock"
        self._guard = threading.Lock()
        self._done = False
        # Closes the lock's descriptor (then the OS frees it).
        self._release: Callable[[], object] | None = None

    def __call__(self) -> int | None:
        """Resume once; None when another process or an earlier call did."""
        with self._guard:
            if self._done:
                return None
            self._done = True
            if not self._take_process_lock():
                return None
        return self.service.resume_unfinished()

    def _take_process_lock(self) -> bool:
        descriptor = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(descriptor)
            log.info("another local process resumes unfinished runs")
            return False
        self._release = weakref.finalize(self, os.close, descriptor)
        return True

    def close(self) -> None:
        """Give the lock up (an app shutting down without its process ending)."""
        if self._release is not None:
            self._release()


class BrokerEpoch:
    """Team mode: resume once per broker lifetime.

    Redis keeps queued tasks (and redelivers those of a dead worker), so a
    worker or web restart needs no resume; only a broker that lost its data
    does. The first process to publish after that, or the first worker to
    start, finds the ``personasteer:broker-epoch`` key missing, sets it
    (``SET NX``: exactly one process wins) and re-sends the runs recorded
    before that moment.
    """

    def __init__(self, service, redis_url: str):
        self.service = service
        self.redis_url = redis_url

    def __call__(self) -> int | None:
        import redis

        now = datetime.now(UTC)
        with redis.Redis.from_url(self.redis_url, socket_connect_timeout=2) as client:
            if not client.set(EPOCH_KEY, now.isoformat(), nx=True):
                return None
        return self.service.resume_unfinished(created_before=now)
