"""LLM judge client for any OpenAI-compatible ``/chat/completions`` API.

* One ``requests.Session`` per thread, explicit (connect, read) timeouts.
* Bounded retries on 408/409/429/5xx and network errors, honouring
  ``Retry-After``, else jittered exponential backoff; other 4xx fail at once.
* Content-addressed cache of successful parses only: a re-run of the same
  file and config makes zero calls.
* An unparseable reply is asked once more at a new sample index, then stored
  as ``unscored`` with the raw text. Nothing is ever imputed.
* One pool of ``JUDGE_CONCURRENCY`` calls in flight per worker process,
  shared by every chunk, run and judge model it serves (:class:`JudgePool`).
"""

from __future__ import annotations

import hashlib
import heapq
import itertools
import json
import random
import threading
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from time import monotonic, time

from config import DEFAULTS
from core import usage
from core.status import Cancelled, RowStatus
from core.telemetry import JUDGE_FAILURES, JUDGE_SECONDS
from metrics.judging import JudgeItem, reask_messages, strict_json
from metrics.notes import Note, note

__all__ = ["Cancelled", "Judge", "JudgeConfig", "JudgeOutcome"]

RETRY_STATUSES = {408, 409, 429, 500, 502, 503, 504}
RETRY_SAMPLE_OFFSET = 1000  # the one re-ask of an unparseable reply
MAX_RETRY_AFTER_S = 120.0
CANCEL_POLL_S = 0.5  # how often a chunk waiting on calls asks if it was cancelled


@dataclass(frozen=True)
class JudgeConfig:
    """A judge's settings; every default is the one in ``config.DEFAULTS``."""

    base_url: str
    model: str
    api_key: str | None = None
    temperature: float = DEFAULTS["JUDGE_TEMPERATURE"]
    max_tokens: int = DEFAULTS["JUDGE_MAX_TOKENS"]
    timeout_s: float = DEFAULTS["JUDGE_TIMEOUT_S"]
    connect_timeout_s: float = DEFAULTS["JUDGE_CONNECT_TIMEOUT_S"]
    max_retries: int = DEFAULTS["JUDGE_MAX_RETRIES"]
    concurrency: int = DEFAULTS["JUDGE_CONCURRENCY"]
    samples: int = 1
    backoff_cap_s: float = DEFAULTS["JUDGE_BACKOFF_CAP_S"]
    max_tokens_retry: int = DEFAULTS["JUDGE_MAX_TOKENS_RETRY"]
    max_prompt_chars: int = DEFAULTS["MAX_PROMPT_CHARS_PER_CALL"]
    deadline_s: float = DEFAULTS["JUDGE_DEADLINE_S"]
    max_reply_bytes: int = DEFAULTS["JUDGE_MAX_REPLY_BYTES"]

    @classmethod
    def from_settings(cls, config: dict, options: dict) -> JudgeConfig | None:
        """The judge a run uses: its own settings plus the key from this
        process's configuration; None when no judge is configured."""
        url = options.get("judge_url") or config.get("JUDGE_API_URL")
        model = options.get("judge_model") or config.get("JUDGE_MODEL")
        if not (url and model):
            return None
        return cls(
            base_url=url,
            model=model,
            api_key=config.get("JUDGE_API_KEY"),
            timeout_s=config["JUDGE_TIMEOUT_S"],
            max_retries=config["JUDGE_MAX_RETRIES"],
            max_tokens=config["JUDGE_MAX_TOKENS"],
            max_tokens_retry=config["JUDGE_MAX_TOKENS_RETRY"],
            concurrency=config["JUDGE_CONCURRENCY"],
            samples=options.get("samples", 1),
            max_prompt_chars=config["MAX_PROMPT_CHARS_PER_CALL"],
            deadline_s=config["JUDGE_DEADLINE_S"],
            max_reply_bytes=config["JUDGE_MAX_REPLY_BYTES"],
        )

    def public(self) -> dict:
        """What results may show: never the API key."""
        return {
            "model": self.model,
            "temperature": self.temperature,
            "samples": self.samples,
        }


STORED_REPLY_CHARS = 20_000  # of a raw reply kept as evidence on the row


def kept_reply(text: str | None, limit: int = STORED_REPLY_CHARS) -> str | None:
    """A reply as a row keeps it: cut at ``limit`` characters with a marker
    saying how much was left out.

    >>> kept_reply("abcdef", 4)
    'abcd… [2 more characters not kept]'
    """
    if text is None or len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit} more characters not kept]"


@dataclass
class JudgeOutcome:
    status: str  # a RowStatus: ok | unscored | error
    verdict: dict | None = None
    raw: str | None = None
    note: Note | None = None  # why there is no verdict
    cached: bool = False
    reasked: int = 0  # re-asks this outcome took (0 or 1)

    def __post_init__(self) -> None:
        self.raw = kept_reply(self.raw)


