"""OpenAI-compatible Files and Batches endpoints, as a batch-mode run uses
them (issue 49): upload a JSONL of requests (``purpose=batch``), create a
batch of it, ask how it stands, cancel it, and read its output and error
files. Coroutines for the judge loop (``judge_client.loop.run`` calls them
from a worker's thread), on the same connections as the judge's calls."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import aiohttp

from judge_client.config import JudgeConfig
from judge_client.transport import session_for

CALL_DEADLINE_S = 600.0  # an upload of up to 200 MB, or a download
WINDOW = "24h"  # the completion window OpenAI offers
PIECE = 1 << 16  # bytes of a file read at a time


class BatchAPIError(Exception):
    """The provider refused or failed a Files/Batches call (``status``
    None: the call did not get through)."""

    def __init__(self, what: str, status: int | None, detail: str = ""):
        super().__init__(f"{what}: HTTP {status}: {detail[:300]}")
        self.status = status


class BatchAPI:
    def __init__(self, config: JudgeConfig):
        self.base = config.base_url.rstrip("/")
        self.headers = (
            {"Authorization": f"Bearer {config.api_key}"} if config.api_key else {}
        )

    async def _call(
        self, method: str, path: str, what: str, sink: BinaryIO | None = None,
        **kwargs: Any,
    ) -> bytes:  # fmt: skip
        """The reply's body; with ``sink``, a 200's body is written there
        piece by piece instead (an output file may be hundreds of MB)."""
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
                        async for piece in response.content.iter_chunked(PIECE):
                            sink.write(piece)
                        content = b""
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            raise BatchAPIError(what, None, type(exc).__name__) from None
        if response.status != 200:
            raise BatchAPIError(
                what, response.status, content.decode("utf-8", "replace")
            )
        return content

    async def upload(self, path: Path) -> str:
        """The file's id at the provider."""
        form = aiohttp.FormData()
        form.add_field("purpose", "batch")
        with path.open("rb") as handle:
            form.add_field("file", handle, filename=path.name,
                           content_type="application/jsonl")  # fmt: skip
            content = await self._call("POST", "/files", "upload", data=form)
        return str(json.loads(content)["id"])

    async def create(self, file_id: str, metadata: dict[str, str]) -> dict:
        body = {"input_file_id": file_id, "endpoint": "/v1/chat/completions",
                "completion_window": WINDOW, "metadata": metadata}  # fmt: skip
        return json.loads(await self._call("POST", "/batches", "create", json=body))

    async def made_from(self, file_id: str) -> dict | None:
        """The provider's batch of an input file, among its newest 100."""
        listed = json.loads(await self._call("GET", "/batches?limit=100", "list"))
        found = [
            b for b in listed.get("data") or [] if b.get("input_file_id") == file_id
        ]
        return found[0] if found else None

    async def retrieve(self, batch_id: str) -> dict:
        return json.loads(await self._call("GET", f"/batches/{batch_id}", "retrieve"))

    async def cancel(self, batch_id: str) -> dict:
        path = f"/batches/{batch_id}/cancel"
        return json.loads(await self._call("POST", path, "cancel"))

    async def download(self, file_id: str, sink: BinaryIO) -> None:
        """A file's content (an output or error file: JSONL) into ``sink``."""
        await self._call("GET", f"/files/{file_id}/content", "content", sink=sink)


def answers_in(
    lines: Iterable[bytes], most: int = 1000
) -> Iterator[list[dict[str, Any]]]:
    """The answers of an output or error file's lines, ``most`` at a time,
    one per ``custom_id``: the response's status and body, or the error
    that stood for it (a request expired or cancelled before it ran has no
    response).

    >>> line = b'{"custom_id": "a", "response": null, "error": {"code": "batch_expired"}}'
    >>> next(answers_in([line, b""]))
    [{'custom_id': 'a', 'status_code': None, 'body': None, 'error': 'batch_expired'}]
    """
    found = []
    for line in lines:
        if not line.strip():
            continue
        record = json.loads(line)
        response = record.get("response") or {}
        error = record.get("error") or {}
        found.append({
            "custom_id": str(record["custom_id"])[:64],
            "status_code": response.get("status_code"),
            "body": response.get("body"),
            "error": str(error.get("code") or "")[:64] or None,
        })  # fmt: skip
        if len(found) == most:
            yield found
            found = []
    if found:
        yield found
