"""Reading the JSONL upload: bounded lines, blank lines, and the sessions of
an already validated file (pure).

Lines are read with a bounded ``readline`` so a huge line is never held in
memory. Only ``\\n`` ends a line: ``str.splitlines()`` would also break at
U+2028, which JSON allows unescaped inside strings.

>>> import io
>>> [(n, raw) for n, raw, _ in read_lines(io.BytesIO(b'{"a":1}\\r\\n\\n{}'), 100)]
[(1, b'{"a":1}\\r\\n'), (2, b'\\n'), (3, b'{}')]
>>> normalize_session({"rounds": [{"responses": {"M": "hi"}}]})["rounds"][0]
{'responses': {'M': {'text': 'hi'}}}
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from config import DEFAULTS

DEFAULT_MAX_LINE_BYTES = DEFAULTS["MAX_LINE_MB"] * 1024 * 1024
_SKIP_CHUNK = 1 << 20
_JSON_SPACE = " \t\r\n"
_JSON_SPACE_BYTES = _JSON_SPACE.encode()


def is_blank(line: bytes | str) -> bool:
    """Blank by JSON's definition of whitespace (not form feeds or NBSP)."""
    if isinstance(line, str):
        return not line.strip(_JSON_SPACE)
    return not line.strip(_JSON_SPACE_BYTES)


def read_lines(stream: BinaryIO, limit: int) -> Iterator[tuple[int, bytes | None, int]]:
    """Yield (line number, raw bytes or None when oversized, byte length).

    ``limit`` applies to the content; the line ending (LF or CRLF) is free.
    """
    lineno = 0
    while raw := stream.readline(limit + 2):
        lineno += 1
        complete = raw.endswith(b"\n") or len(raw) < limit + 2
        size = len(raw)
        while not complete and raw:  # skip the rest of an oversized line
            raw = stream.readline(_SKIP_CHUNK)
            size += len(raw)
            complete = raw.endswith(b"\n") or not raw
        if size - _ending_length(raw) > limit:
            yield lineno, None, size
        else:
            yield lineno, raw, size


def _ending_length(raw: bytes) -> int:
    if raw.endswith(b"\r\n"):
        return 2
    return 1 if raw.endswith(b"\n") else 0


def normalize_session(session: dict[str, Any]) -> dict[str, Any]:
    """Responses as objects (``{"text": ...}``), so metric code sees one
    shape; a missing reply (``null``) is left out, as an absent one is.

    >>> normalize_session({"rounds": [{"responses": {"M": None, "N": "x"}}]})["rounds"]
    [{'responses': {'N': {'text': 'x'}}}]
    """
    for round_ in session["rounds"]:
        round_["responses"] = {
            method: {"text": value} if isinstance(value, str) else value
            for method, value in round_["responses"].items()
            if value is not None
        }
    return session


def iter_sessions(
    path: str | Path, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
) -> Iterator[dict[str, Any]]:
    """Yield the normalised sessions of an already validated file."""
    with Path(path).open("rb") as stream:
        for _, raw, _ in read_lines(stream, max_line_bytes):
            text = raw.decode("utf-8-sig") if raw else ""
            if not is_blank(text):
                yield normalize_session(json.loads(text))


def sessions_from(
    path: str | Path, start: int, budget: int
) -> Iterator[tuple[dict[str, Any], int]]:
    """``(session, byte offset after its line)`` of an already validated
    file from byte ``start`` (a line start), until about ``budget`` bytes
    are read: the work one request does is bounded, and the next part
    starts at the last offset given."""
    with Path(path).open("rb") as stream:
        if start:  # only where a line begins: else nothing (not a part we gave)
            stream.seek(start - 1)
            if stream.read(1) != b"\n":
                return
        stream.seek(start)
        offset = start
        for raw in stream:
            offset += len(raw)
            text = raw.decode("utf-8-sig")
            if not is_blank(text):
                yield normalize_session(json.loads(text)), offset
            if offset - start >= budget:
                return


def session_spans(path: str | Path) -> Iterator[tuple[str, int, int, int]]:
    """(session id, byte start, byte end, rounds) of every session line of an
    already validated file: the index a run plans its chunks from."""
    offset = 0
    with open(path, "rb") as stream:
        for raw in stream:
            if not is_blank(raw):
                session = json.loads(raw.decode("utf-8-sig"))
                rounds = len(session["rounds"])
                yield session["session_id"], offset, offset + len(raw), rounds
            offset += len(raw)


def read_sessions(path: str | Path, start: int, end: int) -> list[dict[str, Any]]:
    """The normalised sessions stored between two byte offsets of a file."""
    with open(path, "rb") as stream:
        stream.seek(start)
        block = stream.read(end - start).decode("utf-8-sig")
    return [
        normalize_session(json.loads(line))
        for line in block.split("\n")
        if not is_blank(line)
    ]
