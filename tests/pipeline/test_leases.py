"""Chunk leases (store/leases.py, pipeline/leases.py): a judge call is paid
once through redelivery and lease expiry, and a worker whose lease was
taken writes nothing more."""

from __future__ import annotations

import os
import threading
from datetime import timedelta
from time import monotonic, sleep

import pytest

from core.clock import utcnow
from core.status import Cancelled, LeaseLost
from judge_client.outcome import StopCheck
from pipeline import dispatch
from pipeline.leases import LEASES
from pipeline.names import EVALUATE_CHUNK
from pipeline.service.runs import RunRequest
from pipeline.worker import execution
from tests import crafted
from tests.pipeline.test_progress import RUN_FIELDS, planned_run

ROW = {
    "session_id": "s1",
    "round": 1,
    "method": "Ours",
    "metric": "al",
    "value": 50.0,
    "status": "ok",
}


def _past(seconds: float):
    return utcnow() - timedelta(seconds=seconds)


def test_a_redelivered_task_leaves_a_live_lease_alone(any_storage):
    run = planned_run(any_storage)
    first = any_storage.chunks.start_chunk(
        run.id, 0, holder="a", expired_before=_past(60)
    )
    assert first is not None and (first.lease, first.claims) == (1, 1)
    again = any_storage.chunks.start_chunk(
        run.id, 0, holder="b", expired_before=_past(60)
    )
    assert again is None  # the first worker still holds it: nothing to run
    expired = any_storage.chunks.start_chunk(
        run.id, 0, holder="b", expired_before=_past(-1)
    )
    assert expired is not None and (expired.lease, expired.claims) == (2, 2)


def test_a_renewal_tells_a_lease_taken_from_a_chunk_just_finished(any_storage):
    run = any_storage.runs.create_run(**RUN_FIELDS, total=20)
    any_storage.chunks.plan_chunks(run.id, [(0, 0, 10, 10), (1, 10, 20, 10)])
    done = any_storage.chunks.start_chunk(run.id, 0, holder="a")
    taken = any_storage.chunks.start_chunk(run.id, 1, holder="a")
    assert any_storage.chunks.finish_chunk(run.id, 0, done.units, lease=done.lease)
    assert any_storage.chunks.release_chunk(
        run.id, 1, "lease expired", lease=taken.lease
    )
    held = [(run.id, 0, done.lease), (run.id, 1, taken.lease)]
    assert any_storage.chunks.renew(held) == {(run.id, 1, taken.lease)}


def test_a_lost_lease_writes_nothing(any_storage):
    run = planned_run(any_storage)
    old = any_storage.chunks.start_chunk(run.id, 0, holder="a")
    assert any_storage.chunks.release_chunk(run.id, 0, "lease expired", lease=old.lease)
    new = any_storage.chunks.start_chunk(run.id, 0, holder="b")
    with pytest.raises(LeaseLost):
        any_storage.rows.upsert_rows(
            [{**ROW, "run_id": run.id}], fence=(run.id, 0, old.lease)
        )
    assert any_storage.rows.rows(run.id) == []
    # its calls were made: counted; its units are not
    assert (
        any_storage.progress.record_progress(
            run.id, 0, 50, lease=old.lease, judge_calls=3
        )
        == 0
    )
    assert any_storage.chunks.beat(run.id, 0, old.lease) is False
    assert any_storage.chunks.finish_chunk(run.id, 0, 100, lease=old.lease) is False
    assert any_storage.rows.upsert_rows(
        [{**ROW, "run_id": run.id}], fence=(run.id, 0, new.lease)
    )
    assert any_storage.chunks.finish_chunk(run.id, 0, 100, lease=new.lease) is True
    loaded = any_storage.runs.get_run(run.id)
    assert (loaded.done, loaded.judge_calls) == (100, 3)


def test_a_sweep_renews_and_keeps_its_own_process_leases(app_factory):
    app = app_factory(CHUNK_STALL_S=1.0, MAX_CHUNK_ATTEMPTS=3)
    storage = app.extensions["storage"]
    ctx = execution.Context(storage, app.config, lambda *task: None)
    mine, theirs = planned_run(storage), planned_run(storage)
    held = storage.chunks.start_chunk(mine.id, 0, holder=LEASES.holder)
    storage.chunks.start_chunk(theirs.id, 0, holder="elsewhere:1:dead")
    LEASES.hold(mine.id, 0, held.lease)
    try:
        sleep(1.2)  # both leases expire; this process is slow, not dead
        assert execution.sweep(ctx)["stale"] == 1
        assert storage.chunks.chunk_states(mine.id) == {"running": 1}
        assert storage.chunks.chunk_states(theirs.id) in ({"pending": 1}, {"sent": 1})
        assert storage.chunks.beat(mine.id, 0, held.lease)  # still this process's
    finally:
        LEASES.drop(mine.id, 0)


