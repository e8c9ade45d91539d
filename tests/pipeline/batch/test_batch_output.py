"""A provider's batch output read defensively (issue 57, finding 2): a line
that is not a JSON object, lacks ``custom_id``, is not UTF-8 or names a
request the run did not send is skipped and counted, its request goes
online; an output file over ``JUDGE_BATCH_OUTPUT_MAX_MB`` fails the batch
part with its reason; a step that fails three times in a row fails the
batch part instead of being dispatched again for ever. Real HTTP to the
scripted judge's Batch API (``testing/judge_batches.py``); the batch parts
as ``store/judge_batches.py`` keeps them."""

from __future__ import annotations

import io
import re
from collections import Counter

import pytest
from sqlalchemy import select

from judge_client.batch_api import answers_in
from pipeline.batch import steps
from pipeline.service.run_request import RunRequest
from store.batch_models import BatchAnswer
from testing.judge_batches import FOREIGN_ID, MALFORMED
from testing.judge_server import ScriptedJudge
from tests import crafted
from tests.pipeline.batch.test_batch_mode import judge_app, sessions, wait_until
from tests.pipeline_support import submit, wait_for

TWO_SESSIONS = 40  # 2 sessions x 5 rounds x 2 methods x 2 judge modes
SKIPPED_AS = {
    "not_json": "not_json",
    "array": "not_object",
    "no_custom_id": "no_custom_id",
    "not_utf8": "not_utf8",
    "foreign": "foreign",
}


@pytest.fixture
def server():
    with ScriptedJudge(batch_seconds=1.0) as judge:
        yield judge


def sent_ids(judge: ScriptedJudge) -> set[str]:
    """The custom_ids of every batch line the run sent the provider."""
    return {
        line["custom_id"]
        for made in judge.batches.batches.values()
        for line in made.lines
    }


def stored_ids(app, run_id: str) -> set[str]:
    storage = app.extensions["storage"]
    query = select(BatchAnswer.custom_id).where(BatchAnswer.run_id == run_id)
    with storage.engine.connect() as conn:
        return set(conn.scalars(query))


def status_of(app, run_id: str) -> dict:
    token = app.extensions["storage"].runs.get_run(run_id).token
    return app.test_client().get(f"/api/v1/runs/{token}").get_json()


def page_of(app, run_id: str) -> str:
    token = app.extensions["storage"].runs.get_run(run_id).token
    return app.test_client().get(f"/r/{token}?lang=en").get_data(as_text=True)


@pytest.mark.parametrize("kind", MALFORMED)
def test_a_malformed_output_line_is_skipped_counted_and_its_request_goes_online(
    app_factory, server, tmp_path, kind
):
    app = judge_app(app_factory, server)
    lines = sessions()[:2]
    # in the last round (a reply is in the history of its method's later
    # rounds): this reply's two requests (alignment, binary) come back malformed
    lines[1]["rounds"][-1]["responses"]["Base"] += f" [[batch=line:{kind}]]"
    path = crafted.write(tmp_path / f"{kind}.jsonl", lines)
    run_id = submit(app, path, server, suites=["alignment"], batch=True)
    document = wait_for(app, run_id, timeout=120)
    assert document["run"]["status"] == "done"
    assert server.state.batch_lines == TWO_SESSIONS
    assert server.state.online_requests == 2  # the two without an answer
    sent = sent_ids(server)
    assert stored_ids(app, run_id) <= sent  # no foreign line kept
    assert FOREIGN_ID not in stored_ids(app, run_id)
    outcome = status_of(app, run_id)["batch"]
    assert outcome["skipped"] == {SKIPPED_AS[kind]: 2}
    assert outcome["missing"] == 2
    assert outcome["note"] is None  # the batch part itself did not fail
    page = page_of(app, run_id)
    assert 'data-testid="batch-skipped"' in page
    assert "2 lines of the provider&#39;s batch output were skipped" in page


