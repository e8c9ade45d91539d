"""The scripted judge's Files and Batches endpoints (testing/judge_batches.py,
testing/judge_files.py), over real HTTP as a client speaks to OpenAI. The
schedule moves with an injected clock (no sleeping); one test runs on the
real clock, polling with a deadline."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest
import requests

from testing.judge_batches import ANSWERING, CANCELLING, VALIDATING
from testing.judge_server import ScriptedJudge

SECONDS = 10.0  # batch_seconds of the clock-driven tests
TERMINAL = ("completed", "failed", "expired", "cancelled")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def line(custom_id: str, text: str, model: str = "scripted", **body) -> dict:
    return {
        "custom_id": custom_id,
        "method": "POST",
        "url": "/v1/chat/completions",
        "body": {"model": model, "messages": [{"role": "user", "content": text}]}
        | body,
    }


def jsonl(lines: list[dict]) -> bytes:
    return "".join(json.dumps(item) + "\n" for item in lines).encode()


def upload(judge: ScriptedJudge, data: bytes, purpose: str = "batch"):
    return requests.post(
        f"{judge.url}/files",
        data={"purpose": purpose},
        files={"file": ("input.jsonl", data)},
        timeout=10,
    )


def create(judge: ScriptedJudge, lines: list[dict], **asked) -> dict:
    uploaded = upload(judge, jsonl(lines))
    assert uploaded.status_code == 200, uploaded.text
    asked = {
        "input_file_id": uploaded.json()["id"],
        "endpoint": "/v1/chat/completions",
        "completion_window": "24h",
    } | asked
    made = requests.post(f"{judge.url}/batches", json=asked, timeout=10)
    assert made.status_code == 200, made.text
    return made.json()


def look(judge: ScriptedJudge, batch_id: str) -> dict:
    found = requests.get(f"{judge.url}/batches/{batch_id}", timeout=10)
    assert found.status_code == 200, found.text
    return found.json()


def records(judge: ScriptedJudge, file_id: str | None) -> dict[str, dict]:
    """An output or error file's lines by custom_id ({} for no file)."""
    if file_id is None:
        return {}
    found = requests.get(f"{judge.url}/files/{file_id}/content", timeout=10)
    assert found.status_code == 200, found.text
    rows = [json.loads(row) for row in found.text.splitlines()]
    return {row["custom_id"]: row for row in rows}


def status_codes(rows: dict[str, dict]) -> dict[str, object]:
    return {
        key: row["response"]["status_code"] if row["response"] else row["error"]["code"]
        for key, row in rows.items()
    }


@pytest.fixture
def clocked() -> Iterator[tuple[ScriptedJudge, Clock]]:
    clock = Clock()
    with ScriptedJudge(batch_seconds=SECONDS) as judge:
        judge.batches.clock = clock
        yield judge, clock


def at(clock: Clock, batch: dict, fraction: float) -> None:
    """Move the clock to ``fraction`` of ``SECONDS`` after ``batch`` was made."""
    clock.now = 1000.0 + fraction * SECONDS + 1e-6


# -- the life of a batch ------------------------------------------------------------


def test_a_batch_is_validated_answered_progressively_finalized_and_completed(clocked):
    judge, clock = clocked
    lines = [line(f"item-{n}", f"Rate it [[al={50 + n}]]") for n in range(8)]
    batch = create(judge, lines, metadata={"run": "r1"})
    assert batch["id"].startswith("batch_") and batch["object"] == "batch"
    assert (batch["status"], batch["metadata"]) == ("validating", {"run": "r1"})
    assert batch["output_file_id"] is None and batch["expires_at"] > batch["created_at"]
    seen = []
    for fraction in (VALIDATING, 0.3, 0.5, 0.7, ANSWERING, 1.0):
        at(clock, batch, fraction)
        found = look(judge, batch["id"])
        seen.append((found["status"], found["request_counts"]["completed"]))
    assert seen == [
        ("in_progress", 0),
        ("in_progress", 2),
        ("in_progress", 4),
        ("in_progress", 6),
        ("finalizing", 8),
        ("completed", 8),
    ]
    assert found["request_counts"] == {"total": 8, "completed": 8, "failed": 0}
    assert found["error_file_id"] is None  # as OpenAI: no file when empty
    assert all(
        found[f"{name}_at"] for name in ("in_progress", "finalizing", "completed")
    )
    output = records(judge, found["output_file_id"])
    assert list(output) == [item["custom_id"] for item in lines]
    for n, row in enumerate(output.values()):
        assert row["id"].startswith("batch_req_") and row["error"] is None
        assert row["response"]["status_code"] == 200 and row["response"]["request_id"]
        body = row["response"]["body"]
        assert body["object"] == "chat.completion"
        assert str(50 + n) in body["choices"][0]["message"]["content"]  # (its style's)
    meta = requests.get(f"{judge.url}/files/{found['output_file_id']}", timeout=10)
    assert meta.json()["purpose"] == "batch_output"


