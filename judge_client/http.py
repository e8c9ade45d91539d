"""The HTTP side of a judge call: one request to an OpenAI-compatible
``/chat/completions``, read within its size and time limits and retried within
its budget; failures carry the note their row shows."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from email.utils import parsedate_to_datetime
from time import monotonic, time
from typing import Any

from core.telemetry import JUDGE_FAILURES, JUDGE_SECONDS
from judge_client.config import JudgeConfig, prompt_chars
from judge_client.pacing import pace_for, retry_after_s
from metrics.notes import Note, note

RETRY_STATUSES = {408, 409, 429, 500, 502, 503, 504}
MAX_RETRY_AFTER_S = 120.0
CHARS_PER_TOKEN = 4  # the prompt's tokens, roughly, until replies report them
# a request's messages: role/content objects, as rendered
Messages = Sequence[Mapping[str, Any]]
# awaited before each attempt of a call (e.g. a check that its run goes on)
BeforeAttempt = Callable[[], Awaitable[object]]


def names_structured_output(error: JudgeHTTPError) -> bool:
    """A 400/422 whose body names the structured-output parameter."""
    detail = error.detail.lower()
    named = any(
        word in detail for word in ("response_format", "json_schema", "structured")
    )
    return error.status in (400, 422) and named


class JudgeHTTPError(Exception):
    """A call that failed; ``note`` says why, for the row (metrics/notes.py)."""

    def __init__(
        self,
        reason: Note,
        status: int | None = None,
        retry_after: float | None = None,
    ):
        super().__init__(reason.english)
        self.note = reason
        self.status = status
        self.retry_after = retry_after
        self.detail = ""  # the server's error body, cut

    @property
    def retryable(self) -> bool:
        return self.status is None or self.status in RETRY_STATUSES


class Refused(JudgeHTTPError):
    """A call never sent: the run's call cap is reached (``budget_exhausted``)
    or the prompt is over ``MAX_PROMPT_CHARS_PER_CALL``. Never retried."""

    @property
    def retryable(self) -> bool:
        return False


class ReplyTooLarge(Refused):
    """A reply body over ``JUDGE_MAX_REPLY_BYTES``: read no further, unscored."""


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or HTTP date).

    >>> parse_retry_after("3")
    3.0
    >>> parse_retry_after(None) is None
    True
    """
    if not value:
        return None
    try:
        return min(max(float(value), 0.0), MAX_RETRY_AFTER_S)
    except ValueError:
        pass
    try:
        return min(
            max(parsedate_to_datetime(value).timestamp() - time(), 0.0),
            MAX_RETRY_AFTER_S,
        )
    except (TypeError, ValueError):
        return None


class _Backoff:
    """The wait before another attempt: ``Retry-After`` when the server gave
    one, else full-jitter exponential backoff from a private RNG (the global
    ``random`` stays untouched)."""

    def __init__(self, cap_s: float):
        self.cap_s = cap_s
        self._jitter = random.Random()

    def seconds(self, attempt: int, error: JudgeHTTPError) -> float:
        """Before attempt ``attempt + 1``, after ``error``."""
        if error.retry_after is not None:
            return error.retry_after
        return self._jitter.uniform(0, min(self.cap_s, 0.25 * 2 ** (attempt - 1)))


