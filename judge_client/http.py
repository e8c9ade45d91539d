"""The HTTP side of a judge call: one request to an OpenAI-compatible
``/chat/completions``, read within its size and time limits and retried within
its budget; failures carry the note their row shows."""

from __future__ import annotations

import heapq
import itertools
import json
import random
import threading
from email.utils import parsedate_to_datetime
from time import monotonic, time

from core.telemetry import JUDGE_FAILURES, JUDGE_SECONDS
from judge_client.config import JudgeConfig
from metrics.notes import Note, note

RETRY_STATUSES = {408, 409, 429, 500, 502, 503, 504}
MAX_RETRY_AFTER_S = 120.0


def names_structured_output(error: JudgeHTTPError) -> bool:
    """A 400/422 whose body names the structured-output parameter."""
    detail = error.detail.lower()
    named = any(
        word in detail for word in ("response_format", "json_schema", "structured")
    )
    return error.status in (400, 422) and named


class JudgeHTTPError(Exception):
    """A call that failed; ``note`` says why, for the row (metrics/notes.py)."""

    def __init__(self, reason: Note, status: int | None = None, retry_after=None):
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


class _Deadlines:
    """One thread for every call's deadline (a timer thread per call cost
    more than the call at hundreds of calls a second): it cuts off each
    response still being read when its deadline passes."""

    def __init__(self):
        self._ready = threading.Condition()
        self._heap: list = []  # (deadline, order, [response or None])
        self._order = itertools.count()
        self._thread: threading.Thread | None = None

    def watch(self, deadline: float, response) -> list:
        entry = [response]
        with self._ready:
            heapq.heappush(self._heap, (deadline, next(self._order), entry))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="judge-deadlines", daemon=True
                )
                self._thread.start()
            self._ready.notify()
        return entry

    @staticmethod
    def done(entry: list) -> None:
        entry[0] = None  # read in time: nothing to cut

    def _run(self) -> None:
        while True:
            with self._ready:
                while not self._heap or self._heap[0][0] > monotonic():
                    wait = self._heap[0][0] - monotonic() if self._heap else None
                    self._ready.wait(wait)
                _, _, entry = heapq.heappop(self._heap)
            if entry[0] is not None:
                _cut_off(entry[0])


DEADLINES = _Deadlines()


def read_body(response, limit: int, deadline: float) -> bytes:
    """The body, read in pieces up to ``limit`` bytes and by ``deadline``
    (``time.monotonic``): past it the response is cut off, so a server
    dripping one byte at a time cannot hold a judge slot for longer."""
    import requests

    watched = DEADLINES.watch(deadline, response)
    parts, size = [], 0
    try:
        for part in response.iter_content(16_384):
            size += len(part)
            if size > limit:
                raise ReplyTooLarge(note("reply_too_large", limit=limit))
            parts.append(part)
    except ReplyTooLarge:
        raise
    except Exception as exc:  # cut off under the read, or the transport failed
        kind = "DeadlineExceeded" if monotonic() >= deadline else type(exc).__name__
        raise requests.ConnectionError(kind) from None
    finally:
        DEADLINES.done(watched)
        response.close()
    if monotonic() >= deadline:
        raise requests.ConnectionError("DeadlineExceeded")
    return b"".join(parts)


def _cut_off(response) -> None:
    """End a response another thread is reading: closing a socket does not
    wake a blocked ``recv`` on Linux, shutting it down does."""
    import socket

    connection = getattr(response.raw, "_connection", None)
    sock = getattr(connection, "sock", None)
    if sock is None:  # urllib3 hands the connection back once it is read
        fp = getattr(getattr(response.raw, "_fp", None), "fp", None)
        sock = getattr(getattr(fp, "raw", None), "_sock", None)
    try:
        if sock is not None:
            sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # already closed
    response.close()


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


def _wait(config: JudgeConfig):
    """``Retry-After`` when the server gave one, else full-jitter exponential
    backoff from a private RNG (the global ``random`` stays untouched)."""
    jitter = random.Random()

    def wait(state) -> float:  # a tenacity RetryCallState
        error = state.outcome.exception() if state.outcome else None
        retry_after = getattr(error, "retry_after", None)
        if retry_after is not None:
            return retry_after
        ceiling = min(config.backoff_cap_s, 0.25 * 2 ** (state.attempt_number - 1))
        return jitter.uniform(0, ceiling)

    return wait


