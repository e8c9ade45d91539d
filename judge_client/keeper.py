"""Verdicts into the judge cache as they are read, in group commits.

Each verdict is kept before its call gives back its judge slot (and before
its request's claim ends), so a worker killed later pays nothing for it
again. One transaction per verdict held each slot about 14 ms longer on a
loaded machine (SQLite, 2 cores); here the verdicts that arrive while a
write is under way go into the next one, so a burst of replies costs one
transaction, and a lone reply waits for no other.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable


class VerdictKeeper:
    """``await keep(entry)`` returns once ``entry`` is in the cache. Runs on
    the judge loop (one thread): no lock is needed."""

    def __init__(self, put: Callable[[list[dict]], None]):
        self._put = put
        self._pending: list[tuple[dict, asyncio.Future]] = []
        self._writer: asyncio.Task | None = None

    async def keep(self, entry: dict) -> None:
        kept = asyncio.get_running_loop().create_future()
        self._pending.append((entry, kept))
        if self._writer is None or self._writer.done():
            self._writer = asyncio.ensure_future(self._write())
        await kept

    async def _write(self) -> None:
        while self._pending:
            batch, self._pending = self._pending, []
            try:
                await asyncio.to_thread(self._put, [entry for entry, _ in batch])
            except Exception as exc:  # each call fails with it (its chunk retries)
                for _, kept in batch:
                    if not kept.done():
                        kept.set_exception(exc)
            else:
                for _, kept in batch:
                    if not kept.done():
                        kept.set_result(None)
