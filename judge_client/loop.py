"""The process's one event loop for judge calls, on a thread of its own.

Why a loop and not a thread per call in flight: at hundreds of calls a second
a worker spent a quarter of its CPU in the blocking client (urllib3 and
``http.client``) and in handing calls between threads; on one loop with
aiohttp the client takes 1.45x less CPU per call (``bench/client_cpu.py``).
Chunks stay on their threads and wait on concurrent futures, so nothing
above the judge client changes its way of calling.
"""

from __future__ import annotations

import asyncio
import atexit
import importlib
import os
import sys
import threading
from collections.abc import Coroutine
from concurrent.futures import Future
from typing import Any, TypeVar

_T = TypeVar("_T")

_LOOP: asyncio.AbstractEventLoop | None = None
_LOCK = threading.Lock()


def get() -> asyncio.AbstractEventLoop:
    """The running loop of this process, started on first use."""
    global _LOOP
    with _LOCK:
        if _LOOP is None:
            loop = asyncio.new_event_loop()
            threading.Thread(
                target=loop.run_forever, name="judge-loop", daemon=True
            ).start()
            _LOOP = loop
        return _LOOP


def submit(coroutine: Coroutine[Any, Any, _T]) -> Future[_T]:
    """Run ``coroutine`` on the loop; cancelling the future cancels it."""
    return asyncio.run_coroutine_threadsafe(coroutine, get())


def run(coroutine: Coroutine[Any, Any, _T], timeout: float | None = None) -> _T:
    """Run ``coroutine`` on the loop and wait for its result (for callers
    outside a run, e.g. ``judge-check``); never call it on the loop itself."""
    return submit(coroutine).result(timeout)


def warm_up() -> threading.Thread:
    """Start the loop and load the HTTP client once a worker consumes, not
    at its first judge call: aiohttp takes 0.2–0.5 s to import here (its TLS
    contexts are built at import)."""

    def load() -> None:
        get()
        importlib.import_module("judge_client.transport")

    loader = threading.Thread(target=load, name="judge-warm-up", daemon=True)
    loader.start()
    return loader


def started() -> bool:
    return _LOOP is not None and _LOOP.is_running()


def _forget_after_fork() -> None:
    """A forked child has the loop object but not its thread: start anew
    (its sessions belong to the parent's loop and are dropped with it)."""
    global _LOOP, _LOCK
    _LOOP, _LOCK = None, threading.Lock()


os.register_at_fork(after_in_child=_forget_after_fork)


@atexit.register
def _close_sessions_at_exit() -> None:
    """Say goodbye to the judges' hosts (and leave no unclosed session to
    warn about) before the interpreter stops the loop's thread. The
    transport is looked up, not imported: a process that never judged never
    loaded it, and the transport then needs nothing of this module."""
    transport = sys.modules.get("judge_client.transport")
    if transport is not None and started():
        run(transport.close_sessions(), timeout=5)
