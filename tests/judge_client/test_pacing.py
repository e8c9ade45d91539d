"""Requests paced under a judge endpoint's rate limits (issue 49):
evenly spaced, never more than a second's share in any second, a 429
slowing the pace and holding requests until its retry-after."""

from __future__ import annotations

import math

from evaluator import Judge, JudgeConfig
from judge_client.pacing import MARGIN, Pace, retry_after_s
from testing.judge_server import ScriptedJudge
from tests import crafted
from tests.pipeline_support import FAST_JUDGE, evaluate
from tests.test_evaluator import item


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_limits_come_from_each_reply_else_the_settings():
    pace = Pace(rpm=600, clock=Clock())
    pace.observe(
        200, {"x-ratelimit-limit-requests": "3000", "x-ratelimit-limit-tokens": "90000"}
    )
    assert (pace.rpm, pace.tpm) == (3000, 90000)
    pace.observe(200, {})  # the server stopped saying them: the settings again
    assert (pace.rpm, pace.tpm) == (600, None)
    pace.observe(None, {})  # no reply: nothing learned
    assert (pace.rpm, pace.tpm) == (600, None)


def test_requests_are_spaced_and_capped_per_second():
    clock = Clock()
    pace = Pace(rpm=3000, clock=clock)
    assert pace.interval(tokens=0) == 60 / (3000 * MARGIN)
    for _ in range(math.ceil(3000 * MARGIN / 60)):  # a second's share at once
        pace._sent.append((clock.now, 0))
    pace.next_at = clock.now
    assert pace._wait_s(0) == 1.0  # the oldest must leave the second first
    clock.now += 1.0
    assert pace._wait_s(0) == 0.0


def test_tokens_bind_too():
    clock = Clock()
    pace = Pace(tpm=60_000, clock=clock)  # 1,000 tokens a second
    pace._sent.append((clock.now, 900))
    assert pace._wait_s(100) > 0 and pace._wait_s(40) == 0.0
    assert pace.interval(tokens=950) == 60 * 950 / (60_000 * MARGIN)


def test_a_429_slows_the_pace_and_holds_until_its_retry_after():
    clock = Clock()
    pace = Pace(rpm=3000, clock=clock)
    pace.observe(
        429,
        {
            "retry-after-ms": "1500",
            "retry-after": "2",
            "x-ratelimit-limit-requests": "3000",
        },
    )
    assert pace.share < 1.0 and pace.held_until == clock.now + 1.5
    assert pace._wait_s(0) == 1.5
    slower = pace.share
    pace.observe(200, {"x-ratelimit-limit-requests": "3000"})
    assert slower < pace.share <= 1.0  # given back a little at a time


def test_retry_after_is_bounded():
    assert retry_after_s({"retry-after": "86400"}) == 120.0
    assert retry_after_s({"retry-after": "soon"}) is None


def test_against_a_limited_judge_no_request_is_refused():
    """120 calls at 16 in flight against 1,200 requests a minute (20 in any
    second): every one scored, (almost) none answered 429."""
    with ScriptedJudge(rpm=1200) as server:
        config = JudgeConfig(base_url=server.url, model="scripted", concurrency=16)
        judge = Judge(config)
        try:
            outcomes = judge.evaluate([item(f"[[al={n % 90}]]") for n in range(120)])
        finally:
            judge.pool.shutdown()
        assert [o.status for o in outcomes] == ["ok"] * 120
        # none on a quiet machine (bench pacing: 0 of 1,000); a loaded one
        # delays some sends and they arrive bunched. Unpaced, over half were.
        assert server.state.rate_limited <= 12


def test_a_run_held_back_by_the_limits_says_so(app_factory, tmp_path):
    """The time requests waited their turn is counted per judge model
    (``paced_ms``), and progress names the rate limits as what the run waits
    on: 40 calls at 16 in flight against 600 requests a minute."""
    with ScriptedJudge(rpm=600) as server:
        app = app_factory(
            JUDGE_API_URL=server.url,
            JUDGE_MODEL="scripted",
            **{**FAST_JUDGE, "JUDGE_CONCURRENCY": 16},
        )
        sessions = [
            crafted.session(
                f"s{n}",
                {
                    "A": [f"[[al={n}]] {k}" for k in range(2)],
                    "B": [f"[[al={n + 5}]] {k}" for k in range(2)],
                },
            )
            for n in range(5)
        ]
        path = crafted.write(tmp_path / "paced.jsonl", sessions)
        document = evaluate(app, path, None, suites=["alignment"])
    used = document["judge_usage"]["scripted"]
    assert used["calls"] >= 40 and used["paced_ms"] > 0  # (and a 429 or re-ask)
    service = app.extensions["runs"]
    run = app.extensions["storage"].runs.get_run(document["run"]["id"])
    waiting = service._waiting(run)  # what the page said while it ran
    assert waiting["on"] == "rate_limit" and waiting["mean_wait_s"] >= 0.1


def test_absurd_limit_headers_are_ignored_and_never_park_the_waiters():
    """Issue 57: ``x-ratelimit-limit-requests: inf`` (or tokens ``1e400``)
    raised OverflowError in ``observe`` before the first-reply wait ended,
    and every later request of the process waited on it for ever. A value
    that is not a finite count is ignored (the configured limit stands)."""
    for said in ("inf", "1e400", "nan", "-5", "abc", "1e30"):
        pace = Pace(rpm=600)
        pace.observe(
            200, {"x-ratelimit-limit-requests": said, "x-ratelimit-limit-tokens": said}
        )
        assert pace.known and pace._turn.is_set()
        assert pace.rpm in (600, int(1e30)) and pace.tpm in (None, int(1e30))
        assert math.isfinite(pace.interval(tokens=100))


def test_early_requests_that_end_unsent_let_the_others_go():
    """Issue 57: when the first EARLY requests of a fresh pace all end before
    sending (the run cancelled, its budget refused, a database error), no
    reply ever ends the wait for the first reply: a waiter's turn comes
    when an early slot is given back, and the wait has a deadline."""
    import asyncio

    from judge_client.pacing import EARLY

    async def scenario() -> list[float]:
        pace = Pace()
        for _ in range(EARLY):
            assert await pace.admit(10, 10) == 0.0
        waiter = asyncio.ensure_future(pace.admit(10, 10))
        await asyncio.sleep(0)
        assert not waiter.done()
        pace.unsent()  # an early request ended without being sent
        first = await asyncio.wait_for(waiter, timeout=60)
        # with every early slot still out, a wait ends at its deadline
        late = await asyncio.wait_for(pace.admit(10, 10, first_reply_s=0.05), 60)
        return [first, late]

    first, late = asyncio.run(scenario())
    assert first == 0.0 and late < 1.0  # went, unpaced: no limit is known
