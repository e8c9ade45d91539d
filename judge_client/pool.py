"""The bounded pool of judge calls of one worker process."""

from __future__ import annotations

import threading
from collections import deque
from concurrent.futures import Future


class JudgePool:
    """The bounded pool of judge calls of a worker process (one per app),
    shared by every chunk, run and judge model it serves, so
    ``JUDGE_CONCURRENCY`` holds however many runs are evaluating. Threads
    start as calls come (at most ``size``) and end after ``IDLE_S`` idle.

    Calls wait in one queue per ``key`` (a run) and the free threads take
    from the keys in turn: a run with thousands of calls queued, or a slow
    judge, never makes the next run wait for all of them.
    """

    IDLE_S = 30.0

    def __init__(self, size: int):
        self.size = size
        self._ready = threading.Condition()
        self._queues: dict[str, deque] = {}  # insertion order: whose turn is next
        self._threads: set[threading.Thread] = set()
        self._idle = 0
        self._closing = False

    def submit(self, function, *args, key: str = "") -> Future:
        future: Future = Future()
        with self._ready:
            self._queues.setdefault(key, deque()).append((future, function, args))
            if self._idle == 0 and len(self._threads) < self.size:
                thread = threading.Thread(target=self._work, name="judge", daemon=True)
                self._threads.add(thread)
                thread.start()
            else:
                self._ready.notify()
        return future

    def _next(self):
        """The next call, from the key whose turn it is; None after
        ``IDLE_S`` without one (under the lock)."""
        while not self._closing:
            for key in list(self._queues):
                queue = self._queues.pop(key)
                found = queue.popleft()
                if queue:
                    self._queues[key] = queue  # to the back of the line
                return found
            self._idle += 1
            woken = self._ready.wait(self.IDLE_S)
            self._idle -= 1
            if not woken and not self._queues:
                break
        self._threads.discard(threading.current_thread())
        return None

    def _work(self) -> None:
        while True:
            with self._ready:
                found = self._next()
            if found is None:
                return
            future, function, args = found
            if not future.set_running_or_notify_cancel():
                continue  # cancelled while it waited
            try:
                future.set_result(function(*args))
            except BaseException as exc:  # the caller's future carries it
                future.set_exception(exc)

    def shutdown(self) -> None:
        """Cancel what waits, let the calls under way end, stop the threads;
        the pool starts threads again for later calls."""
        with self._ready:
            self._closing = True
            for queue in self._queues.values():
                for future, _, _ in queue:
                    future.cancel()
            self._queues.clear()
            threads = list(self._threads)
            self._ready.notify_all()
        for thread in threads:
            thread.join()
        with self._ready:
            self._threads.clear()
            self._closing = False