class Usage:
    """A run's judge counters in this process: the run's totals
    (``judge_calls``, ``cache_hits``, tokens) and each model's
    (:mod:`core.usage`), added together under one lock."""

    TOTALS = ("judge_calls", "cache_hits", "prompt_tokens", "completion_tokens")

    def __init__(self):
        self.lock = threading.Lock()
        self._counts: dict[str, int] = {}

    def add(self, model: str = "", **counts: int) -> None:
        """``counts`` are per-model fields (``core.usage.FIELDS``)."""
        with self.lock:
            for field_name, value in counts.items():
                name = usage.key(model, field_name)
                self._counts[name] = self._counts.get(name, 0) + value
            totals = {
                "judge_calls": counts.get("calls", 0),
                "cache_hits": counts.get("cached", 0),
                "prompt_tokens": counts.get("prompt_tokens", 0),
                "completion_tokens": counts.get("completion_tokens", 0),
            }
            for name, value in totals.items():
                self._counts[name] = self._counts.get(name, 0) + value

    def counters(self) -> dict[str, int]:
        """Every counter: the totals, then ``judge_usage|model|field``."""
        with self.lock:
            found = {name: self._counts.get(name, 0) for name in self.TOTALS}
            found.update(self._counts)
            return found

    def by_model(self) -> dict[str, dict[str, int]]:
        return usage.split(self.counters())[1]


class StopCheck:
    """Asks ``should_stop`` at most every ``interval_s`` (it hits the database)."""

    def __init__(self, should_stop=None, interval_s: float = 0.5):
        self.should_stop = should_stop
        self.interval_s = interval_s
        self.checked_at = 0.0
        self.stopped = False
        self.lock = threading.Lock()

    def check(self) -> None:
        """One thread asks; the others go on with the last answer instead of
        queueing behind it: the question is a database read (and the chunk's
        heartbeat, a write that may wait for other writers), and 64 judge
        threads waiting on it measured as most of their time."""
        if self.should_stop is None:
            return
        due = not self.stopped and monotonic() - self.checked_at >= self.interval_s
        if due and self.lock.acquire(blocking=False):
            try:
                if monotonic() - self.checked_at >= self.interval_s:
                    self.checked_at = monotonic()
                    self.stopped = bool(self.should_stop())
            finally:
                self.lock.release()
        if self.stopped:
            raise Cancelled


class StructuredOutput:
    """Whether to ask a judge (URL + model) for structured output: yes until
    it refuses the parameter (a 400 naming it) or ignores it (a reply that is
    not JSON); then the text grammar alone, for the rest of the run."""

    def __init__(self, refused: bool = False):
        self.state = "text" if refused else "unknown"

    def wanted(self) -> bool:
        return self.state in ("unknown", "json_schema")

    def rejected(self) -> None:
        self.state = "text"

    def answered(self, honoured: bool) -> None:
        if self.state != "text":
            self.state = "json_schema" if honoured else "ignored"


def response_format(name: str, schema: dict) -> dict:
    """OpenAI's ``response_format`` for a JSON schema, strict."""
    return {
        "type": "json_schema",
        "json_schema": {"name": name, "strict": True, "schema": schema},
    }


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


def prompt_chars(messages: list) -> int:
    """Characters of a request's messages (what the prompt cap counts).

    >>> prompt_chars([{"role": "user", "content": "abc"}, {"content": "de"}])
    5
    """
    return sum(len(str(m.get("content") or "")) for m in messages)