class JudgeClient:
    """The HTTP side: one call, retried within the configured budget. Its
    calls are coroutines on the judge loop (:mod:`judge_client.loop`)."""

    def __init__(self, config: JudgeConfig):
        # aiohttp loads with the first client, not with the app.
        from judge_client import transport

        self.config = config
        self.url = f"{config.base_url.rstrip('/')}/chat/completions"
        self._transport = transport
        self._headers = {"Content-Type": "application/json"}
        if config.api_key:
            self._headers["Authorization"] = f"Bearer {config.api_key}"
        self._timeouts = transport.timeouts(config.connect_timeout_s, config.timeout_s)
        self._backoff = _Backoff(config.backoff_cap_s)
        # OpenAI's reasoning models refuse max_tokens and want
        # max_completion_tokens; learned from the first 400 that says so.
        self.token_field = "max_tokens"

    async def complete(
        self,
        messages: Messages,
        sample: int,
        before_attempt: BeforeAttempt | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        """One call, retried on transport errors (``_complete_once``);
        ``before_attempt``: a coroutine function awaited before each request."""
        try:
            return await self._retrying(messages, sample, before_attempt, **extra)
        except JudgeHTTPError as error:
            # (another call may have switched already: this call still
            # went out with max_tokens, so it is asked once more either way)
            if error.status != 400 or "max_completion_tokens" not in error.detail:
                raise
            self.token_field = "max_completion_tokens"
            return await self._retrying(messages, sample, before_attempt, **extra)

    async def _retrying(
        self,
        messages: Messages,
        sample: int,
        before_attempt: BeforeAttempt | None,
        **extra: Any,
    ) -> dict[str, Any]:
        """Up to ``max_retries`` more attempts after a retryable failure. (A
        loop, not tenacity: its bookkeeping per call was a tenth of the
        client's CPU at hundreds of calls a second, bench/client_cpu.py.)"""
        attempts = self.config.max_retries + 1
        for attempt in range(1, attempts + 1):
            try:
                return await self._complete_once(
                    messages, sample, before_attempt, **extra
                )
            except JudgeHTTPError as error:
                if not error.retryable or attempt == attempts:
                    raise
                await asyncio.sleep(self._backoff.seconds(attempt, error))
        raise AssertionError("unreachable")  # the loop returns or raises

    def request_body(
        self, messages: Messages, sample: int, **extra: Any
    ) -> dict[str, Any]:
        """The request as sent (online, or as a line of a batch file)."""
        body: dict[str, Any] = {
            "model": self.config.model,
            "messages": messages,
            "temperature": self.config.temperature,
            "max_tokens": self.config.max_tokens,
            "seed": sample,
            **extra,
        }
        if self.token_field != "max_tokens":
            body[self.token_field] = body.pop("max_tokens")
        return body

    async def _complete_once(
        self,
        messages: Messages,
        sample: int,
        before_attempt: BeforeAttempt | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        """One request; ``extra`` overrides or adds body fields
        (``max_tokens``, ``response_format``)."""
        pace = pace_for(self.url, self.config.model, self.config.rpm, self.config.tpm)
        estimated = prompt_chars(messages) // CHARS_PER_TOKEN
        # its turn under the endpoint's limits (pacing.py), then its call
        paced_s = await pace.admit(
            estimated,
            extra.get("max_tokens", self.config.max_tokens),
            first_reply_s=self.config.deadline_s,
        )
        try:
            if before_attempt is not None:
                await before_attempt()  # e.g. Cancelled: no retry for a dead run
            body = self.request_body(messages, sample, **extra)
            payload = json.dumps(body, ensure_ascii=False).encode()
        except BaseException:
            pace.unsent()  # its turn goes to another (none waits on its reply)
            raise
        transport = self._transport
        limit = self.config.max_reply_bytes
        started = monotonic()
        try:
            status, said, content = await transport.fetch(
                self.url,
                payload,
                self._headers,
                self._timeouts,
                limit,
                self.config.deadline_s,
            )
        except transport.TooLarge:
            pace.observe(None, {})
            raise ReplyTooLarge(note("reply_too_large", limit=limit)) from None
        except transport.TransportError as exc:
            pace.observe(None, {})
            JUDGE_FAILURES.labels("network").inc()
            raise JudgeHTTPError(note("network_error", kind=exc.kind)) from None
        finally:
            JUDGE_SECONDS.observe(monotonic() - started)
        if status != 200:
            pace.observe(status, said)
            JUDGE_FAILURES.labels(f"http_{status}").inc()
            reason = note("http_error", status=status)
            wait = retry_after_s(said) if "retry-after-ms" in said else None
            error = JudgeHTTPError(
                reason, status, wait or parse_retry_after(said.get("retry-after"))
            )
            error.detail = content[:2000].decode("utf-8", "replace")  # what a 400 names
            raise error
        reply = read_completion(content)
        pace.observe(200, said, estimated, reply["prompt_tokens"])
        return {**reply, "paced_s": paced_s}  # (progress shows a run held back)


def read_completion(content: bytes) -> dict[str, Any]:
    """The reply's text, why it stopped, and the usage it reports."""
    try:
        payload = json.loads(content)
        choice = payload["choices"][0]
        text = choice["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        JUDGE_FAILURES.labels("malformed_reply").inc()
        raise JudgeHTTPError(note("malformed_reply"), 502) from None
    reported = payload.get("usage") if isinstance(payload.get("usage"), dict) else {}
    details = reported.get("completion_tokens_details") or {}
    prompt_details = reported.get("prompt_tokens_details") or {}
    if not isinstance(text, str):
        text = ""  # e.g. a reasoning model that spent every token thinking
    return {
        # PostgreSQL stores no U+0000; a reply is kept as evidence, so
        # the character is shown as the replacement character instead.
        "text": text.replace("\x00", "\ufffd"),
        "finish_reason": choice.get("finish_reason"),
        "prompt_tokens": _count(reported.get("prompt_tokens")),
        "completion_tokens": _count(reported.get("completion_tokens")),
        "reasoning_tokens": _count(
            details.get("reasoning_tokens") if isinstance(details, dict) else 0
        ),
        # the part of the prompt served from the provider's prompt cache
        "cached_tokens": _count(
            prompt_details.get("cached_tokens")
            if isinstance(prompt_details, dict)
            else 0
        ),
    }


def _count(value: object) -> int:
    """A token count as reported; anything that is not a count is 0."""
    return value if isinstance(value, int) and value >= 0 else 0
