"""The watchdog: a thread beside each worker that sweeps every
``WATCHDOG_INTERVAL_S`` (``pipeline.execution.sweep``), so a chunk whose
task was lost or whose worker died is tried again or given up, and a run
never stays ``queued`` or ``running`` for good. Sweeps are idempotent: two
workers sweeping at once claim each chunk once."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from pipeline import execution

log = logging.getLogger(__name__)


class Watchdog:
    def __init__(
        self, make_context: Callable[[], execution.Context], interval_s: float
    ):
        self.make_context = make_context
        self.interval_s = interval_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._stop.clear()
                self._thread = threading.Thread(
                    target=self._loop, name="watchdog", daemon=True
                )
                self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                found = execution.sweep(self.make_context())
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
