"""A hostile or broken judge (issue 57): absurd rate-limit headers, a 429
for ever, a stated limit of hours a request. Each run ends final, or says
why it waits, within a stated bound; nothing is paid beyond its units and
the requests in flight."""

from __future__ import annotations

import time

from testing.judge_server import ScriptedJudge
from tests import crafted
from tests.pipeline_support import FAST_JUDGE, evaluate, submit, wait_for

BOUND_S = 120.0  # each run's end (or its stated stall), generous on a loaded machine


def sessions(tag: str, directive: str, count: int = 6) -> list[dict]:
    """``count`` sessions of two methods, two rounds: 24 judge items."""
    return [
        crafted.session(
            f"{tag}{n}",
            {
                "A": [f"[[al={n}]] {directive} {tag} {k}" for k in range(2)],
                "B": [f"[[al={n + 5}]] {directive} {tag} {k}" for k in range(2)],
            },
        )
        for n in range(count)
    ]


def test_absurd_limit_headers_never_stop_the_judge(app_factory, tmp_path):
    """``x-ratelimit-limit-requests: inf`` once stopped the process's judge
    until a restart (the next healthy run: 0 requests in 302 s). Runs whose
    every reply states inf, 1e400 or nan as its limits are done, and so is
    a healthy run after them, in the same process, on the same endpoint."""
    with ScriptedJudge() as server:
        app = app_factory(
            JUDGE_API_URL=server.url,
            JUDGE_MODEL="scripted",
            **{**FAST_JUDGE, "JUDGE_CONCURRENCY": 4},
        )
        for said in ("inf", "1e400", "nan", "healthy"):
            directive = "" if said == "healthy" else f"[[limits={said}]]"
            path = crafted.write(tmp_path / f"{said}.jsonl", sessions(said, directive))
            started = time.monotonic()
            document = wait_for(
                app, submit(app, path, server, suites=["alignment"]), timeout=BOUND_S
            )
            assert document["run"]["status"] == "done", said
            assert time.monotonic() - started < BOUND_S


def test_a_judge_that_refuses_every_request_ends_the_run_with_the_reason(
    app_factory, tmp_path
):
    """429 on every attempt: each item fails after its retries and the run
    ends (failed: no verdict could be read) naming HTTP 429, within the
    bound; requests = items x attempts, nothing more."""
    with ScriptedJudge() as server:
        app = app_factory(
            JUDGE_API_URL=server.url, JUDGE_MODEL="scripted", **FAST_JUDGE
        )
        path = crafted.write(
            tmp_path / "refused.jsonl", sessions("r", "[[fault=429_always]]", 2)
        )
        document = evaluate(app, path, server, suites=["alignment"])
    assert document["run"]["status"] == "failed"
    # (the alignment suite asks two questions of each reply: al and binary)
    judged = [row for row in document["rows"] if row["metric"] in ("al", "binary")]
    assert len(judged) == 16 and {row["note_code"] for row in judged} == {"http_error"}
    attempts = FAST_JUDGE["JUDGE_MAX_RETRIES"] + 1
    assert (
        server.state.calls <= len(judged) * attempts + FAST_JUDGE["JUDGE_CONCURRENCY"]
    )


def test_a_stated_limit_of_hours_a_request_is_said_on_the_run(app_factory, tmp_path):
    """A reply stating 10 tokens a minute (about two hours a request): the
    run's status says it waits on the judge's rate limits, with them, by
    RUN_STALL_S + the watchdog's interval, instead of sitting silent; a
    cancel then ends it."""
    with ScriptedJudge() as server:
        app = app_factory(
            JUDGE_API_URL=server.url,
            JUDGE_MODEL="scripted",
            RUN_STALL_S=2.0,
            WATCHDOG_INTERVAL_S=0.5,
            **FAST_JUDGE,
        )
        path = crafted.write(tmp_path / "slow.jsonl", sessions("s", "[[limits=10]]"))
        run_id = submit(app, path, server, suites=["alignment"])
        service, storage = app.extensions["runs"], app.extensions["storage"]
        deadline = time.monotonic() + BOUND_S
        while True:
            run = storage.runs.get_run(run_id)
            stalled = service.progress(run)["stalled"]
            if stalled is not None and stalled["cause"] == "judge_limits":
                break
            assert run.status == "running" or run.status == "queued", run.status
            assert time.monotonic() < deadline, "the run sat silent"
            time.sleep(0.1)
        assert "10 tokens a minute" in stalled["message"]
        assert not stalled["handed_out_again"]  # waiting is right: said, not retried
        service.cancel(run)
        document = wait_for(app, run_id, timeout=BOUND_S)
    assert document["run"]["status"] == "cancelled"
