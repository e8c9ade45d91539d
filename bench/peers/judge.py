"""The rate-limited scripted judge for the peers, in its own process as in
``bench/pacing.py``, that also notes when each request arrived and what it
reserved: a peer's wall time is taken on the server (first request to last
answer), so a peer's start-up (Node, Inspect's imports) is not counted as
pacing, and its tokens per request show the token scenario is the same as
ours."""

from __future__ import annotations

import json
import subprocess
import sys
import time

from bench.judge_orchestration import ROOT


class Arrivals:
    """Stands in for the judge's ``record_to`` file (written under its lock,
    once per request received, before the limits are applied)."""

    def __init__(self):
        self.times: list[float] = []
        self.tokens: list[int] = []

    def write(self, line: bytes) -> None:
        from testing.judge_limits import request_tokens

        self.times.append(time.time())  # the clock of state.last_call_at
        self.tokens.append(request_tokens(json.loads(line)))


def serve(rpm: int, tpm: int | None, count_rejected: bool) -> None:
    """Child process: print the judge's URL, then its counts as JSON once
    per line read from stdin."""
    from testing.judge_server import ScriptedJudge

    with ScriptedJudge(rpm=rpm, tpm=tpm, count_rejected=count_rejected) as judge:
        arrivals = judge.state.record_to = Arrivals()
        print(judge.url, flush=True)
        for _ in sys.stdin:
            print(json.dumps(_counts(judge.state, arrivals)), flush=True)


def _counts(state, arrivals: Arrivals) -> dict:
    with state.lock:
        times, tokens = list(arrivals.times), list(arrivals.tokens)
        last_answer = state.last_call_at or 0.0
    span = max([last_answer, *times]) - times[0] if times else 0.0
    return {
        "admitted": state.admitted,
        "rate_limited": state.rate_limited,
        "span_s": span,
        "tokens_per_request": sum(tokens) / len(tokens) if tokens else 0,
    }


class LimitedJudge:
    """``with LimitedJudge(rpm, tpm, count_rejected) as judge:`` judge.url,
    judge.counts()."""

    def __init__(self, rpm: int, tpm: int | None, count_rejected: bool):
        code = f"from bench.peers.judge import serve; serve({rpm}, {tpm}, {count_rejected})"
        self.process = subprocess.Popen(
            [sys.executable, "-c", code],
            cwd=ROOT,
            text=True,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        self.url = self.process.stdout.readline().strip()

    def counts(self) -> dict:
        self.process.stdin.write("\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())

    def __enter__(self) -> LimitedJudge:
        return self

    def __exit__(self, *exc) -> None:
        self.process.kill()
        self.process.wait()