def cache_key(config: JudgeConfig, item: JudgeItem, sample: int) -> str:
    canonical = json.dumps(
        [
            config.base_url,
            config.model,
            list(item.messages),
            config.temperature,
            config.max_tokens,
            sample,
            item.prompt_version,
        ],
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


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


class JudgePool:
    """The bounded pool of judge calls of a worker process (one per app),
    shared by every chunk, run and judge model it serves, so
    ``JUDGE_CONCURRENCY`` holds however many runs are evaluating. Threads
    start as calls come (at most ``size``) and end after ``IDLE_S`` idle.

    Calls wait in one queue per ``key`` (a run) and the free threads take
    from the keys in turn: a run with thousands of calls queued, or a slow
    judge, never makes the next run wait for all of them.
    """

    IDLE_S = 30.0

    def __init__(self, size: int):
        self.size = size
        self._ready = threading.Condition()
        self._queues: dict[str, deque] = {}  # insertion order: whose turn is next
        self._threads: set[threading.Thread] = set()
        self._idle = 0
        self._closing = False

    def submit(self, function, *args, key: str = "") -> Future:
        future: Future = Future()
        with self._ready:
            self._queues.setdefault(key, deque()).append((future, function, args))
            if self._idle == 0 and len(self._threads) < self.size:
                thread = threading.Thread(target=self._work, name="judge", daemon=True)
                self._threads.add(thread)
                thread.start()
            else:
                self._ready.notify()
        return future

    def _next(self):
        """The next call, from the key whose turn it is; None after
        ``IDLE_S`` without one (under the lock)."""
        while not self._closing:
            for key in list(self._queues):
                queue = self._queues.pop(key)
                found = queue.popleft()
                if queue:
                    self._queues[key] = queue  # to the back of the line
                return found
            self._idle += 1
            woken = self._ready.wait(self.IDLE_S)
            self._idle -= 1
            if not woken and not self._queues:
                break
        self._threads.discard(threading.current_thread())
        return None

    def _work(self) -> None:
        while True:
            with self._ready:
                found = self._next()
            if found is None:
                return
            future, function, args = found
            if not future.set_running_or_notify_cancel():
                continue  # cancelled while it waited
            try:
                future.set_result(function(*args))
            except BaseException as exc:  # the caller's future carries it
                future.set_exception(exc)

    def shutdown(self) -> None:
        """Cancel what waits, let the calls under way end, stop the threads;
        the pool starts threads again for later calls."""
        with self._ready:
            self._closing = True
            for queue in self._queues.values():
                for future, _, _ in queue:
                    future.cancel()
            self._queues.clear()
            threads = list(self._threads)
            self._ready.notify_all()
        for thread in threads:
            thread.join()
        with self._ready:
            self._threads.clear()
            self._closing = False


class Judge:
    """What metrics receive: ``judge.evaluate(items) -> outcomes`` in order.
    Each item with its outcome (a cache hit, a verdict, a failure) is
    reported to ``on_items`` as it comes in: a chunk's progress moves per item.

    ``cache`` is duck-typed (``get(keys) -> {key: entry}``, ``put(entries)``)
    so this module never imports storage.
    """

    def __init__(
        self, config: JudgeConfig, cache=None, client=None, should_stop=None,
        pool=None, on_items=None, usage: Usage | None = None,
        structured: StructuredOutput | None = None, allowance=None,
        fair_key: str = "",
    ):  # fmt: skip
        self.config = config
        self.structured = structured or StructuredOutput()
        self.pool = pool or JudgePool(config.concurrency)
        self.cache = cache
        self.client = client or JudgeClient(config)
        self.usage = usage or Usage()  # a panel's judges count together
        self._stop = StopCheck(should_stop)
        # allowance() -> bool: take one call of the run's cap before each
        # request goes out (transport retries and re-asks too); injected
        self._allowance = allowance or (lambda: True)
        self.fair_key = fair_key  # the run: the pool takes runs' calls in turn
        # on_items(n): n more items have their outcome. Injected (progress),
        # called on the thread that called ``evaluate``, never on the pool's.
        self._on_items = on_items or (lambda count: None)

    def evaluate(self, items: list[JudgeItem]) -> list[JudgeOutcome]:
        keys = [cache_key(self.config, item, item.sample) for item in items]
        hits = self.cache.get(keys) if self.cache else {}
        outcomes: dict[int, JudgeOutcome] = {}  # item index -> outcome
        todo: list[int] = []
        for index, key in enumerate(keys):
            entry = hits.get(key)
            if entry is not None:
                outcomes[index] = JudgeOutcome(
                    RowStatus.OK, entry.parsed, entry.reply, cached=True
                )
            else:
                todo.append(index)
        if len(todo) < len(items):
            self.usage.add(self.config.model, cached=len(items) - len(todo))
        if len(todo) < len(items):
            self._on_items(len(items) - len(todo))
        futures = {
            index: self.pool.submit(self._judge_one, items[index], key=self.fair_key)
            for index in todo
        }
        fresh = []
        results = {}
        try:
            # Collected in submission order, which is the pool's order, so
            # each outcome is reported about when it arrives.
            for index, future in futures.items():
                results[index] = self._result(future)
                self._on_items(1)
        except Cancelled:
            for future in futures.values():
                future.cancel()
            cut = getattr(self.client, "cut_all", None)
            if cut is not None:
                cut()  # the calls in flight end now, not at their deadline
            raise
        for index, (outcome, entry) in results.items():
            outcomes[index] = outcome
            if entry:
                fresh.append({**entry, "key": keys[index]})
        if self.cache and fresh:
            self.cache.put(fresh)
        return [outcomes[index] for index in range(len(items))]

    def _result(self, future):
        """A call's outcome; while waiting, whether the run was cancelled
        (raises ``Cancelled``: the caller ends the calls in flight)."""
        from concurrent.futures import TimeoutError as Waiting

        while True:
            try:
                return future.result(timeout=CANCEL_POLL_S)
            except Waiting:
                self._stop.check()

    def _judge_one(self, item: JudgeItem) -> tuple[JudgeOutcome, dict | None]:
        """Ask; when the reply has no readable verdict, ask once more: a reply
        cut off by ``max_tokens`` with more tokens, any other quoting the
        format the prompt asked for. Then ``unscored`` with the reason."""
        self._stop.check()
        raws: list[str] = []
        messages, sample = list(item.messages), item.sample
        max_tokens, why = self.config.max_tokens, None
        for attempt in range(2):
            try:
                reply = self.ask(item, messages, sample, max_tokens, reask=attempt > 0)
            except ReplyTooLarge as exc:  # an answer, too long to read: no verdict
                raw = "\n---\n".join(raws) or None
                return JudgeOutcome(RowStatus.UNSCORED, raw=raw, note=exc.note), None
            except JudgeHTTPError as exc:
                raw = "\n---\n".join(raws) or None
                return JudgeOutcome(RowStatus.ERROR, raw=raw, note=exc.note), None
            raws.append(reply["text"])
            if reply["finish_reason"] == "length":
                why = note("truncated")  # never read: the verdict may be cut
                max_tokens = max(self.config.max_tokens_retry, max_tokens)
                continue
            verdict, why = item.read(reply["text"])
            if verdict is not None:
                entry = _cache_entry(item, reply, verdict.to_dict())
                # Cached under the first sample's key: the verdict answers that request.
                outcome = JudgeOutcome(
                    RowStatus.OK, verdict.to_dict(), reply["text"], reasked=attempt
                )
                return outcome, entry
            messages = reask_messages(item, reply["text"])
            sample = item.sample + RETRY_SAMPLE_OFFSET
        raw = "\n---\n".join(raws)
        return JudgeOutcome(RowStatus.UNSCORED, raw=raw, note=why, reasked=1), None

    def release(self) -> None:
        """Give back the calls of the run's cap reserved and not used."""
        release = getattr(self._allowance, "release", None)
        if release is not None:
            release()

    def _before_attempt(self) -> None:
        """Before each request: no more for a cancelled run, nor beyond its cap."""
        self._stop.check()
        if not self._allowance():
            raise Refused(note(getattr(self._allowance, "refusal", "budget_exhausted")))

    def ask(self, item, messages, sample, max_tokens, reask: bool = False) -> dict:
        """One request (retried on transport errors), asking for structured
        output while the server has not refused or ignored it."""
        model = self.config.model
        schema = item.mode.schema if self.structured.wanted() else None
        extra = {"max_tokens": max_tokens}
        if schema is not None:
            extra["response_format"] = response_format(item.mode.name, schema)
        if prompt_chars(messages) > self.config.max_prompt_chars:
            raise Refused(note("prompt_too_large", limit=self.config.max_prompt_chars))
        try:
            reply = self.client.complete(
                messages, sample, self._before_attempt, **extra
            )
        except ReplyTooLarge:
            self.usage.add(model, calls=1, reasks=int(reask))
            raise
        except Refused:  # never sent
            raise
        except JudgeHTTPError as exc:
            self.usage.add(model, calls=1, reasks=int(reask))
            if schema is None or not names_structured_output(exc):
                raise
            self.structured.rejected()
            self.usage.add(model, structured_rejected=1)
            return self.ask(item, messages, sample, max_tokens, reask)
        self.usage.add(
            model, calls=1, reasks=int(reask), prompt_tokens=reply["prompt_tokens"],
            completion_tokens=reply["completion_tokens"],
            reasoning_tokens=reply["reasoning_tokens"],
        )  # fmt: skip
        if schema is not None:
            honoured = strict_json(reply["text"]) is not None
            self.structured.answered(honoured)
            self.usage.add(
                model, **{"structured" if honoured else "structured_ignored": 1}
            )
        return reply


def _cache_entry(item: JudgeItem, reply: dict, parsed: dict) -> dict:
    return {
        "prompt_version": item.prompt_version,
        "reply": reply["text"],
        "parsed": parsed,
        "prompt_tokens": reply["prompt_tokens"],
        "completion_tokens": reply["completion_tokens"],
    }


class JudgePanel:
    """Several judge models asked the same items: each judge suite runs once
    per judge (``metrics.engine.evaluate``) and every row names its judge.
    The judges share one pool, one cache and one ``usage``."""

    def __init__(self, judges: list[Judge]):
        self.judges = judges
        self.usage = judges[0].usage

    def release(self) -> None:
        for judge in self.judges:  # one shared allowance: the first gives it back
            judge.release()