def test_a_stale_answer_is_not_used_after_a_stall():
    """After a pause longer than ``fresh_s`` (a stopped or starved process)
    a call waits for the new answer instead of going out on the old one."""
    asked = []

    def should_stop() -> bool:
        asked.append(monotonic())
        if len(asked) > 1:
            raise LeaseLost("taken while this process was stopped")
        return False

    check = StopCheck(should_stop, interval_s=0.05, fresh_s=0.1)
    check.check()  # the first answer: go on
    sleep(0.15)
    with pytest.raises(LeaseLost):
        check.check()
    with pytest.raises(Cancelled):  # and every later check says so
        check.check()
    assert len(asked) == 2


def _alignment_run(app, tmp_path, judge_server):
    service = app.extensions["runs"]
    sessions = [
        crafted.session(
            name,
            {
                method: crafted.scores([40 + k for k in range(5)], [1] * 5)
                for method in ("Base", "Ours")
            },
        )
        for name in ("a", "b")
    ]
    for session in sessions:  # every request its own: 40 calls, none alike
        session["user_profile"] += f" (session {session['session_id']})"
        for turn in session["rounds"]:
            turn["responses"]["Ours"] += " ours"
    path = crafted.write(tmp_path / "a.jsonl", sessions)
    request = RunRequest(
        suites=["alignment"], judge_url=judge_server.url, judge_model="scripted"
    )
    with path.open("rb") as stream:
        return service.create(stream, path.name, request)


def test_a_chunk_delivered_twice_at_once_is_judged_once(
    app_factory, tmp_path, judge_server
):
    """What made CI under load pay twice: Redis redelivered a chunk's task
    while its worker was still on it (past the visibility timeout)."""
    app = app_factory(CHUNK_UNITS=1000, **{"JUDGE_CONCURRENCY": 2})
    judge_server.state.latency = 0.02
    storage = app.extensions["storage"]
    run = _alignment_run(app, tmp_path, judge_server)
    sent: list[tuple] = []
    ctx = execution.Context(storage, app.config, lambda *task: sent.append(task))
    dispatch.dispatch(storage, app.config, ctx.send)
    [task] = [task for task in sent if task[0] == EVALUATE_CHUNK]
    both = [
        threading.Thread(target=execution.evaluate_chunk, args=(ctx, *task[1:3]))
        for _ in range(2)
    ]
    for thread in both:
        thread.start()
    for thread in both:
        thread.join()
    assert _paid_once(judge_server)
    assert storage.chunks.chunk_states(run.id) == {"done": 1}
    assert storage.runs.get_run(run.id).judge_calls == judge_server.state.calls


def test_verdicts_under_way_when_the_lease_is_taken_go_to_the_cache(
    app_factory, tmp_path, judge_server
):
    """A worker stopped past its lease: the next holder claims the chunk;
    the first makes no further call, and the replies it was waiting for
    are cached, so the next holder does not pay for them again."""
    app = app_factory(CHUNK_UNITS=1000, JUDGE_CONCURRENCY=4, CHUNK_STALL_S=1.0)
    judge_server.state.latency = 0.3
    storage = app.extensions["storage"]
    run = _alignment_run(app, tmp_path, judge_server)
    sent: list[tuple] = []
    ctx = execution.Context(storage, app.config, lambda *task: sent.append(task))
    dispatch.dispatch(storage, app.config, ctx.send)
    [task] = [task for task in sent if task[0] == EVALUATE_CHUNK]
    first = threading.Thread(target=execution.evaluate_chunk, args=(ctx, *task[1:3]))
    first.start()
    while judge_server.state.calls < 2:
        sleep(0.01)
    storage.chunks.release_chunk(run.id, 0, "lease expired")  # another worker's sweep
    first.join()
    paid_by_first = judge_server.state.calls
    assert paid_by_first < DISTINCT  # it stopped
    assert storage.rows.rows(run.id) == []  # and wrote nothing
    dispatch.dispatch(storage, app.config, ctx.send)
    retry = [task for task in sent if task[0] == EVALUATE_CHUNK][-1]
    execution.evaluate_chunk(ctx, *retry[1:3])
    assert storage.chunks.chunk_states(run.id) == {"done": 1}
    assert _paid_once(judge_server)  # in all, though two workers asked


DISTINCT = 40  # 2 sessions x 5 rounds x 2 methods x (alignment, binary)


def _paid_once(judge_server) -> bool:
    attempts = judge_server.state.attempts
    return len(attempts) == DISTINCT and set(attempts.values()) == {1}


