"""The scripted judge's side of the OpenAI wire format: what a request asks
beyond its prompt and what a reply reports, the way real servers do it.

* ``response_format`` (structured output): a model whose name holds
  ``json-reject`` answers 400 naming the parameter (as servers without
  structured output do); ``json-ok`` honours it (the verdict as a JSON
  object of the schema); any other model ignores it and writes text.
* ``finish_reason``: ``[[fault=truncate]]`` in a response cuts the reply
  before its verdict with ``finish_reason: length`` unless the request
  allows at least ``TRUNCATE_BELOW`` tokens.
* ``usage``: prompt tokens count every message (a re-ask is longer), and a
  model whose name holds ``reasoning`` reports reasoning tokens inside its
  completion tokens; a prompt whose first 1,024 tokens or more were seen
  before reports them as ``prompt_tokens_details.cached_tokens``, as
  OpenAI's prompt cache does (``testing/judge_prompt_cache.py``). The server
  keeps what it reported per model, so tests compare a run's
  ``judge_usage`` with it exactly.
"""

from __future__ import annotations

import threading
from collections import Counter

from testing.judge_prompt_cache import PromptCache

TRUNCATE_BELOW = 2048
REASONING_TOKENS = 37


def structured_refusal(body: dict) -> dict | None:
    """The 400 body a server without structured output sends (or, for a
    model named ``max-completion``, OpenAI's reasoning models' refusal of
    ``max_tokens``), or None."""
    if "max-completion" in str(body.get("model")) and "max_tokens" in body:
        return {
            "error": {
                "message": "Unsupported parameter: 'max_tokens' is not supported with "
                "this model. Use 'max_completion_tokens' instead.",
                "type": "invalid_request_error",
                "param": "max_tokens",
            }
        }
    if body.get("response_format") and "json-reject" in str(body.get("model")):
        return {
            "error": {
                "message": "Unrecognized request argument supplied: response_format",
                "type": "invalid_request_error",
                "param": "response_format",
            }
        }
    return None


def honours_structured(body: dict) -> bool:
    return bool(body.get("response_format")) and "json-ok" in str(body.get("model"))


def cut(text: str, body: dict, truncating: bool) -> tuple[str, str]:
    """(text, finish_reason): cut before the verdict when asked to truncate
    and the request's ``max_tokens`` is below ``TRUNCATE_BELOW``."""
    allowed = body.get("max_tokens") or body.get("max_completion_tokens") or 0
    if truncating and int(allowed) < TRUNCATE_BELOW:
        return text[: max(len(text) // 3, 1)], "length"
    return text, "stop"


def prompt_tokens(body: dict) -> int:
    """A rough count of the prompt's tokens: every message, 4 characters a
    token (what ``usage`` reports and the rate limits reserve)."""
    return sum(len(str(m.get("content") or "")) for m in body["messages"]) // 4


class Reported:
    """Token usage the server reported, per model (thread-safe)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.by_model: dict[str, Counter] = {}
        self.cache = PromptCache()

    def usage(self, body: dict, text: str) -> dict:
        model = str(body.get("model"))
        prompt = prompt_tokens(body)
        reasoning = REASONING_TOKENS if "reasoning" in model else 0
        completion = len(text) // 4 + reasoning
        cached = min(self.cache.served(body), prompt)
        with self.lock:
            counts = self.by_model.setdefault(model, Counter())
            counts.update(
                calls=1,
                prompt_tokens=prompt,
                completion_tokens=completion,
                reasoning_tokens=reasoning,
                cached_tokens=cached,
            )
        found = {"prompt_tokens": prompt, "completion_tokens": completion}
        found["total_tokens"] = prompt + completion
        found["prompt_tokens_details"] = {"cached_tokens": cached}
        if reasoning:
            found["completion_tokens_details"] = {"reasoning_tokens": reasoning}
        return found
