"""The judge client over real HTTP against the scripted judge server."""

from __future__ import annotations

import errno

import pytest

from core.status import StorageUnavailable
from evaluator import Judge, JudgeConfig, JudgePool, cache_key, parse_retry_after
from metrics.judging import JudgeItem
from metrics.suites.alignment import ALIGNMENT, BINARY
from testing.judge_server import ScriptedJudge


class MemoryCache:
    """A dict with the storage cache's interface (tests only)."""

    def __init__(self):
        self.entries = {}

    def get(self, keys):
        return {key: self.entries[key] for key in keys if key in self.entries}

    def put(self, entries):
        for entry in entries:
            self.entries.setdefault(entry["key"], _Entry(entry))


class _Entry:
    def __init__(self, entry):
        self.parsed, self.reply = entry["parsed"], entry["reply"]


@pytest.fixture
def scripted():
    with ScriptedJudge(timeout_sleep=1.5) as server:
        yield server


POOLS: list = []  # every pool a test made, shut down after it


@pytest.fixture(autouse=True)
def _shut_pools():
    yield
    while POOLS:
        POOLS.pop().shutdown()


def make_judge(server, cache=None, timeout_s=30.0, **options):
    # A generous per-call timeout: a loaded machine must not turn a reply
    # into a retry (judge_calls would count it); the timeout test passes
    # a short one against the server's 1.5 s sleep.
    config = JudgeConfig(
        base_url=server.url,
        model="scripted",
        api_key="sk-secret",
        timeout_s=timeout_s,
        max_retries=2,
        concurrency=4,
        backoff_cap_s=0.05,
        **options,
    )
    judge = Judge(config, cache=cache)
    POOLS.append(judge.pool)
    return judge


def item(response, mode="alignment"):
    chosen = {"alignment": ALIGNMENT, "binary": BINARY}[mode]
    messages = chosen.template.render(
        profile="p",
        personality="q",
        history="(none)",
        user_message="hi",
        response=response,
    )
    return JudgeItem(chosen, tuple(messages))


def test_scores_parse_and_tokens_are_counted(scripted):
    judge = make_judge(scripted)
    [al, binary] = judge.evaluate([item("[[al=73]]"), item("[[binary=1]]", "binary")])
    assert (al.status, al.verdict["score"]) == ("ok", 73.0)
    assert al.verdict["parts"]["style"] == 15.0
    assert (binary.status, binary.verdict["score"]) == ("ok", 1.0)
    usage = judge.usage.counters()
    assert usage["judge_calls"] == 2
    assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0


def test_429_with_retry_after_is_retried(scripted):
    [outcome] = make_judge(scripted).evaluate([item("[[al=60]] [[fault=429]]")])
    assert (outcome.status, outcome.verdict["score"]) == ("ok", 60.0)
    assert scripted.state.calls == 2


def test_500s_within_budget_recover(scripted):
    [outcome] = make_judge(scripted).evaluate([item("[[al=61]] [[fault=500x2]]")])
    assert outcome.status == "ok"


def test_500s_beyond_budget_are_errors_not_scores(scripted):
    judge = make_judge(scripted, samples=1)
    [outcome] = judge.evaluate([item("[[al=61]] [[fault=500x9]]")])
    assert (outcome.status, outcome.verdict, outcome.note.english) == (
        "error",
        None,
        "judge answered HTTP 500",
    )
    assert scripted.state.calls == 3  # max_retries=2 -> three attempts


def test_401_fails_at_once(scripted):
    [outcome] = make_judge(scripted).evaluate([item("[[fault=401]]")])
    assert outcome.status == "error"
    assert scripted.state.calls == 1


def test_timeouts_end_as_errors(scripted):
    [outcome] = make_judge(scripted, timeout_s=0.5).evaluate(
        [item("[[fault=timeout]]")]
    )
    assert outcome.status == "error"
    assert outcome.note.code == "network_error"


def test_garbage_is_reasked_once_then_unscored_with_raw_text(scripted):
    [outcome] = make_judge(scripted).evaluate([item("[[fault=garbage]]")])
    assert outcome.status == "unscored"
    assert outcome.verdict is None
    assert "quite good" in outcome.raw
    assert scripted.state.calls == 2