def test_on_the_real_clock_a_batch_completes_within_batch_seconds():
    with ScriptedJudge(batch_seconds=0.5) as judge:
        batch = create(judge, [line(f"c{n}", f"[[al={n}]]") for n in range(20)])
        deadline = time.monotonic() + 10
        counts = []
        while batch["status"] not in TERMINAL:
            assert time.monotonic() < deadline, batch
            batch = look(judge, batch["id"])
            counts.append(batch["request_counts"]["completed"])
        assert batch["status"] == "completed"
        assert counts == sorted(counts) and counts[-1] == 20
        assert batch["completed_at"] - batch["created_at"] <= 1


# -- one answer for online and batch -------------------------------------------------


BODIES = [
    {"model": "scripted", "messages": [{"role": "user", "content": "[[al=73]] ok"}]},
    {"model": "scripted+10", "messages": [{"role": "user", "content": "[[al=60]]"}]},
    {
        "model": "judge-json-ok",
        "messages": [{"role": "user", "content": "[[al=41]]"}],
        "response_format": {"type": "json_object"},
    },
    {
        "model": "scripted",
        "messages": [{"role": "user", "content": "[[fault=truncate]] [[al=90]]"}],
        "max_tokens": 100,
    },
    {
        "model": "reasoning-judge",
        "messages": [
            {"role": "system", "content": "You judge replies."},
            {"role": "user", "content": "A reply to judge"},
        ],
    },
]


@pytest.mark.parametrize("body", BODIES, ids=range(len(BODIES)))
def test_a_batch_line_gets_the_body_the_online_endpoint_gives(body):
    with ScriptedJudge(batch_seconds=0.0) as judge:
        online = requests.post(f"{judge.url}/chat/completions", json=body, timeout=10)
        assert online.status_code == 200
        batch = look(judge, create(judge, [line("x", "", **body)])["id"])
        answered = records(judge, batch["output_file_id"])["x"]["response"]["body"]
    online_body = online.json()
    for reply in (online_body, answered):
        reply.pop("id")  # (ids and timestamps are the call's own)
        reply.pop("created", None)
    assert answered == online_body


def test_faults_are_line_statuses_in_the_error_file_without_retry_or_sleep():
    lines = [
        line("ok", "[[al=50]]"),
        line("five-hundred", "[[fault=500x2]]"),
        line("slow-down", "[[fault=429]]"),
        line("bad-key", "[[fault=401]]"),
        line("timeout", "[[fault=timeout]]"),
        line("drip", "[[fault=drip]]"),
        line("failed", "[[batch=failed]]"),
        line("expired", "[[batch=expired]]"),
    ]
    with ScriptedJudge(batch_seconds=0.0, timeout_sleep=30.0, rpm=60) as judge:
        started = time.monotonic()
        batch = look(judge, create(judge, lines)["id"])
        assert time.monotonic() - started < 5  # neither timeout nor drip slept
        output = records(judge, batch["output_file_id"])
        errors = records(judge, batch["error_file_id"])
        # The batch took none of the 1-a-second online budget (rpm=60).
        assert judge.state.rate_limited == 0
        # The attempts are the online endpoint's: 500x2's second one is online.
        retry = requests.post(f"{judge.url}/chat/completions", json=lines[1]["body"])
    assert status_codes(output) == {"ok": 200}
    assert status_codes(errors) == {
        "five-hundred": 500,
        "slow-down": 429,
        "bad-key": 401,
        "timeout": 500,
        "drip": 500,
        "failed": 500,
        "expired": "batch_expired",
    }
    assert errors["expired"]["response"] is None
    assert errors["bad-key"]["response"]["body"] == {"error": {"message": "bad key"}}
    assert batch["request_counts"] == {"total": 8, "completed": 1, "failed": 7}
    assert retry.status_code == 500


