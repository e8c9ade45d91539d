"""The scripted judge's prompt cache, counted the way OpenAI reports it:
a prompt of at least 1,024 tokens whose beginning equals the beginning of
a prompt the server saw earlier (same model) has that shared prefix served
from the cache, in steps of 128 tokens from 1,024, and reported as
``usage.prompt_tokens_details.cached_tokens`` (a part of ``prompt_tokens``).
Tokens are 4 characters of the messages' text (``judge_wire.prompt_tokens``).

>>> cache = PromptCache()
>>> first = {"model": "m", "messages": [{"role": "user", "content": "a" * 6000}]}
>>> cache.served(first)  # never seen: nothing cached
0
>>> again = {"model": "m", "messages": [{"role": "user", "content": "a" * 5000 + "b"}]}
>>> cache.served(again)  # 5,000 shared characters: 1,250 tokens, 1,152 in steps
1152
>>> cache.served({"model": "other", **{"messages": again["messages"]}})
0
"""

from __future__ import annotations

import hashlib
import threading

CHARS_PER_TOKEN = 4
MIN_TOKENS = 1024  # shorter prompts are never cached
STEP_TOKENS = 128


def _text(body: dict) -> str:
    """The messages' text in order (what the prefix is compared on)."""
    return "".join(str(m.get("content") or "") for m in body.get("messages", ()))


class PromptCache:
    """Prefixes seen, per model, at every cacheable length (thread-safe)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.seen: dict[str, set[bytes]] = {}

    def served(self, body: dict) -> int:
        """The prompt tokens of ``body`` served from the cache (then the
        prompt's own prefixes are remembered)."""
        model = str(body.get("model"))
        steps = _prefix_digests(_text(body))
        with self.lock:
            known = self.seen.setdefault(model, set())
            cached = 0
            for tokens, digest in steps:
                if digest not in known:
                    break
                cached = tokens
            known.update(digest for _, digest in steps)
        return cached


def _prefix_digests(text: str) -> list[tuple[int, bytes]]:
    """(tokens, digest of the text's first tokens) at 1,024, 1,152, ...
    tokens, as far as the text reaches."""
    found = []
    digest = hashlib.sha256()
    done = 0
    tokens = MIN_TOKENS
    while tokens * CHARS_PER_TOKEN <= len(text):
        end = tokens * CHARS_PER_TOKEN
        digest.update(text[done:end].encode("utf-8", "surrogatepass"))
        done = end
        found.append((tokens, digest.copy().digest()))
        tokens += STEP_TOKENS
    return found
