"""Verdicts kept in group commits (judge_client/keeper.py): each keep
returns only once its entry was put; a burst shares transactions."""

from __future__ import annotations

import asyncio
import time

import pytest

from judge_client.keeper import VerdictKeeper


def test_a_burst_of_verdicts_shares_its_writes_and_each_waits_for_its_own():
    puts: list[list[str]] = []
    written: set[str] = set()

    def put(entries):
        time.sleep(0.05)  # a write under way while more verdicts come
        puts.append([entry["key"] for entry in entries])
        written.update(entry["key"] for entry in entries)

    async def call(keeper, key):
        await keeper.keep({"key": key})
        assert key in written  # returned only once it was put

    async def burst():
        keeper = VerdictKeeper(put)
        await asyncio.gather(*(call(keeper, f"k{n}") for n in range(16)))

    asyncio.run(burst())
    assert sorted(key for batch in puts for key in batch) == sorted(
        f"k{n}" for n in range(16)
    )
    assert len(puts) < 16


def test_a_failed_write_fails_each_of_its_calls():
    def put(entries):
        raise OSError("disk full")

    async def keep():
        await VerdictKeeper(put).keep({"key": "k"})

    with pytest.raises(OSError):
        asyncio.run(keep())
