"""Verdicts into the judge cache as they are read, in group commits.

Each verdict is kept before its call gives back its judge slot (and before
its request's claim ends), so a worker killed later pays nothing for it
again. One transaction per verdict held each slot about 14 ms longer on a
loaded machine (SQLite, 2 cores); here the verdicts that arrive while a
write is under way go into the next one, so a burst of replies costs one
transaction, and a lone reply waits for no other.

A write the storage refuses (its disk full, the database down: a
``StorageUnavailable``; any other error fails at once) is tried again, with a growing pause, for up to ``deadline_s``: the verdict was paid
for, and a retry of its chunk would pay for it again. Meanwhile its call
keeps its judge slot, so no further call of the process goes out to pile
up more verdicts nobody can store. Past the deadline each call fails with
the storage's error (its chunk is tried again).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from time import monotonic
from typing import Any

from core.status import StorageUnavailable

log = logging.getLogger(__name__)
PAUSES_S = (0.25, 0.5, 1.0, 2.0, 5.0)  # between tries of a refused write


class VerdictKeeper:
    """``await keep(entry)`` returns once ``entry`` is in the cache. Runs on
    the judge loop (one thread): no lock is needed."""

    def __init__(
        self, put: Callable[[list[dict[str, Any]]], None], deadline_s: float = 0.0
    ):
        self._put = put
        self.deadline_s = deadline_s
        self._pending: list[tuple[dict[str, Any], asyncio.Future[None]]] = []
        self._writer: asyncio.Task[None] | None = None

    async def keep(self, entry: dict[str, Any]) -> None:
        kept: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending.append((entry, kept))
        if self._writer is None or self._writer.done():
            self._writer = asyncio.ensure_future(self._write())
        await kept

    async def _write(self) -> None:
        while self._pending:
            batch, self._pending = self._pending, []
            refused_at, tries = None, 0  # since when the storage refuses it
            while True:
                try:
                    await asyncio.to_thread(self._put, [entry for entry, _ in batch])
                except Exception as exc:
                    now = monotonic()
                    refused_at = now if refused_at is None else refused_at
                    refused = isinstance(exc, StorageUnavailable)
                    if not refused or now - refused_at >= self.deadline_s:
                        _settle(batch, exc)  # each call fails (its chunk retries)
                        break
                    if tries == 0:
                        log.warning("verdicts not stored, trying again: %s", exc)
                    await asyncio.sleep(PAUSES_S[min(tries, len(PAUSES_S) - 1)])
                    tries += 1
                    # the verdicts read meanwhile go with them
                    batch, self._pending = batch + self._pending, []
                else:
                    _settle(batch, None)
                    break


def _settle(
    batch: list[tuple[dict[str, Any], asyncio.Future[None]]], error: Exception | None
) -> None:
    for _, kept in batch:
        if kept.done():  # its call was cut meanwhile
            continue
        if error is None:
            kept.set_result(None)
        else:
            kept.set_exception(error)