def test_the_counters_tell_batch_lines_from_online_requests():
    with ScriptedJudge(batch_seconds=0.0) as judge:
        create(judge, [line(f"c{n}", f"[[al={n}]]") for n in range(40)])
        requests.post(f"{judge.url}/chat/completions", json=line("o", "x")["body"])
        state = judge.state
        assert (state.batch_lines, state.online_requests) == (40, 1)
        assert (
            state.online_requests / (state.online_requests + state.batch_lines) <= 0.05
        )


# -- ends other than completed --------------------------------------------------------


def test_a_cancel_keeps_what_was_answered_and_errors_the_rest(clocked):
    judge, clock = clocked
    batch = create(judge, [line(f"c{n}", f"[[al={n}]]") for n in range(10)])
    at(clock, batch, 0.5)  # half of the lines answered
    cancelled = requests.post(f"{judge.url}/batches/{batch['id']}/cancel", timeout=10)
    assert cancelled.status_code == 200
    assert cancelled.json()["status"] == "cancelling"
    assert cancelled.json()["cancelling_at"] is not None
    at(clock, batch, 0.5 + CANCELLING / 2)
    assert look(judge, batch["id"])["request_counts"]["completed"] == 5  # stopped
    at(clock, batch, 0.5 + CANCELLING)
    found = look(judge, batch["id"])
    assert found["status"] == "cancelled" and found["cancelled_at"] is not None
    assert found["request_counts"] == {"total": 10, "completed": 5, "failed": 5}
    assert set(records(judge, found["output_file_id"])) == {f"c{n}" for n in range(5)}
    errors = records(judge, found["error_file_id"])
    assert set(status_codes(errors).values()) == {"batch_cancelled"}
    assert set(errors) == {f"c{n}" for n in range(5, 10)}
    again = requests.post(f"{judge.url}/batches/{batch['id']}/cancel", timeout=10)
    assert again.status_code == 409


def test_a_batch_past_expire_after_s_expires_with_its_unfinished_lines():
    clock = Clock()
    with ScriptedJudge(batch_seconds=SECONDS, batch_expire_after_s=5.0) as judge:
        judge.batches.clock = clock
        batch = create(judge, [line(f"c{n}", f"[[al={n}]]") for n in range(8)])
        at(clock, batch, 0.49)
        assert look(judge, batch["id"])["status"] == "in_progress"
        at(clock, batch, 0.5)
        found = look(judge, batch["id"])
        output = records(judge, found["output_file_id"])
        errors = records(judge, found["error_file_id"])
    assert found["status"] == "expired" and found["expired_at"] is not None
    assert found["completed_at"] is None
    assert len(output) == 4  # (5 s - 1 s validating) / 8 s of answering * 8
    assert set(status_codes(errors).values()) == {"batch_expired"} and len(errors) == 4
    assert found["request_counts"] == {"total": 8, "completed": 4, "failed": 4}


@pytest.mark.parametrize(
    ("lines", "param", "number"),
    [
        ([line("a", "fine"), line("b", "[[batch=invalid]]")], "body", 2),
        ([line("a", "fine"), line("b", "x") | {"url": "/v1/embeddings"}], "url", 2),
        ([line("a", "x") | {"method": "GET"}], "method", 1),
        ([line("a", "x"), line("b", "y", model="other")], "model", 1),
        (
            [{"custom_id": "a", "method": "POST", "url": "/v1/chat/completions"}],
            "body",
            1,
        ),
    ],
    ids=["directive", "url", "method", "two-models", "no-body"],
)
def test_a_batch_with_an_invalid_line_fails_validation(clocked, lines, param, number):
    judge, clock = clocked
    batch = create(judge, lines)
    at(clock, batch, VALIDATING / 2)
    assert look(judge, batch["id"])["status"] == "validating"
    at(clock, batch, VALIDATING)
    found = look(judge, batch["id"])
    assert found["status"] == "failed" and found["failed_at"] is not None
    first = found["errors"]["data"][0]
    assert (first["param"], first["line"]) == (param, number)
    assert found["errors"]["object"] == "list"
    assert (found["output_file_id"], found["error_file_id"]) == (None, None)
    assert judge.state.calls == 0  # nothing of it was answered


def test_batch_fail_all_fails_every_batch():
    with ScriptedJudge(batch_seconds=0.0, batch_fail_all=True) as judge:
        found = look(judge, create(judge, [line("a", "[[al=50]]")])["id"])
    assert found["status"] == "failed" and found["errors"]["data"]