def test_an_output_file_over_the_cap_fails_the_batch_part_with_its_reason(
    app_factory, server, tmp_path
):
    app = judge_app(app_factory, server, JUDGE_BATCH_OUTPUT_MAX_MB=0.001)
    path = crafted.write(tmp_path / "big.jsonl", sessions()[:2])
    run_id = submit(app, path, server, suites=["alignment"], batch=True)
    document = wait_for(app, run_id, timeout=120)
    assert document["run"]["status"] == "done"
    assert server.state.batch_lines == TWO_SESSIONS
    assert server.state.online_requests == TWO_SESSIONS  # all went online
    assert stored_ids(app, run_id) == set()  # nothing of it was read
    outcome = status_of(app, run_id)["batch"]
    assert outcome["stage"] == "answered"
    # the file's size as the download found it (the English error names it)
    size = int(re.search(r"is ([\d,]+) bytes", outcome["error"])[1].replace(",", ""))
    assert size > 1048 and outcome["note"] == f"output_too_large:1048:{size}"
    said = f"output file is {size:,} bytes, over the cap of 1,048 bytes"
    assert said in outcome["reason"]
    page = page_of(app, run_id)
    assert 'data-testid="batch-failed"' in page
    assert "over the cap of 1,048 bytes" in page


@pytest.mark.parametrize(
    "fault",
    [(200, b"<html><body>Gateway</body></html>"), (503, b"busy")],
    ids=["not-json", "503"],
)
def test_a_step_failing_three_times_fails_the_batch_part_and_stops_retrying(
    app_factory, tmp_path, fault
):
    """Every look at the batch fails (a proxy's error page in a 200, or a
    503): the third failed step ends the batch part; its requests go
    online and the reason is on the status API and the page."""
    # a batch that stays in progress at the provider: with ``server``'s
    # 1 s one, a loaded machine's three steps outlasted it, the provider
    # answered the cancel "already completed" (409) and the test failed
    with ScriptedJudge(batch_seconds=3600.0) as server:
        _fail_three_steps(app_factory, server, tmp_path, fault)


def _fail_three_steps(app_factory, server, tmp_path, fault):
    app = judge_app(app_factory, server)
    path = crafted.write(tmp_path / "fails.jsonl", sessions()[:2])
    service = app.extensions["runs"]
    with path.open("rb") as stream:  # made, not queued: the steps are taken here
        run = service.create(
            stream,
            path.name,
            RunRequest(
                judge_url=server.url,
                judge_model="scripted",
                suites=["alignment"],
                batch=True,
            ),
        )
    storage = app.extensions["storage"]
    server.batches.look_fault = fault
    for step in range(3):
        assert storage.batches.state(run.id).stage != "answered", step
        steps.take_step(storage, app.config, run.id)  # raises nothing
    state = storage.batches.state(run.id)
    assert (state.stage, state.note, state.failures) == ("answered", "step_failed", 3)
    assert storage.batches.claim_due(sent_before=steps.utcnow()) == []
    (made,) = storage.batches.batches(run.id)  # cancelled at the provider
    assert server.batches.batches[made.batch_id].cancel_at is not None
    service.enqueue(run.id)
    document = wait_for(app, run.id, timeout=120)
    assert document["run"]["status"] == "done"
    assert server.state.online_requests == TWO_SESSIONS
    outcome = status_of(app, run.id)["batch"]
    assert outcome["note"] == "step_failed" and outcome["failures"] == 3
    said = "not a JSON object" if fault[0] == 200 else "HTTP 503"
    assert said in outcome["reason"]
    page = page_of(app, run.id)
    assert 'data-testid="batch-failed"' in page and said in page