def test_garbage_once_recovers_on_the_reask(scripted):
    [outcome] = make_judge(scripted).evaluate(
        [item("[[al=55]] [[fault=garbage_once]]")]
    )
    assert (outcome.status, outcome.verdict["score"]) == ("ok", 55.0)


def test_cache_makes_a_rerun_free_and_skips_failures(scripted):
    cache = MemoryCache()
    items = [
        item("[[al=70]]"),
        item("[[fault=garbage]]"),
        item("[[binary=0]]", "binary"),
    ]
    make_judge(scripted, cache=cache).evaluate(items)
    calls = scripted.state.calls
    again = make_judge(scripted, cache=cache)
    outcomes = again.evaluate([items[0], items[2]])
    assert [o.cached for o in outcomes] == [True, True]
    assert scripted.state.calls == calls
    assert again.usage.counters()["cache_hits"] == 2
    assert len(cache.entries) == 2  # the unparseable reply was not cached


class RefusingCache(MemoryCache):
    """A storage that refuses the first ``refusals`` writes (a full disk)."""

    def __init__(self, refusals: float = float("inf")):
        super().__init__()
        self.refusals, self.refused = refusals, 0

    def put(self, entries):
        if self.refused < self.refusals:
            self.refused += 1
            full = OSError(errno.ENOSPC, "No space left on device")
            raise StorageUnavailable.of(full)
        super().put(entries)


def test_a_verdict_the_storage_refuses_for_a_while_is_kept_and_paid_once(scripted):
    """Issue 57: a verdict whose write failed (the database's disk full for
    a moment) failed its chunk, whose retry paid for it again. The write is
    tried again, up to the judge's deadline."""
    cache = RefusingCache(refusals=3)
    outcomes = make_judge(scripted, cache=cache).evaluate(
        [item(f"[[al={60 + n}]]") for n in range(4)]
    )
    assert [outcome.status for outcome in outcomes] == ["ok"] * 4
    assert len(cache.entries) == 4 and cache.refused == 3
    assert scripted.state.calls == 4


def test_once_a_verdict_cannot_be_stored_no_further_call_goes_out(scripted):
    """Issue 57: when a verdict could not be stored (past the deadline), the
    chunk failed while its other calls, queued in the pool, still went out,
    and their verdicts were lost as well (its retry paid for each again)."""
    judge = make_judge(scripted, cache=RefusingCache(), deadline_s=0.3)
    judge.pool = JudgePool(1)  # one call at a time: the rest wait in the pool
    POOLS.append(judge.pool)
    with pytest.raises(StorageUnavailable):
        judge.evaluate([item(f"[[al={60 + n}]]") for n in range(6)])

    async def nothing():
        return None

    # behind the chunk's calls in the pool: once it ran, they all had their turn
    lane = f"{judge.config.base_url} {judge.config.model}"
    judge.pool.submit(nothing, key=judge.fair_key, lane=lane).result(timeout=60)
    assert scripted.state.calls == 1  # the one under way when it failed


def test_cache_key_depends_on_every_input():
    config = JudgeConfig(base_url="http://a/v1", model="m")
    base = item("x")
    keys = {
        cache_key(config, base, 0),
        cache_key(config, base, 1),
        cache_key(JudgeConfig(base_url="http://a/v1", model="m2"), base, 0),
        cache_key(
            JudgeConfig(base_url="http://a/v1", model="m", temperature=0.7), base, 0
        ),
        cache_key(config, item("y"), 0),
    }
    assert len(keys) == 5


def test_api_key_is_not_public():
    config = JudgeConfig(base_url="http://a/v1", model="m", api_key="sk-secret")
    assert "sk-secret" not in repr(config.public())


@pytest.mark.parametrize(
    ("header", "seconds"), [("2", 2.0), ("1000", 120.0), ("soon", None)]
)
def test_retry_after_parsing(header, seconds):
    assert parse_retry_after(header) == seconds