class JudgeClient:
    """The HTTP side: one call, retried within the configured budget."""

    def __init__(self, config: JudgeConfig):
        # requests and tenacity load with the first client, not with the app.
        from tenacity import retry, retry_if_exception, stop_after_attempt

        self.config = config
        self.url = f"{config.base_url.rstrip('/')}/chat/completions"
        self._local = threading.local()
        self._reading: set = set()  # responses whose bodies are being read
        self._reading_lock = threading.Lock()
        # OpenAI's reasoning models refuse max_tokens and want
        # max_completion_tokens; learned from the first 400 that says so.
        self.token_field = "max_tokens"
        self._retrying = retry(
            retry=retry_if_exception(
                lambda e: isinstance(e, JudgeHTTPError) and e.retryable
            ),
            stop=stop_after_attempt(config.max_retries + 1),
            wait=_wait(config),
            reraise=True,
        )(self._complete_once)

    def complete(self, messages: list, sample: int, before_attempt=None, **extra):
        """One call, retried on transport errors (``_complete_once``)."""
        try:
            return self._retrying(messages, sample, before_attempt, **extra)
        except JudgeHTTPError as error:
            # (another thread may have switched already: this call still
            # went out with max_tokens, so it is asked once more either way)
            if error.status != 400 or "max_completion_tokens" not in error.detail:
                raise
            self.token_field = "max_completion_tokens"
            return self._retrying(messages, sample, before_attempt, **extra)

    def cut_all(self) -> None:
        """End every call of this client still reading its reply (a
        cancelled run frees its judge slots at once)."""
        with self._reading_lock:
            reading = list(self._reading)
        for response in reading:
            _cut_off(response)

    def _session(self):
        import requests

        if not hasattr(self._local, "session"):
            session = requests.Session()
            # Resolve proxy settings once per thread instead of re-reading the
            # environment and ~/.netrc on every call (a measurable cost at
            # hundreds of calls per second).
            session.proxies = requests.utils.get_environ_proxies(self.url)
            session.trust_env = False
            if self.config.api_key:
                session.headers["Authorization"] = f"Bearer {self.config.api_key}"
            self._local.session = session
        return self._local.session

    def _complete_once(
        self, messages: list, sample: int, before_attempt=None, **extra
    ) -> dict:
        """One request; ``extra`` overrides or adds body fields
        (``max_tokens``, ``response_format``)."""
        if before_attempt is not None:
            before_attempt()  # e.g. raises Cancelled: no more retries for a dead run
        body = {
            "model": self.config.model,
            "messages": messages,
            "temperature": self.config.temperature,
            "max_tokens": self.config.max_tokens,
            "seed": sample,
            **extra,
        }
        if self.token_field != "max_tokens":
            body[self.token_field] = body.pop("max_tokens")
        timeout = (self.config.connect_timeout_s, self.config.timeout_s)
        from requests import RequestException

        started = monotonic()
        deadline = started + self.config.deadline_s
        try:
            response = self._session().post(
                self.url, json=body, timeout=timeout, stream=True
            )
            with self._reading_lock:
                self._reading.add(response)
            try:
                content = read_body(response, self.config.max_reply_bytes, deadline)
            finally:
                with self._reading_lock:
                    self._reading.discard(response)
        except RequestException as exc:
            JUDGE_FAILURES.labels("network").inc()
            kind = str(exc) if str(exc) == "DeadlineExceeded" else type(exc).__name__
            raise JudgeHTTPError(note("network_error", kind=kind)) from None
        finally:
            JUDGE_SECONDS.observe(monotonic() - started)
        if response.status_code != 200:
            JUDGE_FAILURES.labels(f"http_{response.status_code}").inc()
            retry_after = parse_retry_after(response.headers.get("Retry-After"))
            reason = note("http_error", status=response.status_code)
            error = JudgeHTTPError(reason, response.status_code, retry_after)
            error.detail = content[:2000].decode("utf-8", "replace")  # what a 400 names
            raise error
        return read_completion(content)


def read_completion(content: bytes) -> dict:
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
    }


def _count(value) -> int:
    """A token count as reported; anything that is not a count is 0."""
    return value if isinstance(value, int) and value >= 0 else 0
