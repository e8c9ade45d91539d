"""OpenAI-compatible Files and Batches endpoints, as a batch-mode run uses
them (issue 49): upload a JSONL of requests (``purpose=batch``), create a
batch of it, ask how it stands, cancel it, and read its output and error
files. Coroutines for the judge loop (``judge_client.loop.run`` calls them
from a worker's thread), on the same connections as the judge's calls."""

from __future__ import annotations

import asyncio
import json
import logging
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import aiohttp

from judge_client.config import JudgeConfig
from judge_client.transport import session_for

log = logging.getLogger(__name__)
CALL_DEADLINE_S = 600.0  # an upload of up to 200 MB, or a download
WINDOW = "24h"  # the completion window OpenAI offers
PIECE = 1 << 16  # bytes of a file read at a time
# an output line longer than this is skipped unread (a judge's answer is a
# few KB; the online client reads at most JUDGE_MAX_REPLY_BYTES of one)
LINE_LIMIT = 16 << 20
LOGGED = 5  # skipped lines of a file logged one by one; the rest counted


class BatchAPIError(Exception):
    """The provider refused or failed a Files/Batches call (``status``
    None: the call did not get through)."""

    def __init__(self, what: str, status: int | None, detail: str = ""):
        super().__init__(f"{what}: HTTP {status}: {detail[:300]}")
        self.status = status


class OutputTooLarge(Exception):
    """An output or error file over the download cap: not read."""

    def __init__(self, file_id: str, limit: int, size: int | None):
        said = f"{size:,} bytes" if size is not None else "larger"
        super().__init__(
            f"output file {file_id} is {said}, over the cap of {limit:,} bytes"
        )
        self.file_id, self.limit, self.size = file_id, limit, size


