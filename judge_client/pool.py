"""The bounded pool of judge calls of one worker process."""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from concurrent.futures import Future, InvalidStateError
from contextlib import suppress
from functools import partial

from judge_client import loop


class JudgePool:
    """The bounded pool of judge calls of a worker process (one per app),
    shared by every chunk, run and judge model it serves, so
    ``JUDGE_CONCURRENCY`` holds however many runs are evaluating. A call is
    a coroutine function; at most ``size`` of them run at once on the
    process's judge loop (:mod:`judge_client.loop`).

    Calls wait in one queue per ``key`` (a run) and a freed slot takes from
    the keys in turn: a run with thousands of calls queued, or a slow judge,
    never makes the next run wait for all of them. Cancelling a call's
    future cancels it, waiting or under way (a cancelled run frees its
    slots at once).
    """

    def __init__(self, size: int):
        self.size = size
        self._lock = threading.Lock()
        self._queues: dict[str, deque] = {}  # insertion order: whose turn is next
        self._running: set[asyncio.Task] = set()  # changed on the loop only
        self._woken = False  # a start is scheduled on the loop already

    @property
    def in_flight(self) -> int:
        return len(self._running)

    def submit(self, function, *args, key: str = "") -> Future:
        """Queue ``function(*args)`` (a coroutine function) under ``key``."""
        future: Future = Future()
        with self._lock:
            self._queues.setdefault(key, deque()).append((future, function, args))
            wake, self._woken = not self._woken, True
        if wake:  # one wake-up for a chunk's whole batch, not one per call
            loop.get().call_soon_threadsafe(self._start_more)
        return future

    def _next(self):
        """The next call still wanted, from the key whose turn it is (under
        the lock); None when nothing waits."""
        while self._queues:
            key = next(iter(self._queues))
            queue = self._queues.pop(key)
            found = queue.popleft()
            if queue:
                self._queues[key] = queue  # to the back of the line
            if not found[0].done():  # not cancelled while it waited
                return found
        return None

    def _start_more(self) -> None:
        """On the loop: fill the free slots."""
        running = asyncio.get_running_loop()
        with self._lock:
            self._woken = False
            while len(self._running) < self.size:
                found = self._next()
                if found is None:
                    break
                future, function, args = found
                task = running.create_task(self._call(future, function, args))
                self._running.add(task)
                future.add_done_callback(partial(_cancel_with, running, task))

    async def _call(self, future: Future, function, args) -> None:
        try:
            _settle(future.set_result, await function(*args))
        except asyncio.CancelledError:
            future.cancel()  # (its own cancellation: already so)
        except BaseException as exc:  # the caller's future carries it
            _settle(future.set_exception, exc)
        finally:
            self._running.discard(asyncio.current_task())
            self._start_more()

    def shutdown(self) -> None:
        """Cancel what waits and let the calls under way end; the pool
        takes calls again afterwards."""
        with self._lock:
            waiting = [entry[0] for queue in self._queues.values() for entry in queue]
            self._queues.clear()
        for future in waiting:
            future.cancel()
        if self._running:
            loop.run(self._drain())

    async def _drain(self) -> None:
        while self._running:
            await asyncio.wait(set(self._running))


def _cancel_with(running, task: asyncio.Task, future: Future) -> None:
    """The caller cancelled the call's future: cancel the call itself."""
    if future.cancelled():
        running.call_soon_threadsafe(task.cancel)


def _settle(setter, value) -> None:
    with suppress(InvalidStateError):  # cancelled meanwhile: nobody waits for it
        setter(value)
