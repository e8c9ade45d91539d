"""The process's judge loop and the pool of calls on it: bounded, fair,
cancellable, warm before the first call, and new in a forked child."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time

from judge_client import loop
from judge_client.pool import JudgePool


def test_the_pool_runs_at_most_its_size_at_once():
    pool, running, peak = JudgePool(3), [0], [0]

    async def call(value):
        running[0] += 1  # (on the loop: no lock needed)
        peak[0] = max(peak[0], running[0])
        await asyncio.sleep(0.01)
        running[0] -= 1
        return value * 2

    futures = [pool.submit(call, n, key=f"run-{n % 2}") for n in range(20)]
    assert sorted(f.result(60) for f in futures) == [n * 2 for n in range(20)]
    assert peak[0] == 3 and pool.in_flight == 0


def test_cancelling_a_call_under_way_cancels_its_coroutine():
    pool, started, ended = JudgePool(2), threading.Event(), []

    async def hangs():
        started.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            ended.append("cancelled")
            raise

    future = pool.submit(hangs)
    assert started.wait(60)
    assert future.cancel()
    deadline = time.monotonic() + 60  # a bound for a hang, not a timing
    while pool.in_flight and time.monotonic() < deadline:
        time.sleep(0.01)
    assert ended == ["cancelled"] and pool.in_flight == 0


def test_a_failure_reaches_the_caller():
    async def fails():
        raise ValueError("judge said no")

    future = JudgePool(1).submit(fails)
    assert isinstance(future.exception(60), ValueError)


def test_warming_up_starts_the_loop_and_loads_the_client():
    loop.warm_up().join(120)
    assert loop.started() and "judge_client.transport" in sys.modules


def test_a_forked_child_runs_its_own_loop():
    """(Gunicorn and Celery's prefork pool fork after the app is built.)"""
    loop.get()  # this process's loop runs

    async def pid() -> int:
        return os.getpid()

    child = os.fork()
    if child == 0:  # the child: a loop of its own answers, or it says so
        code = 0 if loop.run(pid(), timeout=30) == os.getpid() else 1
        os._exit(code)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert loop.run(pid()) == os.getpid()
