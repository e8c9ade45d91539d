"""The scripted judge's rate limits (testing/judge_limits.py): OpenAI's
requests and tokens per minute, 1/60 of each in any sliding second, its
headers and 429s. The windows move with an injected clock (no sleeping);
HTTP checks the wiring into the server."""

from __future__ import annotations

import pytest
import requests

from testing.judge_limits import RateLimits, duration, request_tokens
from testing.judge_server import ScriptedJudge

HEADERS = [
    f"x-ratelimit-{what}-{kind}"
    for kind in ("requests", "tokens")
    for what in ("limit", "remaining", "reset")
]


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def limits(**options) -> tuple[RateLimits, Clock]:
    clock = Clock()
    return RateLimits(clock=clock, **options), clock


def admitted(limiter: RateLimits, count: int, tokens: int = 10) -> int:
    return sum(limiter.admit(tokens).error is None for _ in range(count))


# -- the limiter, on its own clock ---------------------------------------------


def test_fifty_a_second_at_3000_rpm_and_the_51st_waits():
    limiter, _ = limits(rpm=3000)
    assert admitted(limiter, 50) == 50
    verdict = limiter.admit(10)
    assert verdict.error["error"]["type"] == "requests"
    assert verdict.error["error"]["code"] == "rate_limit_exceeded"
    assert (verdict.headers["retry-after"], verdict.headers["retry-after-ms"]) == (
        "1",
        "1000",
    )
    assert (limiter.admitted, limiter.rejected) == (50, 1)


def test_the_window_slides():
    limiter, clock = limits(rpm=3000)
    admitted(limiter, 25)
    clock.now += 0.5
    admitted(limiter, 25)
    clock.now += 0.25
    assert limiter.admit(10).error is not None  # 50 in the last second
    clock.now += 0.25  # the first 25 have left it
    assert admitted(limiter, 26) == 25
    assert limiter.admit(10).headers["retry-after-ms"] == "500"


def test_a_rejected_request_consumes_nothing_unless_asked():
    for count_rejected, then in ((False, 50), (True, 49)):
        limiter, clock = limits(rpm=3000, count_rejected=count_rejected)
        admitted(limiter, 50)
        clock.now += 0.5
        assert limiter.admit(10).error is not None
        clock.now += 0.5  # the 50 have left; the rejected one (at +0.5) not
        assert admitted(limiter, 50) == then


def test_a_token_limit_binds_before_the_requests():
    limiter, clock = limits(rpm=3000, tpm=60_000)  # 1,000 tokens a second
    assert limiter.admit(600).error is None
    verdict = limiter.admit(600)
    assert verdict.error["error"]["type"] == "tokens"
    assert verdict.headers["retry-after-ms"] == "1000"
    assert limiter.admit(400).error is None  # what is left of the second
    clock.now += 1.0
    assert limiter.admit(600).error is None


def test_a_request_larger_than_the_window_is_refused_without_a_wait():
    limiter, _ = limits(tpm=60_000)
    verdict = limiter.admit(1_001)
    assert "Request too large" in verdict.error["error"]["message"]
    assert "retry-after" not in verdict.headers


def test_headers_count_down_in_openai_units():
    limiter, clock = limits(rpm=3000, tpm=600_000)
    first = limiter.admit(100).headers
    assert first["x-ratelimit-limit-requests"] == "3000"
    assert first["x-ratelimit-remaining-requests"] == "2999"
    assert first["x-ratelimit-remaining-tokens"] == "599900"
    # the used part given back at the limit's rate: 1 request of 3,000 a minute
    assert first["x-ratelimit-reset-requests"] == "20ms"
    clock.now += 30
    second = limiter.admit(100).headers
    assert second["x-ratelimit-remaining-requests"] == "2998"
    assert second["x-ratelimit-reset-tokens"] == "20ms"  # 200 of 600,000 a minute
    clock.now += 59.875  # the first has left the minute
    assert limiter.admit(100).headers["x-ratelimit-remaining-requests"] == "2998"


def test_only_the_limits_set_are_stated():
    limiter, _ = limits(rpm=60)
    assert set(limiter.admit(5).headers) == set(HEADERS[:3])


def test_durations_are_written_as_openai_does():
    assert [duration(s) for s in (0, 0.0004, 0.12, 1, 1.5, 17.25, 360, 61.25)] == [
        "0s",
        "0s",
        "120ms",
        "1s",
        "1.5s",
        "17.25s",
        "6m0s",
        "1m1.25s",
    ]


def test_a_request_reserves_its_prompt_and_its_allowance():
    messages = [
        {"role": "system", "content": "s" * 40},
        {"role": "user", "content": "u" * 40},
    ]
    assert request_tokens({"messages": messages}) == 20
    assert request_tokens({"messages": messages, "max_tokens": 1024}) == 1044
    assert request_tokens({"messages": messages, "max_completion_tokens": 7}) == 27


# -- over HTTP: the scripted judge ----------------------------------------------


def ask(judge: ScriptedJudge, session: requests.Session, max_tokens: int = 16):
    body = {
        "model": "scripted",
        "messages": [{"role": "user", "content": "hello [[al=70]]"}],
        "max_tokens": max_tokens,
    }
    return session.post(f"{judge.url}/chat/completions", json=body, timeout=10)


@pytest.fixture
def session():
    with requests.Session() as opened:
        yield opened


def frozen(judge: ScriptedJudge) -> Clock:
    clock = Clock()
    judge.state.limits.clock = clock
    return clock


def test_the_server_answers_the_51st_request_of_a_second_429(session):
    with ScriptedJudge(rpm=3000) as judge:
        clock = frozen(judge)
        replies = [ask(judge, session) for _ in range(51)]
        assert [r.status_code for r in replies] == [200] * 50 + [429]
        remaining = [int(r.headers["x-ratelimit-remaining-requests"]) for r in replies]
        assert remaining[:3] == [2999, 2998, 2997]
        assert all(set(HEADERS[:3]) <= set(r.headers) for r in replies)
        refused = replies[-1]
        assert refused.json()["error"]["type"] == "requests"
        assert (refused.headers["retry-after"], refused.headers["retry-after-ms"]) == (
            "1",
            "1000",
        )
        assert (judge.state.admitted, judge.state.rate_limited) == (50, 1)
        assert judge.state.calls == 50  # a 429 never reaches the verdicts
        clock.now += 1.0
        assert ask(judge, session).status_code == 200


def test_the_server_limits_tokens_with_a_large_max_tokens(session):
    with ScriptedJudge(rpm=3000, tpm=120_000) as judge:  # 2,000 tokens a second
        frozen(judge)
        assert ask(judge, session, max_tokens=1500).status_code == 200
        refused = ask(judge, session, max_tokens=1500)
        assert refused.status_code == 429
        assert refused.json()["error"]["type"] == "tokens"
        assert "retry-after" in refused.headers
        assert ask(judge, session, max_tokens=16).status_code == 200


def test_without_limits_nothing_changes(session):
    with ScriptedJudge() as judge:
        replies = [ask(judge, session) for _ in range(60)]
        assert {r.status_code for r in replies} == {200}
        assert not any(h in r.headers for r in replies for h in HEADERS)
        assert (judge.state.rate_limited, judge.state.admitted) == (0, 60)
