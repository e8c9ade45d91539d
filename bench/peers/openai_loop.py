"""Runs inside ``.venv-peers``: the plain way to call a judge with the openai
SDK, 1,000 ``chat.completions.create`` calls through an
``asyncio.Semaphore(64)`` and the SDK's own retries (``max_retries``; its
default is 2). Prints ``{"calls": n, "failed_calls": n, "errors": {...}}``.

``python openai_loop.py URL MESSAGES_JSONL CONCURRENCY MAX_TOKENS MAX_RETRIES``
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections import Counter


async def main(url: str, path: str, concurrency: int, max_tokens: int, retries: int):
    from openai import APIError, AsyncOpenAI

    client = AsyncOpenAI(base_url=url, api_key="scripted", max_retries=retries)
    gate = asyncio.Semaphore(concurrency)

    async def one(messages: list) -> str | None:
        """None when answered, else the error's class name."""
        async with gate:
            try:
                await client.chat.completions.create(
                    model="scripted", messages=messages, max_tokens=max_tokens
                )
            except APIError as error:  # the SDK gave up (its retries are spent)
                return type(error).__name__
        return None

    with open(path) as lines:
        conversations = [json.loads(line) for line in lines]
    outcomes = await asyncio.gather(*(one(m) for m in conversations))
    errors = Counter(o for o in outcomes if o is not None)
    failed = sum(errors.values())
    print(
        json.dumps({"calls": len(outcomes), "failed_calls": failed, "errors": errors})
    )


if __name__ == "__main__":
    url, path, concurrency, max_tokens, retries = sys.argv[1:6]
    asyncio.run(main(url, path, int(concurrency), int(max_tokens), int(retries)))