def test_a_request_under_way_elsewhere_is_awaited_not_paid_again(
    any_storage, judge_server
):
    """Two workers ask the same questions at once (a new lease holder while
    the old one's calls are still out): the requests are claimed per cache
    key, so each is sent once and the other worker takes the verdict from
    the cache."""
    from evaluator import Judge, JudgeConfig
    from store.judge_cache import JudgeCache
    from tests.test_evaluator import item

    judge_server.state.latency = 0.3
    run = planned_run(any_storage)
    questions = [item(f"reply {n} [[al={40 + n}]]") for n in range(6)]
    config = JudgeConfig(
        base_url=judge_server.url,
        model="scripted",
        timeout_s=10,
        max_retries=0,
        concurrency=4,
    )
    found: dict[str, list] = {}

    def ask(holder: str) -> None:
        cache = JudgeCache(any_storage.judge_cache, run.id, holder=holder, claim_s=30.0)
        judge = Judge(config, cache=cache)
        try:
            found[holder] = judge.evaluate(questions)
        finally:
            judge.pool.shutdown()

    both = [threading.Thread(target=ask, args=(name,)) for name in ("a", "b")]
    for thread in both:
        thread.start()
    for thread in both:
        thread.join()
    assert judge_server.state.calls == len(questions)  # each paid once
    scores = [[o.verdict["score"] for o in found[h]] for h in ("a", "b")]
    assert scores[0] == scores[1] == [40.0 + n for n in range(6)]
    assert any_storage.judge_cache.requests_claimed(["x"]) == {}  # (nothing left over)


def test_a_request_of_a_killed_process_is_asked_again_at_once(any_storage):
    """A claim whose holder was killed on this host is void at once (its
    verdict cannot come); one of a live process, or of another host, stands
    until its deadline (a stopped process may still bring its verdict)."""
    import subprocess
    import sys

    from core.holders import this_host
    from store.judge_cache import JudgeCache

    ended = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    killed = f"{this_host()}:{ended.stdout.strip()}:dead"
    alive = f"{this_host()}:{os.getpid()}:other"
    until = utcnow() + timedelta(minutes=5)
    for key, holder in (("k1", killed), ("k2", alive), ("k3", "elsewhere:1:x")):
        assert any_storage.judge_cache.claim_requests([key], holder, until) == {key}
    cache = JudgeCache(
        any_storage.judge_cache, holder=f"{this_host()}:{os.getpid()}:me", claim_s=60
    )
    assert cache.claimed(["k1", "k2", "k3"]) == {"k2", "k3"}
    assert cache.claim(["k1", "k2", "k3"]) == {"k1"}


def test_a_retry_in_the_same_process_does_not_wait_on_a_failed_attempts_claims(
    any_storage,
):
    """Issue 57: a chunk that failed on a storage error could not release
    its claims (the release failed too), and its retry in the same live
    process waited for them to expire: 16 minutes at the defaults. A claim
    names its attempt; once the attempt has ended, its claims are void."""
    from core.holders import attempt, this_host
    from store.judge_cache import JudgeCache

    process = f"{this_host()}:{os.getpid()}:abcd"
    first, retry = f"{process}:0.1", f"{process}:0.2"
    with attempt(first):
        failed = JudgeCache(any_storage.judge_cache, holder=first, claim_s=960)
        assert failed.claim(["k1", "k2"]) == {"k1", "k2"}
        again = JudgeCache(any_storage.judge_cache, holder=retry, claim_s=960)
        assert again.claimed(["k1"]) == {"k1"}  # under way: awaited
    # the first attempt ended without releasing them (its storage failed)
    with attempt(retry):
        assert again.claimed(["k1", "k2"]) == set()
        assert again.claim(["k1", "k2"]) == {"k1", "k2"}


def test_a_cancelled_run_takes_no_row_and_its_stored_rows_are_counted(any_storage):
    """Issue 56: a chunk under way at the cancel stored its rows after the
    cancelled run was summarized (5,262 rows counted, 5,682 stored). The
    cancel waits for the chunks' fenced writes (``lock_in_flight``); a
    write after it is refused. ``stored_cover``: a suite stores a session
    whole, so sessions with rows of every suite are complete."""
    from metrics import registry

    run = planned_run(any_storage)
    chunk = any_storage.chunks.start_chunk(run.id, 0, holder="a")
    rows = [
        {
            **ROW,
            "run_id": run.id,
            "session_id": session,
            "round": k,
            "method": m,
            "metric": metric,
        }
        for session, metrics in (("s1", ("al", "quality")), ("s2", ("al",)))
        for metric in metrics
        for k in (1, 2)
        for m in ("Base", "Ours")
    ]
    any_storage.rows.upsert_rows(rows, fence=(run.id, 0, chunk.lease))
    assert any_storage.runs.cancel_run(run.id)
    assert not any_storage.runs.cancel_run(run.id)  # final already
    with pytest.raises(Cancelled):
        any_storage.rows.upsert_rows(
            [{**ROW, "run_id": run.id, "session_id": "s3"}],
            fence=(run.id, 0, chunk.lease),
        )
    suites = [registry.get("alignment"), registry.get("quality")]
    assert any_storage.runs.stored_cover(run.id, suites) == {
        "responses": 8,
        "complete": 1,
        "partial": 1,
        "by_suite": {"alignment": 2, "quality": 1},
    }