# -- bounded replies and calls ----------------------------------------------------
def test_a_huge_reply_is_unscored_unread_and_a_dripping_one_ends_at_the_deadline(
    judge_server,
):
    from core.status import RowStatus
    from evaluator import Judge, JudgeConfig

    config = JudgeConfig(
        base_url=judge_server.url,
        model="scripted",
        max_retries=0,
        max_reply_bytes=64 * 1024,
        deadline_s=1.0,
        timeout_s=5.0,
    )
    judge = Judge(config)
    huge, drip = judge.evaluate([item("x [[fault=huge]]"), item("y [[fault=drip]]")])
    assert huge.status == RowStatus.UNSCORED and huge.note.code == "reply_too_large"
    assert drip.status == RowStatus.ERROR and drip.note.code == "network_error"
    assert drip.note.params == {"kind": "DeadlineExceeded"}


def test_cancelling_ends_the_calls_in_flight(judge_server):
    import time

    from core.status import Cancelled
    from evaluator import Judge, JudgeConfig

    config = JudgeConfig(
        base_url=judge_server.url,
        model="scripted",
        max_retries=0,
        deadline_s=120.0,
        timeout_s=30.0,
    )
    started = time.monotonic()
    judge = Judge(config, should_stop=lambda: time.monotonic() - started > 0.3)
    with pytest.raises(Cancelled):
        judge.evaluate([item("z [[fault=drip]]")])
    # the dripping reply would take minutes; its call was cut, the slot is free
    deadline = time.monotonic() + 30
    while judge.pool.in_flight and time.monotonic() < deadline:
        time.sleep(0.05)
    assert judge.pool.in_flight == 0
    assert time.monotonic() - started < 30  # not the reply's minutes


def test_the_pool_takes_runs_in_turn():
    """A run with many calls queued does not make the next run wait for
    them all: a freed slot takes from each run's queue in turn."""
    import asyncio
    import threading
    import time

    from evaluator import JudgePool

    pool, started, release = JudgePool(2), [], threading.Event()

    async def call(name):
        started.append(name)
        while not release.is_set():  # (the loop's other calls go on)
            await asyncio.sleep(0.01)
        return name

    first = [pool.submit(call, f"a{i}", key="run-a") for i in range(20)]
    deadline = time.monotonic() + 30
    while len(started) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    other = pool.submit(call, "b0", key="run-b")
    release.set()
    assert other.result(30) == "b0"
    assert [f.result(30) for f in first] == [f"a{i}" for i in range(20)]
    assert started.index("b0") <= 3  # after the two under way, at its turn
    pool.shutdown()
    assert pool.submit(call, "again").result(30) == "again"  # usable after
    pool.shutdown()


def test_withdrawn_calls_never_start_and_those_under_way_end():
    """A chunk that failed withdraws its calls still waiting for a slot
    (issue 57): it does not wait for a slot to free to learn they will not
    go out, and the calls under way are not cut (they were paid for)."""
    import asyncio
    import threading
    import time

    pool, started, release = JudgePool(1), [], threading.Event()
    POOLS.append(pool)

    async def call(name):
        started.append(name)
        while not release.is_set():
            await asyncio.sleep(0.01)
        return name

    futures = [pool.submit(call, f"c{i}", key="run") for i in range(4)]
    deadline = time.monotonic() + 30
    while not started and time.monotonic() < deadline:
        time.sleep(0.01)
    pool.withdraw(futures)
    assert [f.cancelled() for f in futures] == [False, True, True, True]
    release.set()
    assert futures[0].result(30) == "c0"
    assert pool.submit(call, "after").result(30) == "after"
    assert started == ["c0", "after"]


def test_a_cancel_counts_the_tokens_of_the_calls_under_way():
    """Issue 56, found by the witness: cut at the cancel, a call the server
    had answered was paid for and its tokens never counted (judge_usage
    below what the provider reported)."""
    import time

    from core.status import Cancelled

    with ScriptedJudge(latency=0.5) as server:
        config = JudgeConfig(
            base_url=server.url, model="scripted", max_retries=0, concurrency=4
        )
        started = time.monotonic()
        judge = Judge(config, should_stop=lambda: time.monotonic() - started > 0.2)
        POOLS.append(judge.pool)
        with pytest.raises(Cancelled):
            judge.evaluate([item(f"r{n} [[al=50]]") for n in range(8)])
        reported = server.state.reported.by_model["scripted"]
        counted = judge.usage.by_model()["scripted"]
    assert reported["calls"] >= 1  # some were under way at the cancel
    for field in ("prompt_tokens", "completion_tokens"):
        assert counted[field] == reported[field], field
