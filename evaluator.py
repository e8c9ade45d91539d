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
import json
import random
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from time import monotonic, time

from config import DEFAULTS
from core.status import Cancelled, RowStatus
from core.telemetry import JUDGE_FAILURES, JUDGE_SECONDS
from metrics.judging import JudgeItem
from metrics.notes import Note, note

__all__ = ["Cancelled", "Judge", "JudgeConfig", "JudgeOutcome"]

RETRY_STATUSES = {408, 409, 429, 500, 502, 503, 504}
RETRY_SAMPLE_OFFSET = 1000  # the one re-ask of an unparseable reply
MAX_RETRY_AFTER_S = 120.0


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
            concurrency=config["JUDGE_CONCURRENCY"],
            samples=options.get("samples", 1),
        )

    def public(self) -> dict:
        """What results may show: never the API key."""
        return {
            "model": self.model,
            "temperature": self.temperature,
            "samples": self.samples,
        }


@dataclass
class JudgeOutcome:
    status: str  # a RowStatus: ok | unscored | error
    verdict: dict | None = None
    raw: str | None = None
    note: Note | None = None  # why there is no verdict
    cached: bool = False


@dataclass
class Usage:
    judge_calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, **counts: int) -> None:
        with self.lock:
            for name, value in counts.items():
                setattr(self, name, getattr(self, name) + value)

    def counters(self) -> dict[str, int]:
        names = ("judge_calls", "cache_hits", "prompt_tokens", "completion_tokens")
        return {name: getattr(self, name) for name in names}


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


class JudgeHTTPError(Exception):
    """A call that failed; ``note`` says why, for the row (metrics/notes.py)."""

    def __init__(self, reason: Note, status: int | None = None, retry_after=None):
        super().__init__(reason.english)
        self.note = reason
        self.status = status
        self.retry_after = retry_after

    @property
    def retryable(self) -> bool:
        return self.status is None or self.status in RETRY_STATUSES


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
        self.complete = retry(
            retry=retry_if_exception(
                lambda e: isinstance(e, JudgeHTTPError) and e.retryable
            ),
            stop=stop_after_attempt(config.max_retries + 1),
            wait=_wait(config),
            reraise=True,
        )(self._complete_once)

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

    def _complete_once(self, messages: list, sample: int, before_attempt=None) -> dict:
        if before_attempt is not None:
            before_attempt()  # e.g. raises Cancelled: no more retries for a dead run
        body = {
            "model": self.config.model,
            "messages": messages,
            "temperature": self.config.temperature,
            "max_tokens": self.config.max_tokens,
            "seed": sample,
        }
        timeout = (self.config.connect_timeout_s, self.config.timeout_s)
        from requests import RequestException

        started = monotonic()
        try:
            response = self._session().post(self.url, json=body, timeout=timeout)
        except RequestException as exc:
            JUDGE_FAILURES.labels("network").inc()
            reason = note("network_error", kind=type(exc).__name__)
            raise JudgeHTTPError(reason) from None
        finally:
            JUDGE_SECONDS.observe(monotonic() - started)
        if response.status_code != 200:
            JUDGE_FAILURES.labels(f"http_{response.status_code}").inc()
            retry_after = parse_retry_after(response.headers.get("Retry-After"))
            reason = note("http_error", status=response.status_code)
            raise JudgeHTTPError(reason, response.status_code, retry_after)
        try:
            payload = response.json()
            text = payload["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            JUDGE_FAILURES.labels("malformed_reply").inc()
            raise JudgeHTTPError(note("malformed_reply"), 502) from None
        usage = payload.get("usage") or {}
        if not isinstance(text, str):
            text = ""
        return {
            # PostgreSQL stores no U+0000; a reply is kept as evidence, so
            # the character is shown as the replacement character instead.
            "text": text.replace("\x00", "\ufffd"),
            "prompt_tokens": int(usage.get("prompt_tokens") or 0),
            "completion_tokens": int(usage.get("completion_tokens") or 0),
        }


class JudgePool:
    """The bounded pool of judge calls of a worker process (one per app),
    shared by every chunk, run and judge model it serves, so
    ``JUDGE_CONCURRENCY`` holds however many runs are evaluating. Threads
    start with the first call and live until ``shutdown``: never a set per
    model or per run."""

    def __init__(self, size: int):
        self.size = size
        self._lock = threading.Lock()
        self._executor: ThreadPoolExecutor | None = None

    def submit(self, function, *args):
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(
                    self.size, thread_name_prefix="judge"
                )
            executor = self._executor
        return executor.submit(function, *args)

    def shutdown(self) -> None:
        with self._lock:
            if self._executor is not None:
                self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None


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
    ):  # fmt: skip
        self.config = config
        self.pool = pool or JudgePool(config.concurrency)
        self.cache = cache
        self.client = client or JudgeClient(config)
        self.usage = usage or Usage()  # a panel's judges count together
        self._stop = StopCheck(should_stop)
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
        self.usage.add(cache_hits=len(items) - len(todo))
        if len(todo) < len(items):
            self._on_items(len(items) - len(todo))
        futures = {
            index: self.pool.submit(self._judge_one, items[index]) for index in todo
        }
        fresh = []
        results = {}
        try:
            # Collected in submission order, which is the pool's order, so
            # each outcome is reported about when it arrives.
            for index, future in futures.items():
                results[index] = future.result()
                self._on_items(1)
        except Cancelled:
            for future in futures.values():
                future.cancel()
            raise
        for index, (outcome, entry) in results.items():
            outcomes[index] = outcome
            if entry:
                fresh.append({**entry, "key": keys[index]})
        if self.cache and fresh:
            self.cache.put(fresh)
        return [outcomes[index] for index in range(len(items))]

    def _judge_one(self, item: JudgeItem) -> tuple[JudgeOutcome, dict | None]:
        """Ask, and once more at a new sample if the reply cannot be parsed."""
        self._stop.check()
        raws: list[str] = []
        for sample in (item.sample, item.sample + RETRY_SAMPLE_OFFSET):
            try:
                reply = self.client.complete(
                    list(item.messages), sample, self._stop.check
                )
            except JudgeHTTPError as exc:
                self.usage.add(judge_calls=1)
                return JudgeOutcome(
                    RowStatus.ERROR, raw="\n---\n".join(raws) or None, note=exc.note
                ), None
            self.usage.add(
                judge_calls=1,
                prompt_tokens=reply["prompt_tokens"],
                completion_tokens=reply["completion_tokens"],
            )
            raws.append(reply["text"])
            verdict, why = item.read(reply["text"])
            if verdict is not None:
                entry = _cache_entry(item, reply, verdict.to_dict())
                # Cached under the first sample's key: the verdict answers that request.
                return JudgeOutcome(
                    RowStatus.OK, verdict.to_dict(), reply["text"]
                ), entry
        raw = "\n---\n".join(raws)
        outcome = JudgeOutcome(RowStatus.UNSCORED, raw=raw, note=why)
        return outcome, None


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
