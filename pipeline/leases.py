"""The chunk leases this process holds (``store/chunks.py``): who holds them,
which they are, and their renewal.

A claim on a chunk is a lease with a fencing token. The holder renews it
while it works (``beat``, from the judge's stop check) and its process's
watchdog renews every lease the process holds (:meth:`Leases.renew`), so a
worker that is slow, or starved of CPU, keeps its chunks: only a process
that stops answering (killed, or stopped past ``CHUNK_STALL_S``) loses
them. A sweep never expires the leases of its own process, which is alive
by the fact that it sweeps.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import TYPE_CHECKING

from core.holders import new_holder

if TYPE_CHECKING:
    from store import StorageLike

log = logging.getLogger(__name__)


class Leases:
    """``(run_id, chunk) -> lease token`` of the chunks this process works on."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[tuple[str, int], int] = {}
        self._pid = 0
        self._holder = ""

    @property
    def holder(self) -> str:
        """This process's name on the chunks it holds (host:pid:nonce); a
        forked child is another holder and holds nothing of its parent's."""
        with self._lock:
            if self._pid != os.getpid():
                self._pid = os.getpid()
                self._holder = new_holder(self._pid)
                self._held.clear()
            return self._holder

    def hold(self, run_id: str, chunk: int, lease: int) -> None:
        with self._lock:
            self._held[(run_id, chunk)] = lease

    def drop(self, run_id: str, chunk: int) -> None:
        with self._lock:
            self._held.pop((run_id, chunk), None)

    def keys(self) -> list[tuple[str, int]]:
        """The chunks held here: a sweep of this process leaves them alone."""
        with self._lock:
            return list(self._held) if self._pid == os.getpid() else []

    def renew(self, storage: StorageLike) -> int:
        """Renew every lease held here (one transaction); returns how many
        were found taken (their holders find out at their next check)."""
        with self._lock:
            held = [(*key, lease) for key, lease in self._held.items()]
        if not held:
            return 0
        lost = storage.chunks.renew(held)
        if lost:
            log.warning("%d chunk lease(s) of this process were taken", len(lost))
        return len(lost)


LEASES = Leases()
