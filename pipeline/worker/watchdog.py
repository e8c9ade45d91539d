"""The watchdog: a thread beside each worker that renews the chunk leases
its process holds (at least three times per lease, ``pipeline/leases.py``)
and sweeps every ``WATCHDOG_INTERVAL_S``
(``pipeline.worker.execution.sweep``, the one recovery path): a chunk whose lease
is void is tried again or given up, and a run never stays ``queued`` or
``running`` for good. Sweeps are idempotent: two workers sweeping at once
claim each chunk once."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from time import monotonic

from pipeline.leases import LEASES
from pipeline.worker import execution

log = logging.getLogger(__name__)


class Watchdog:
    def __init__(
        self,
        make_context: Callable[[], execution.Context],
        interval_s: float,
        lease_s: float | None = None,
    ):
        self.make_context = make_context
        self.interval_s = interval_s
        self.renew_s = min(interval_s, (lease_s or interval_s * 3) / 3)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        """Renew every ``renew_s``; sweep every ``interval_s``."""
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._stop.clear()
                self._thread = threading.Thread(
                    target=self._loop, name="watchdog", daemon=True
                )
                self._thread.start()

    def _loop(self) -> None:
        swept_at = monotonic()  # a starting worker swept already (worker_process)
        while not self._stop.wait(self.renew_s):
            try:
                ctx = self.make_context()
                LEASES.renew(ctx.storage)
                if monotonic() - swept_at < self.interval_s:
                    continue
                swept_at = monotonic()
                found = execution.sweep(ctx)
            except Exception:  # a bad sweep must not end the watchdog
                log.exception("watchdog sweep failed")
                continue
            if found["stale"]:
                log.warning(
                    "watchdog: %s stale chunk(s), %s given up",
                    found["stale"],
                    found["given_up"],
                )

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
