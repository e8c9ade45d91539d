"""The bounded pool of judge calls of one worker process."""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from concurrent.futures import Future, InvalidStateError
from contextlib import suppress
from functools import partial
from typing import Any, TypeVar

from judge_client import loop

_T = TypeVar("_T")
# a call waiting for a slot: (its caller's future, a coroutine function, its arguments)
_Call = tuple[Future[Any], Callable[..., Awaitable[Any]], tuple[Any, ...]]


class JudgePool:
    """The bounded pool of judge calls of a worker process (one per app),
    shared by every chunk and run it serves. A call is a coroutine
    function; it runs on the process's judge loop (:mod:`judge_client.loop`).

    Slots are held per *lane*, a judge endpoint and model: at most ``size``
    calls of one lane run at once, so a slow model fills its own slots and
    never a fast one's (a 30 s/call judge held all 8 slots, and a 40-call
    run on an instant judge took 298 s instead of 1.6 s). Within a lane,
    calls wait in one queue per ``key`` (a run) and a freed slot takes from
    the keys in turn: a run with thousands of calls queued never makes the
    next run wait for all of them. Cancelling a call's future cancels it,
    waiting or under way (a cancelled run frees its slots at once).
    """

    def __init__(self, size: int):
        self.size = size
        self._lock = threading.Lock()
        self._lanes: dict[str, _Lane] = {}
        self._woken = False  # a start is scheduled on the loop already

    @property
    def in_flight(self) -> int:
        return sum(len(lane.running) for lane in self._lanes.values())

    def submit(
        self,
        function: Callable[..., Awaitable[_T]],
        *args: Any,
        key: str = "",
        lane: str = "",
    ) -> Future[_T]:
        """Queue ``function(*args)`` (a coroutine function) under ``key``
        (a run), in ``lane`` (a judge endpoint and model)."""
        future: Future[_T] = Future()
        with self._lock:
            waiting = self._lanes.setdefault(lane, _Lane()).queues
            waiting.setdefault(key, deque()).append((future, function, args))
            wake, self._woken = not self._woken, True
        if wake:  # one wake-up for a chunk's whole batch, not one per call
            loop.get().call_soon_threadsafe(self._start_more)
        return future

    def _start_more(self) -> None:
        """On the loop: fill every lane's free slots."""
        running = asyncio.get_running_loop()
        with self._lock:
            self._woken = False
            for lane in self._lanes.values():
                while len(lane.running) < self.size:
                    found = lane.next()
                    if found is None:
                        break
                    future, function, args = found
                    task = running.create_task(self._call(lane, future, function, args))
                    lane.running.add(task)
                    future.add_done_callback(partial(_cancel_with, running, task))

    async def _call(
        self,
        lane: _Lane,
        future: Future[Any],
        function: Callable[..., Awaitable[Any]],
        args: tuple[Any, ...],
    ) -> None:
        try:
            _settle(future.set_result, await function(*args))
        except asyncio.CancelledError:
            future.cancel()  # (its own cancellation: already so)
        except BaseException as exc:  # the caller's future carries it
            _settle(future.set_exception, exc)
        finally:
            lane.running.discard(asyncio.current_task())
            self._start_more()

    def withdraw(self, futures: Iterable[Future[Any]]) -> None:
        """Cancel those of ``futures`` still waiting for a slot (they were
        never sent); the calls under way go on."""
        wanted = set(futures)
        with self._lock:  # what waits here is started under this lock only
            for lane in self._lanes.values():
                for queue in lane.queues.values():
                    for future, _function, _args in queue:
                        if future in wanted:
                            future.cancel()  # skipped when its turn comes

    def shutdown(self) -> None:
        """Cancel what waits and let the calls under way end; the pool
        takes calls again afterwards."""
        with self._lock:
            waiting = [
                entry[0]
                for lane in self._lanes.values()
                for queue in lane.queues.values()
                for entry in queue
            ]
            for lane in self._lanes.values():
                lane.queues.clear()
        for future in waiting:
            future.cancel()
        if self.in_flight:
            loop.run(self._drain())

    async def _drain(self) -> None:
        while self.in_flight:
            tasks = {t for lane in self._lanes.values() for t in lane.running}
            await asyncio.wait(tasks)


class _Lane:
    """One judge endpoint and model: its calls waiting per run, and under way."""

    def __init__(self) -> None:
        # insertion order: whose turn is next
        self.queues: dict[str, deque[_Call]] = {}
        self.running: set[asyncio.Task[None]] = set()  # changed on the loop only

    def next(self) -> _Call | None:
        """The next call still wanted, from the run whose turn it is (under
        the pool's lock); None when nothing waits."""
        while self.queues:
            key = next(iter(self.queues))
            queue = self.queues.pop(key)
            found = queue.popleft()
            if queue:
                self.queues[key] = queue  # to the back of the line
            if not found[0].done():  # not cancelled while it waited
                return found
        return None


def _cancel_with(
    running: asyncio.AbstractEventLoop, task: asyncio.Task[None], future: Future[Any]
) -> None:
    """The caller cancelled the call's future: cancel the call itself."""
    if future.cancelled():
        running.call_soon_threadsafe(task.cancel)


def _settle(setter: Callable[[_T], None], value: _T) -> None:
    with suppress(InvalidStateError):  # cancelled meanwhile: nobody waits for it
        setter(value)