# -- what is refused ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "purpose", "words"),
    [
        (jsonl([line("a", "x")]), "fine-tune", "purpose"),
        (b'{"custom_id": "a"}\n{not json\n', "batch", "not valid JSON"),
        (jsonl([line("a", "x"), line("a", "y")]), "batch", "Duplicate custom_id"),
        (jsonl([line("a", "x")]) + b'{"method": "POST"}\n', "batch", "custom_id"),
        (jsonl([line(f"c{n}", "x") for n in range(4)]), "batch", "over 3 requests"),
        (jsonl([line("a", "x" * 1000)]), "batch", "over 1000 bytes"),
    ],
    ids=["purpose", "jsonl", "duplicate", "no-custom-id", "lines", "bytes"],
)
def test_an_upload_is_refused_with_openais_error_body(data, purpose, words):
    with ScriptedJudge(batch_max_lines=3, batch_max_bytes=1000) as judge:
        refused = upload(judge, data, purpose)
        assert not judge.batches.files.by_id  # nothing kept
    assert refused.status_code == 400
    error = refused.json()["error"]
    assert error["type"] == "invalid_request_error" and words in error["message"]


def test_files_at_the_limits_are_taken():
    with ScriptedJudge(batch_max_lines=3, batch_max_bytes=1000) as judge:
        taken = upload(judge, jsonl([line(f"c{n}", "x") for n in range(3)]))
        made = taken.json()
    assert taken.status_code == 200
    assert made["id"].startswith("file-") and made["object"] == "file"
    assert (made["purpose"], made["filename"]) == ("batch", "input.jsonl")
    assert made["bytes"] == len(jsonl([line(f"c{n}", "x") for n in range(3)])) <= 1000


def test_a_create_or_a_look_that_cannot_be_served_is_refused():
    with ScriptedJudge() as judge:
        file_id = upload(judge, jsonl([line("a", "x")])).json()["id"]

        def asked(**changed) -> requests.Response:
            body = {
                "input_file_id": file_id,
                "endpoint": "/v1/chat/completions",
                "completion_window": "24h",
            }
            return requests.post(f"{judge.url}/batches", json=body | changed)

        assert asked(input_file_id="file-none").status_code == 404
        assert asked(endpoint="/v1/embeddings").status_code == 400
        assert asked(completion_window="1h").status_code == 400
        assert requests.get(f"{judge.url}/batches/batch_none").status_code == 404
        assert requests.get(f"{judge.url}/files/file-none/content").status_code == 404
        assert requests.post(f"{judge.url}/batches", data=b"{").status_code == 400
        assert judge.state.batch_lines == 0


def test_the_list_is_newest_first_and_pages_by_limit(clocked):
    judge, _ = clocked
    made = [create(judge, [line("a", "x")])["id"] for _ in range(3)]
    page = requests.get(f"{judge.url}/batches", params={"limit": 2}).json()
    assert [found["id"] for found in page["data"]] == made[::-1][:2]
    assert page["has_more"] and page["first_id"] == made[2]
    everything = requests.get(f"{judge.url}/batches").json()
    assert len(everything["data"]) == 3 and not everything["has_more"]


# -- malformed output, as a provider or a proxy might write it (issue 57) -----------


def test_a_line_can_come_back_malformed_and_a_look_can_fail():
    from testing.judge_batches import FOREIGN_ID, MALFORMED

    lines = [line("ok", "[[al=50]]")] + [
        line(kind, f"[[batch=line:{kind}]]") for kind in MALFORMED
    ]
    with ScriptedJudge(batch_seconds=0.0) as judge:
        batch = look(judge, create(judge, lines)["id"])
        url = f"{judge.url}/files/{batch['output_file_id']}/content"
        written = requests.get(url, timeout=10).content.splitlines()
        judge.batches.look_fault = (200, b"<html>proxy</html>")
        faulted = requests.get(f"{judge.url}/batches/{batch['id']}", timeout=10)
    assert batch["request_counts"] == {"total": 6, "completed": 6, "failed": 0}
    assert len(written) == 6 and json.loads(written[0])["custom_id"] == "ok"
    not_json, array, no_id, not_utf8, foreign = written[1:]
    with pytest.raises(ValueError):
        json.loads(not_json)
    assert isinstance(json.loads(array), list)
    assert "custom_id" not in json.loads(no_id)
    with pytest.raises(UnicodeDecodeError):
        not_utf8.decode()
    assert b'"custom_id": "not_utf8"' in not_utf8
    assert json.loads(foreign)["custom_id"] == FOREIGN_ID
    assert (faulted.status_code, faulted.content) == (200, b"<html>proxy</html>")
