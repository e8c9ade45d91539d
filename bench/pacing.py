"""Issue 49's pacing drill: the product's judge client (``evaluator.Judge``
with a run's default ``JudgeConfig``: retries, ``Retry-After``) sends 1,000
alignment calls at concurrency 64 to a scripted judge that enforces OpenAI's
rate limits (``testing/judge_limits.py``: RPM/60 requests and TPM/60 tokens
in any sliding second, 429 with ``retry-after``).

* ``requests``: 3,000 RPM (50 a second) binds; floor 1,000 / 50 = 20 s.
* ``tokens``: a TPM that admits about 25 of these requests a second binds
  (a request reserves its prompt plus ``max_tokens`` 1,024); floor = the
  calls' tokens / (TPM / 60).
* ``requests_rejected_counted``: 3,000 RPM where a 429 also counts against
  the limit (OpenAI: "unsuccessful requests contribute to your per-minute
  limit").

Target (issue 49): wall time <= 1.10x the floor + 3 s, and <= 1% of requests
answered 429. The scripted judge runs in its own process (no shared GIL).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

from bench.judge_orchestration import ROOT

CALLS = 1_000
CONCURRENCY = 64
RPM = 3_000
REQUESTS_PER_SECOND_BY_TOKENS = 25  # where the token limit is set to bind


def serve_limited(rpm: int, tpm: int | None, count_rejected: bool) -> None:
    """Child process: a rate-limited scripted judge. Prints its URL, then its
    counts as JSON once per line read from stdin."""
    from testing.judge_server import ScriptedJudge

    with ScriptedJudge(rpm=rpm, tpm=tpm, count_rejected=count_rejected) as judge:
        print(judge.url, flush=True)
        for _ in sys.stdin:
            state = judge.state
            counts = {"admitted": state.admitted, "rate_limited": state.rate_limited}
            print(json.dumps(counts), flush=True)


def _start(rpm: int, tpm: int | None, count_rejected: bool) -> tuple:
    code = (
        "from bench.pacing import serve_limited; "
        f"serve_limited({rpm}, {tpm}, {count_rejected})"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", code],
        cwd=ROOT,
        text=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    return process, process.stdout.readline().strip()


def _counts(process: subprocess.Popen) -> dict:
    process.stdin.write("\n")
    process.stdin.flush()
    return json.loads(process.stdout.readline())


def _items() -> list:
    """1,000 distinct alignment requests, as the alignment suite renders them."""
    from metrics.judging import JudgeItem
    from metrics.suites.alignment import ALIGNMENT

    def one(n: int) -> JudgeItem:
        messages = ALIGNMENT.template.render(
            profile=f"profile {n}",
            personality="curious",
            history="(none)",
            user_message=f"question {n}",
            response=f"reply {n} [[al={n % 100}]]",
        )
        return JudgeItem(ALIGNMENT, tuple(messages))

    return [one(n) for n in range(CALLS)]


def _tokens(items: list, max_tokens: int) -> int:
    """The tokens these calls reserve, counted as the scripted judge counts."""
    from testing.judge_limits import request_tokens

    bodies = ({"messages": list(i.messages), "max_tokens": max_tokens} for i in items)
    return sum(request_tokens(body) for body in bodies)


def _drill(items: list, floor_s: float, tpm: int | None, count_rejected=False) -> dict:
    from evaluator import Judge, JudgeConfig

    process, url = _start(RPM, tpm, count_rejected)
    try:
        judge = Judge(
            JudgeConfig(base_url=url, model="scripted", concurrency=CONCURRENCY)
        )
        started = time.monotonic()
        outcomes = judge.evaluate(items)
        wall = time.monotonic() - started
        judge.pool.shutdown()
        counts = _counts(process)
    finally:
        process.kill()
        process.wait()
    sent = counts["admitted"] + counts["rate_limited"]
    return {
        "wall_s": round(wall, 2),
        "floor_s": round(floor_s, 2),
        "ratio": round(wall / floor_s, 2),
        "target_met": wall <= 1.10 * floor_s + 3
        and counts["rate_limited"] <= 0.01 * sent,
        "requests_sent": sent,
        "answered_429": counts["rate_limited"],
        "share_429": round(counts["rate_limited"] / sent, 3),
        "failed_calls": sum(o.status != "ok" for o in outcomes),
    }


def run() -> dict:
    from judge_client.config import JudgeConfig

    items = _items()
    max_tokens = JudgeConfig(base_url="", model="").max_tokens
    tokens = _tokens(items, max_tokens)
    per_request = tokens / len(items)
    # rounded to 10,000 TPM, about 25 requests a second (RPM allows 50)
    tpm = round(60 * REQUESTS_PER_SECOND_BY_TOKENS * per_request, -4)
    floor_requests = CALLS / (RPM / 60)
    return {
        "calls": CALLS,
        "concurrency": CONCURRENCY,
        "rpm": RPM,
        "requests": _drill(items, floor_requests, None),
        "tpm": int(tpm),
        "tokens_per_request": round(per_request),
        "tokens": _drill(items, tokens / (tpm / 60), int(tpm)),
        "requests_rejected_counted": _drill(items, floor_requests, None, True),
    }


if __name__ == "__main__":
    print(json.dumps(run(), indent=1))
