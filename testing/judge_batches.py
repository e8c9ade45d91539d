"""The scripted judge's OpenAI Batches endpoints (batch mode of
``testing/judge_server.py``; files in ``testing/judge_files.py``), in memory.

A batch runs on a clock, not a thread: every look at it first answers the
lines due by then. Over ``seconds`` from create: validating (10%), then
in_progress with the lines answered evenly until 90% (``request_counts``
grow), finalizing, completed. A line is answered by the online endpoint's
``answer``: same verdict, and a fault is the line's status (no retry).

Scripted, in a line's messages: ``[[batch=expired]]`` the line is not run
(``batch_expired`` in the error file); ``[[batch=failed]]`` a 500;
``[[batch=invalid]]`` (or ``fail_all``) fails the batch's validation.
``[[batch=line:KIND]]``: the line's output record is malformed, as a
provider or a proxy might write it (:data:`MALFORMED`: ``not_json``,
``array``, ``no_custom_id``, ``not_utf8``, ``foreign``: another request's
``custom_id``); the line is counted completed and its request has no
readable answer. ``look_fault = (status, body)``: every
``GET /v1/batches/{id}`` answers that instead (a proxy's error page).
``expire_after_s`` expires a batch not completed by then, its unfinished
lines ``batch_expired``. A cancel stops answering at once; ``CANCELLING``
later the batch is cancelled, its unanswered lines ``batch_cancelled`` in
the error file (what was answered stays in the output file, as at OpenAI).
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

from testing import judge_files
from testing.judge_files import ApiError
from testing.judge_state import JudgeState

MAX_LINES, MAX_BYTES = judge_files.MAX_LINES, judge_files.MAX_BYTES  # (defaults)
PATHS = ("/v1/files", "/v1/batches")  # what the server routes here
ENDPOINT = "/v1/chat/completions"  # the one endpoint a batch may target
# Fractions of ``seconds``: validating ends, answering ends, cancelling lasts.
VALIDATING, ANSWERING, CANCELLING = 0.1, 0.9, 0.1
TERMINAL = ("failed", "completed", "expired", "cancelled")
STAMPS = "in_progress finalizing completed failed expired cancelling cancelled".split()
NOT_RUN = {
    "batch_expired": "The batch expired before this request was executed.",
    "batch_cancelled": "The batch was cancelled before this request was executed.",
}
Answer = Callable[[JudgeState, dict, bool], tuple[int, dict, dict]]
FOREIGN_ID = "f" * 64  # a custom_id no client sent (``[[batch=line:foreign]]``)


def _malformed(kind: str, record: dict) -> bytes:
    """``record`` (a line's output record) written as ``kind`` of
    :data:`MALFORMED` says."""
    match kind:
        case "not_json":
            return b"<html><body>502 Bad Gateway</body></html>"
        case "array":
            return json.dumps([record["custom_id"], record["response"]]).encode()
        case "no_custom_id":
            return json.dumps(
                {k: v for k, v in record.items() if k != "custom_id"}
            ).encode()
        case "not_utf8":  # the right custom_id, one byte that is not UTF-8
            return json.dumps(record).encode().replace(b'"id"', b'"\xff": 1, "id"', 1)
        case "foreign":
            return json.dumps({**record, "custom_id": FOREIGN_ID}).encode()
    raise ValueError(f"unknown malformed line kind {kind!r}")


MALFORMED = ("not_json", "array", "no_custom_id", "not_utf8", "foreign")


class BatchState(JudgeState):
    """The judge's state with what was asked online and in batches, so a
    test can bound the share of requests made online. (``calls`` counts
    decisions, batch lines included: they share the fault attempts.)"""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.online_requests = 0  # POSTs to /chat/completions, 429s included
        self.batch_lines = 0  # lines of the batches created

    def count_online(self) -> None:
        with self.lock:
            self.online_requests += 1


@dataclass
class Batch:
    id: str
    input_file_id: str
    lines: list[dict]
    metadata: dict | None
    created: float  # wall clock, for the timestamps
    start: float  # the store's clock, for the schedule
    errors: list[dict]  # validation errors: the batch fails when any
    status: str = "validating"
    records: list[dict] = field(default_factory=list)  # output lines so far
    cancel_at: float | None = None  # seconds after start
    times: dict[str, int] = field(default_factory=dict)
    output_file_id: str | None = None
    error_file_id: str | None = None

    def stamp(self, name: str, offset: float) -> None:
        self.times.setdefault(name, int(self.created + offset))

    def object(self) -> dict:
        failed = self.status == "failed"
        done = sum(_ok(record) for record in self.records)
        counts = {"total": 0 if failed else len(self.lines), "completed": done}
        return {
            "id": self.id,
            "object": "batch",
            "endpoint": ENDPOINT,
            "errors": {"object": "list", "data": self.errors} if failed else None,
            "input_file_id": self.input_file_id,
            "completion_window": "24h",
            "status": self.status,
            "output_file_id": self.output_file_id,
            "error_file_id": self.error_file_id,
            "created_at": int(self.created),
            "expires_at": int(self.created) + 24 * 3600,
            **{f"{name}_at": self.times.get(name) for name in STAMPS},
            "request_counts": {**counts, "failed": len(self.records) - done},
            "metadata": self.metadata,
        }


class BatchStore:
    """Files and batches of one scripted judge (thread-safe)."""

    def __init__(
        self,
        state: BatchState,
        answer: Answer,
        seconds: float = 2.0,
        fail_all: bool = False,
        expire_after_s: float | None = None,
        max_lines: int = MAX_LINES,
        max_bytes: int = MAX_BYTES,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.state, self.answer, self.seconds = state, answer, seconds
        self.fail_all, self.expire_after_s = fail_all, expire_after_s
        self.files, self.clock = judge_files.Files(max_lines, max_bytes), clock
        self.lock = threading.Lock()
        self.batches: dict[str, Batch] = {}
        self.look_fault: tuple[int, bytes] | None = None  # GET /batches/{id}

    def route(
        self, method: str, path: str, headers: Any, raw: bytes
    ) -> tuple[int, bytes, str]:
        """(status, body, content type) for a request under ``PATHS``."""
        url = urlsplit(path)
        parts = url.path.strip("/").split("/")[1:]  # after "v1"
        try:
            with self.lock:  # a look answers due lines: one look at a time
                found = self._dispatch(method, parts, parse_qs(url.query), headers, raw)
        except LookFault as fault:
            return fault.status, fault.body, "text/html"
        except (
            ApiError,
            ValueError,
        ) as error:  # ValueError: a body that does not parse
            refused = (
                error if isinstance(error, ApiError) else ApiError(400, str(error))
            )
            return refused.status, json.dumps(refused.body).encode(), "application/json"
        if isinstance(found, bytes):
            return 200, found, "application/octet-stream"
        return 200, json.dumps(found).encode(), "application/json"

    def _dispatch(
        self, method: str, parts: list[str], query: dict, headers: Any, raw: bytes
    ) -> dict | bytes:
        match method, parts:
            case "POST", ["files"]:
                return self.files.upload(headers.get("Content-Type", ""), raw)
            case "GET", ["files", file_id]:
                return self.files.get(file_id).object()
            case "GET", ["files", file_id, "content"]:
                return self.files.get(file_id).data
            case "POST", ["batches"]:
                return self.create(json.loads(raw or b"{}"))
            case "GET", ["batches"]:
                return self.listing(int(query.get("limit", ["20"])[0]))
            case "GET", ["batches", batch_id]:
                if self.look_fault is not None:
                    raise LookFault(*self.look_fault)
                return self._advance(self._batch(batch_id)).object()
            case "POST", ["batches", batch_id, "cancel"]:
                return self.cancel(self._batch(batch_id)).object()
        raise ApiError(404, f"Invalid request: {method} /v1/{'/'.join(parts)}")

    def _batch(self, batch_id: str) -> Batch:
        if batch_id not in self.batches:
            raise ApiError(404, f"No batch found with id '{batch_id}'.", "batch_id")
        return self.batches[batch_id]

    def create(self, asked: dict) -> dict:
        """``POST /v1/batches``: its fields checked now, its lines while
        validating (as OpenAI does: a bad line fails the batch, not the call)."""
        source = self.files.batch_input(str(asked.get("input_file_id")))
        if asked.get("endpoint") != ENDPOINT:
            raise ApiError(400, f"Only {ENDPOINT} is served.", "endpoint")
        if asked.get("completion_window") != "24h":
            raise ApiError(400, "completion_window must be 24h.", "completion_window")
        errors = judge_files.line_errors(source.lines, ENDPOINT, self.fail_all)
        batch = Batch(
            f"batch_{uuid.uuid4().hex}",
            source.id,
            source.lines,
            asked.get("metadata"),
            time.time(),
            self.clock(),
            errors,
        )
        self.batches[batch.id] = batch
        with self.state.lock:
            self.state.batch_lines += len(source.lines)
        return batch.object()

    def listing(self, limit: int) -> dict:
        """``GET /v1/batches``: newest first."""
        newest = [self._advance(b).object() for b in reversed(self.batches.values())]
        page = newest[: max(1, min(limit, 100))]
        return {
            "object": "list",
            "data": page,
            "first_id": page[0]["id"] if page else None,
            "last_id": page[-1]["id"] if page else None,
            "has_more": len(newest) > len(page),
        }

    def cancel(self, batch: Batch) -> Batch:
        self._advance(batch)
        if batch.status in TERMINAL or batch.cancel_at is not None:
            raise ApiError(409, f"Cannot cancel a batch with status '{batch.status}'.")
        batch.cancel_at = self.clock() - batch.start
        batch.stamp("cancelling", batch.cancel_at)
        return self._advance(batch)

    def _end(self, batch: Batch) -> tuple[float, str, str]:
        """(seconds after start, status, code of the lines not answered) of
        whichever end comes first for ``batch`` (on a tie, the first listed)."""
        ends = [(VALIDATING * self.seconds, "failed", "")] if batch.errors else []
        if batch.cancel_at is not None:
            cancelled = batch.cancel_at + CANCELLING * self.seconds
            ends.append((cancelled, "cancelled", "batch_cancelled"))
        if self.expire_after_s is not None:
            ends.append((self.expire_after_s, "expired", "batch_expired"))
        ends.append((self.seconds, "completed", ""))
        return min(ends, key=lambda end: end[0])

    def _advance(self, batch: Batch) -> Batch:
        """Bring ``batch`` to now on its schedule (the module's docstring)."""
        if batch.status in TERMINAL:
            return batch
        elapsed, (end_at, end, code) = self.clock() - batch.start, self._end(batch)
        started = VALIDATING * self.seconds
        if elapsed >= started and not batch.errors:
            batch.stamp("in_progress", started)
            stop = min(elapsed, end_at, batch.cancel_at or end_at)
            self._run(batch, self._due(len(batch.lines), stop))
        if elapsed >= end_at:
            self._finish(batch, end, end_at, code)
        elif batch.cancel_at is not None:
            batch.status = "cancelling"
        elif elapsed >= ANSWERING * self.seconds:
            batch.status = "finalizing"
            batch.stamp("finalizing", ANSWERING * self.seconds)
        elif elapsed >= started:
            batch.status = "in_progress"
        return batch

    def _due(self, total: int, elapsed: float) -> int:
        """How many lines are answered ``elapsed`` seconds after create."""
        answering = (ANSWERING - VALIDATING) * self.seconds
        if answering <= 0:
            return total
        share = (elapsed - VALIDATING * self.seconds) / answering
        return max(0, min(total, int(share * total)))

    def _run(self, batch: Batch, due: int) -> None:
        batch.records += map(self._execute, batch.lines[len(batch.records) : due])

    def _execute(self, line: dict) -> dict:
        """One line's output record: the online endpoint's reply to its body."""
        text = judge_files.text_of(line)
        if "[[batch=expired]]" in text:
            return _not_run(line, "batch_expired")
        if "[[batch=failed]]" in text:
            status, payload = 500, {"error": {"message": "scripted: batch=failed"}}
        else:
            status, payload, _ = self.answer(self.state, line["body"], True)
        response = {"status_code": status, "request_id": uuid.uuid4().hex}
        record = {
            "id": f"batch_req_{uuid.uuid4().hex}",
            "custom_id": line["custom_id"],
            "response": {**response, "body": payload},
            "error": None,
        }
        kind = re.search(r"\[\[batch=line:(\w+)\]\]", text)
        if kind is not None:  # written as it is, counted as answered
            return {**record, "raw": _malformed(kind.group(1), record) + b"\n"}
        return record

    def _finish(self, batch: Batch, status: str, at: float, code: str) -> None:
        """End ``batch``: completed answers every line first; otherwise the
        lines not answered are ``code`` in the error file (a failed batch
        has no files)."""
        if status == "completed":
            self._run(batch, len(batch.lines))
            batch.stamp("finalizing", ANSWERING * self.seconds)
        elif code:
            left = batch.lines[len(batch.records) :]
            batch.records += [_not_run(line, code) for line in left]
        batch.status = status
        batch.stamp(status, at)
        batch.output_file_id = self._output(batch, "output", True)
        batch.error_file_id = self._output(batch, "error", False)

    def _output(self, batch: Batch, kind: str, ok: bool) -> str | None:
        """The id of ``batch``'s output (``ok``) or error file; None if empty."""
        rows = [_written(r) for r in batch.records if _ok(r) == ok]
        if not rows:
            return None
        data = b"".join(rows)
        return self.files.add(f"{batch.id}_{kind}.jsonl", f"batch_{kind}", data).id


class LookFault(Exception):
    """``look_fault``: what a look at a batch answers instead."""

    def __init__(self, status: int, body: bytes):
        super().__init__(status)
        self.status, self.body = status, body


def _written(record: dict) -> bytes:
    """One line of an output or error file."""
    return record.get("raw") or json.dumps(record).encode() + b"\n"


def _ok(record: dict) -> bool:
    return record["response"] is not None and record["response"]["status_code"] == 200


def _not_run(line: dict, code: str) -> dict:
    return {
        "id": f"batch_req_{uuid.uuid4().hex}",
        "custom_id": line["custom_id"],
        "response": None,
        "error": {"code": code, "message": NOT_RUN[code]},
    }