def test_a_step_that_fails_then_succeeds_starts_counting_again(
    app_factory, server, tmp_path
):
    app = judge_app(app_factory, server)
    path = crafted.write(tmp_path / "flaky.jsonl", sessions()[:1])
    service = app.extensions["runs"]
    with path.open("rb") as stream:
        run = service.create(
            stream,
            path.name,
            RunRequest(
                judge_url=server.url,
                judge_model="scripted",
                suites=["alignment"],
                batch=True,
            ),
        )
    storage = app.extensions["storage"]
    server.batches.look_fault = (503, b"busy")
    steps.take_step(storage, app.config, run.id)
    steps.take_step(storage, app.config, run.id)
    assert storage.batches.state(run.id).failures == 2
    server.batches.look_fault = None
    wait_until(lambda: _read(storage, app, run.id))
    state = storage.batches.state(run.id)
    assert (state.failures, state.error, state.note) == (0, None, None)


def _read(storage, app, run_id) -> bool:
    steps.take_step(storage, app.config, run_id)
    return storage.batches.state(run_id).stage != "waiting"


# -- the reader, line by line ---------------------------------------------------------


def test_answers_in_skips_and_counts_what_is_not_an_answer():
    good = b'{"custom_id": "a", "response": {"status_code": 200, "body": {}}}\n'
    lines = [
        good,
        b"<html>\n",
        b'["a", 1]\n',
        b'{"response": null}\n',
        b'{"custom_id": 7, "response": null}\n',
        b'{"custom_id": "\xff", "response": null}\n',
        b'{"custom_id": "b", "response": "text", "error": "oops"}\n',
        b"   \n",
        b'{"custom_id": "' + b"x" * 200 + b'"}\n',
    ]
    skipped: Counter[str] = Counter()
    found = [
        a
        for piece in answers_in(
            io.BytesIO(b"".join(lines)), skipped=skipped, line_limit=100
        )
        for a in piece
    ]
    assert found == [
        {"custom_id": "a", "status_code": 200, "body": {}, "error": None},
        {"custom_id": "b", "status_code": None, "body": None, "error": "oops"},
    ]
    assert skipped == {
        "not_json": 1,
        "not_object": 1,
        "no_custom_id": 2,
        "not_utf8": 1,
        "too_long": 1,
    }


# -- the store, on both databases -----------------------------------------------------


def test_requests_listed_answers_kept_and_missing_ones_marked(any_storage):
    """The queries behind the reader (INSERT ... SELECT ... ON CONFLICT and
    the rest) on SQLite and PostgreSQL: listed twice, kept once; only sent
    ids are found; a request no line answered is marked missing once."""
    from tests.store.test_exchange_texts import new_run

    storage = any_storage
    run = new_run(storage, "batch")
    storage.batches.begin(run.id)
    storage.batches.save_batch(run.id, 1, "m", 0, total=3)
    (made,) = storage.batches.batches(run.id)
    assert not made.listed
    for _ in range(2):  # a step taken again lists them again
        storage.batches.list_requests(run.id, 1, "m", 0, iter(["a", "b", "c"]))
    assert storage.batches.batches(run.id)[0].listed
    assert storage.batches.sent_among(run.id, ["a", "c", FOREIGN_ID]) == {"a", "c"}
    answer = {"custom_id": "a", "status_code": 200, "body": {}, "error": None}
    storage.batches.put_answers(run.id, [answer], lambda new: {})
    assert storage.batches.mark_missing(run.id, made.id) == 2
    assert storage.batches.mark_missing(run.id, made.id) == 2  # not twice
    assert storage.batches.answer(run.id, "b").error == "missing_from_output"
    assert storage.batches.answer(run.id, "a").status_code == 200
    storage.batches.update_batch(made.id, skipped={"foreign": 4}, missing=2)
    assert storage.batches.step_ended(run.id, error="boom") == 1
    assert storage.batches.step_ended(run.id, error="boom again") == 2
    outcome = storage.batches.outcome(run.id)
    assert (outcome["failures"], outcome["error"]) == (2, "boom again")
    assert (outcome["skipped"], outcome["missing"], outcome["note"]) == (
        {"foreign": 4},
        2,
        None,
    )
    assert [n["code"] for n in outcome["notes"]] == [
        "batch_lines_skipped",
        "batch_requests_missing",
    ]
    storage.batches.step_ended(run.id)
    assert storage.batches.state(run.id).failures == 0