class BatchAPI:
    def __init__(self, config: JudgeConfig):
        self.base = config.base_url.rstrip("/")
        self.headers = (
            {"Authorization": f"Bearer {config.api_key}"} if config.api_key else {}
        )

    async def _call(
        self,
        method: str,
        path: str,
        what: str,
        sink: BinaryIO | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> bytes:
        """The reply's body; with ``sink``, a 200's body is written there
        piece by piece instead (an output file may be hundreds of MB), and
        one over ``limit`` bytes ends the call (:class:`OutputTooLarge`)."""
        url = f"{self.base}{path}"
        session, proxy = session_for(url)
        try:
            async with asyncio.timeout(CALL_DEADLINE_S):
                async with session.request(
                    method, url, headers=self.headers, proxy=proxy, **kwargs
                ) as response:
                    if sink is None or response.status != 200:
                        content = await response.read()
                    else:
                        await _write(response, sink, limit, path)
                        content = b""
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            raise BatchAPIError(what, None, type(exc).__name__) from None
        if response.status != 200:
            raise BatchAPIError(
                what, response.status, content.decode("utf-8", "replace")
            )
        return content

    async def _json(
        self, method: str, path: str, what: str, **kwargs: Any
    ) -> dict[str, Any]:
        """The reply as a JSON object; anything else (a proxy's error page
        in a 200) is the provider failing the call."""
        content = await self._call(method, path, what, **kwargs)
        try:
            found = json.loads(content)
        except (ValueError, RecursionError):
            found = None
        if not isinstance(found, dict):
            shown = content[:200].decode("utf-8", "replace")
            raise BatchAPIError(what, 200, f"the reply is not a JSON object: {shown}")
        return found

    async def upload(self, path: Path) -> str:
        """The file's id at the provider."""
        form = aiohttp.FormData()
        form.add_field("purpose", "batch")
        with path.open("rb") as handle:
            form.add_field(
                "file", handle, filename=path.name, content_type="application/jsonl"
            )
            made = await self._json("POST", "/files", "upload", data=form)
        if not isinstance(made.get("id"), str):
            raise BatchAPIError("upload", 200, "the reply names no file id")
        file_id: str = made["id"]  # a str: checked above
        return file_id

    async def create(self, file_id: str, metadata: dict[str, str]) -> dict[str, Any]:
        body = {
            "input_file_id": file_id,
            "endpoint": "/v1/chat/completions",
            "completion_window": WINDOW,
            "metadata": metadata,
        }
        return await self._json("POST", "/batches", "create", json=body)

    async def made_from(self, file_id: str) -> dict[str, Any] | None:
        """The provider's batch of an input file, among its newest 100."""
        listed = (await self._json("GET", "/batches?limit=100", "list")).get("data")
        found = (
            [
                b
                for b in listed
                if isinstance(b, dict) and b.get("input_file_id") == file_id
            ]
            if isinstance(listed, list)
            else []
        )
        return found[0] if found else None

    async def retrieve(self, batch_id: str) -> dict[str, Any]:
        return await self._json("GET", f"/batches/{batch_id}", "retrieve")

    async def cancel(self, batch_id: str) -> dict[str, Any]:
        return await self._json("POST", f"/batches/{batch_id}/cancel", "cancel")

    async def download(self, file_id: str, sink: BinaryIO, limit: int) -> None:
        """A file's content (an output or error file: JSONL) into ``sink``;
        one over ``limit`` bytes is not read (:class:`OutputTooLarge`)."""
        path = f"/files/{file_id}/content"
        await self._call("GET", path, "content", sink=sink, limit=limit)


async def _write(
    response: aiohttp.ClientResponse, sink: BinaryIO, limit: int | None, path: str
) -> None:
    """A 200's body into ``sink``, at most ``limit`` bytes: a larger one
    (said by its length, or found while it comes) is cut off."""
    file_id = path.split("/")[-2]
    if limit is not None and (response.content_length or 0) > limit:
        raise OutputTooLarge(file_id, limit, response.content_length)
    written = 0
    async for piece in response.content.iter_chunked(PIECE):
        written += len(piece)
        if limit is not None and written > limit:
            raise OutputTooLarge(file_id, limit, None)
        sink.write(piece)


def answers_in(
    lines: BinaryIO | Iterable[bytes],
    most: int = 1000,
    skipped: Counter[str] | None = None,
    line_limit: int = LINE_LIMIT,
) -> Iterator[list[dict[str, Any]]]:
    """The answers of an output or error file's lines, ``most`` at a time:
    the ``custom_id``, the response's status and body, or the error that
    stood for it (a request expired or cancelled before it ran has no
    response). A line that is not an answer is skipped and counted in
    ``skipped`` by kind: ``not_utf8``, ``not_json``, ``not_object``,
    ``no_custom_id`` (none, or not a string) and ``too_long`` (over
    ``line_limit`` bytes: read past, never held). Whether a ``custom_id``
    names a request that was sent is the caller's to judge.

    >>> line = b'{"custom_id": "a", "response": null, "error": {"code": "batch_expired"}}'
    >>> next(answers_in([line, b""]))
    [{'custom_id': 'a', 'status_code': None, 'body': None, 'error': 'batch_expired'}]
    >>> skipped = Counter()
    >>> list(answers_in([b"<html>", b"[1]", b'{"id": 1}'], skipped=skipped))
    []
    >>> sorted(skipped.items())
    [('no_custom_id', 1), ('not_json', 1), ('not_object', 1)]
    """
    skipped = Counter() if skipped is None else skipped
    found = []
    for number, line in enumerate(_bounded_lines(lines, line_limit), 1):
        if line is not None and not line.strip():
            continue
        answer = _answer(line)
        if isinstance(answer, str):
            skipped[answer] += 1
            if sum(skipped.values()) <= LOGGED:
                log.warning("batch output line %d skipped: %s", number, answer)
            continue
        found.append(answer)
        if len(found) == most:
            yield found
            found = []
    if found:
        yield found


def _bounded_lines(
    lines: BinaryIO | Iterable[bytes], limit: int
) -> Iterator[bytes | None]:
    """Each line, or None for one over ``limit`` bytes (read past in
    pieces when ``lines`` is a file: memory stays bounded)."""
    if not hasattr(lines, "readline"):
        for line in lines:
            yield line if len(line) <= limit else None
        return
    while line := lines.readline(limit + 1):
        if len(line) <= limit or line.endswith(b"\n"):
            yield line if len(line) <= limit else None
            continue
        while (rest := lines.readline(PIECE)) and not rest.endswith(b"\n"):
            pass  # the rest of a line too long to keep
        yield None


def _answer(line: bytes | None) -> dict[str, Any] | str:
    """A line's answer, or why it is none (:func:`answers_in`)."""
    if line is None:
        return "too_long"
    try:
        record = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError:
        return "not_utf8"
    except (ValueError, RecursionError):
        return "not_json"
    if not isinstance(record, dict):
        return "not_object"
    custom_id = record.get("custom_id")
    if not isinstance(custom_id, str) or not custom_id:
        return "no_custom_id"
    response = record.get("response")
    response = response if isinstance(response, dict) else {}
    status, body = response.get("status_code"), response.get("body")
    error = record.get("error")
    code = error.get("code") if isinstance(error, dict) else error
    return {
        "custom_id": custom_id,
        "status_code": status if type(status) is int else None,
        "body": body if isinstance(body, dict) else None,
        "error": str(code)[:64] if code else None,
    }
