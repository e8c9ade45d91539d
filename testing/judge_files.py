"""The scripted judge's OpenAI Files endpoint (``testing/judge_batches.py``
uses it): batch input files uploaded as multipart/form-data and checked as
OpenAI checks them, and the output and error files batches write."""

from __future__ import annotations

import email.parser
import email.policy
import json
import time
import uuid
from dataclasses import dataclass, field

MAX_LINES = 50_000  # OpenAI's limits of one batch input file
MAX_BYTES = 200 * 1024 * 1024


class ApiError(Exception):
    """An error answered with OpenAI's error body."""

    def __init__(
        self,
        status: int,
        message: str,
        param: str | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.body = {
            "error": {
                "message": message,
                "type": "invalid_request_error",
                "param": param,
                "code": code,
            }
        }


@dataclass
class File:
    id: str
    filename: str
    purpose: str
    data: bytes
    created_at: int = field(default_factory=lambda: int(time.time()))
    lines: list[dict] = field(default_factory=list)  # parsed, of purpose batch

    def object(self) -> dict:
        return {
            "id": self.id,
            "object": "file",
            "bytes": len(self.data),
            "created_at": self.created_at,
            "filename": self.filename,
            "purpose": self.purpose,
        }


class Files:
    """The files of one scripted judge (callers hold its store's lock).
    ``max_lines`` / ``max_bytes``: an input file's limits."""

    def __init__(self, max_lines: int = MAX_LINES, max_bytes: int = MAX_BYTES):
        self.max_lines, self.max_bytes = max_lines, max_bytes
        self.by_id: dict[str, File] = {}

    def get(self, file_id: str) -> File:
        if file_id not in self.by_id:
            raise ApiError(404, f"No such File object: {file_id}", "id")
        return self.by_id[file_id]

    def batch_input(self, file_id: str) -> File:
        found = self.get(file_id)
        if found.purpose != "batch":
            raise ApiError(
                400, "The input file's purpose must be batch.", "input_file_id"
            )
        return found

    def add(self, filename: str, purpose: str, data: bytes) -> File:
        made = File(f"file-{uuid.uuid4().hex[:24]}", filename, purpose, data)
        self.by_id[made.id] = made
        return made

    def upload(self, content_type: str, raw: bytes) -> dict:
        """``POST /v1/files``: multipart fields ``purpose`` and ``file``."""
        fields = _form(content_type, raw)
        purpose = fields.get("purpose", (None, b""))[1].decode(errors="replace")
        if purpose != "batch":  # the scripted judge serves batch files only
            raise ApiError(400, f"Invalid purpose: '{purpose}'.", "purpose")
        if "file" not in fields:
            raise ApiError(400, "Missing file.", "file")
        filename, data = fields["file"]
        lines = self.parse(data)
        made = self.add(filename or "upload.jsonl", purpose, data)
        made.lines = lines
        return made.object()

    def parse(self, data: bytes) -> list[dict]:
        """The lines of a batch input file, or a 400 as OpenAI refuses one."""
        if len(data) > self.max_bytes:
            raise ApiError(400, f"File is over {self.max_bytes} bytes.", "file")
        rows = [row for row in data.splitlines() if row.strip()]
        if len(rows) > self.max_lines:
            raise ApiError(400, f"File has over {self.max_lines} requests.", "file")
        lines, seen = [], set()
        for number, row in enumerate(rows, 1):
            line = _line(row, number)
            if line["custom_id"] in seen:
                message = f"Duplicate custom_id {line['custom_id']!r} on line {number}."
                raise ApiError(400, message, "file")
            seen.add(line["custom_id"])
            lines.append(line)
        return lines


def _line(row: bytes, number: int) -> dict:
    try:
        line = json.loads(row)
    except ValueError:
        raise ApiError(400, f"Line {number} is not valid JSON.", "file") from None
    if not isinstance(line, dict) or not isinstance(line.get("custom_id"), str):
        raise ApiError(400, f"Line {number} has no custom_id.", "file")
    return line


def _form(content_type: str, raw: bytes) -> dict[str, tuple[str | None, bytes]]:
    """A multipart/form-data body's fields: name -> (filename, bytes). The
    stdlib's email parser reads it (the project adds no dependency for it)."""
    head = f"Content-Type: {content_type}\r\n\r\n".encode()
    form = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + raw)
    if not form.is_multipart():
        raise ApiError(400, "Expected a multipart/form-data body.")
    fields = {}
    for part in form.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        fields[str(name)] = (
            part.get_filename(),
            payload if isinstance(payload, bytes) else b"",
        )
    return fields


def _error(message: str, param: str | None, line: int | None) -> dict:
    return {"code": "invalid_request", "message": message, "param": param, "line": line}


def text_of(line: dict) -> str:
    """Every message's text of a line (where its directives are)."""
    messages = _body(line).get("messages") or []
    return "\n".join(str(m.get("content")) for m in messages if isinstance(m, dict))


def line_errors(lines: list[dict], endpoint: str, fail_all: bool) -> list[dict]:
    """What validation finds wrong with a batch's lines, one error a line
    (OpenAI's checks: method, url, a body, one model per file), and the
    scripted failures."""
    models = {str(_body(line).get("model")) for line in lines}
    errors = [_error("scripted: fail_all", None, None)] if fail_all else []
    for number, line in enumerate(lines, 1):
        body = line.get("body")
        if line.get("method") != "POST":
            errors.append(_error("method must be POST", "method", number))
        elif line.get("url") != endpoint:
            errors.append(_error(f"url must be {endpoint}", "url", number))
        elif not isinstance(body, dict) or not body.get("messages"):
            errors.append(_error("body must hold messages", "body", number))
        elif len(models) > 1:
            errors.append(_error("every line must use one model", "model", number))
        elif "[[batch=invalid]]" in text_of(line):
            errors.append(_error("scripted: [[batch=invalid]]", "body", number))
    return errors


def _body(line: dict) -> dict:
    body = line.get("body")
    return body if isinstance(body, dict) else {}
