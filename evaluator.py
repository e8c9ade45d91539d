"""LLM judge client for any OpenAI-compatible ``/chat/completions`` API.

* Calls are coroutines on the process's one judge loop (aiohttp,
  `judge_client/loop.py`, `judge_client/transport.py`): one pool of
  keep-alive connections per judge host, explicit (connect, read) timeouts
  and a deadline per call.
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

import asyncio
import time

from core import usage as core_usage
from core.status import Cancelled, LeaseLost, RowStatus
from judge_client.config import (
    JudgeConfig,
    StructuredOutput,
    cache_key,
    prompt_chars,
    response_format,
)
from judge_client.http import (
    JudgeClient,
    JudgeHTTPError,
    Refused,
    ReplyTooLarge,
    names_structured_output,
    parse_retry_after,
)
from judge_client.keeper import VerdictKeeper
from judge_client.loop import run as run_on_loop
from judge_client.loop import warm_up as warm_up_judge
from judge_client.outcome import JudgeOutcome, StopCheck, Usage, cache_entry, settled
from judge_client.pool import JudgePool
from metrics.judging import JudgeItem, reask_messages, strict_json
from metrics.notes import note

__all__ = [
    "Cancelled",
    "Judge",
    "JudgeConfig",
    "JudgeHTTPError",
    "JudgeOutcome",
    "JudgePanel",
    "JudgePool",
    "StructuredOutput",
    "Usage",
    "cache_key",
    "parse_retry_after",
    "run_on_loop",
    "warm_up_judge",
]

RETRY_SAMPLE_OFFSET = 1000  # the one re-ask of an unparseable reply
CANCEL_POLL_S = 0.5  # how often a chunk waiting on calls asks if it was cancelled
CANCEL_GRACE_S = 10.0  # how long calls under way at a cancel may take to end
CLAIM_POLL_S = 0.5  # how often it looks for a verdict another worker is getting


class Halted(Exception):
    """A call not sent: an earlier call of its judge failed in a way that
    fails the chunk (its verdict could not be stored), so the chunk's other
    calls do not go out (its retry asks them)."""


class Judge:
    """What metrics receive: ``judge.evaluate(items) -> outcomes`` in order.
    Each item with its outcome (a cache hit, a verdict, a failure) is
    reported to ``on_items`` as it comes in: a chunk's progress moves per item.

    ``cache`` is duck-typed (``get(keys) -> {key: entry}``, ``put(entries)``,
    and, where requests under way are claimed, ``claim``/``claimed``/
    ``release``: ``store/judge_cache.py``) so this module never imports
    storage.
    """

    def __init__(
        self,
        config: JudgeConfig,
        cache=None,
        client=None,
        should_stop=None,
        pool=None,
        on_items=None,
        usage: Usage | None = None,
        structured: StructuredOutput | None = None,
        allowance=None,
        fair_key: str = "",
        exchanges=None,
    ):
        self.config = config
        self.structured = structured or StructuredOutput()
        self.pool = pool or JudgePool(config.concurrency)
        self.cache = cache
        # a verdict the storage refuses waits for it as long as a call may
        # take, holding its slot (judge_client/keeper.py)
        self._keeper = VerdictKeeper(cache.put, config.deadline_s) if cache else None
        # what failed the chunk's calls: none goes out after it (``_halt``)
        self._failure: BaseException | None = None
        self.client = client or JudgeClient(config)
        self.usage = usage or Usage()  # a panel's judges count together
        self._stop = StopCheck(should_stop)
        # allowance() -> bool: take one call of the run's cap before each
        # request goes out (transport retries and re-asks too); injected.
        # It may ask the database: called off the loop unless its
        # ``take_held()`` finds a call in the block it holds.
        self._allowance = allowance
        self.fair_key = fair_key  # the run: the pool takes runs' calls in turn
        self.exchanges = exchanges  # what was asked and answered, kept (or None)
        # on_items(n): n more items have their outcome. Injected (progress),
        # called on the thread that called ``evaluate``, never on the pool's.
        self._on_items = on_items or (lambda count: None)

    def evaluate(self, items: list[JudgeItem]) -> list[JudgeOutcome]:
        """Each item's outcome: from the cache, from a request this judge
        makes, or, when another worker has the same request under way (its
        claim, ``store/call_claims.py``), from the cache once its verdict is
        there: a request is paid once while its verdict can still come."""
        outcomes: dict[int, JudgeOutcome] = {}  # item index -> outcome
        keys: list[str] = []  # a hash of each whole request: only for a cache
        if self.cache:
            keys = [cache_key(self.config, item, item.sample) for item in items]
        todo = self._from_cache(keys, outcomes, list(range(len(items))))
        claim = getattr(self.cache, "claim", None) if todo else None
        mine = set(claim([keys[i] for i in todo])) if claim else None
        try:
            ours = [i for i in todo if mine is None or keys[i] in mine]
            # a verdict put (then its claim ended) between the first look and
            # the claim is in the cache now: looked up again, never paid twice
            ours = self._from_cache(keys, outcomes, ours) if mine else ours
            self._ask_all(items, keys, ours, outcomes)
            waiting = [i for i in todo if i not in outcomes]
            while waiting:  # under way elsewhere: its verdict is awaited
                waiting = self._await_others(items, keys, waiting, outcomes)
        finally:
            if claim:
                self.cache.release([keys[i] for i in todo])  # its own claims only
        return [outcomes[index] for index in range(len(items))]

    def _from_cache(self, keys: list[str], outcomes: dict, indices: list[int]) -> list:
        """Fill ``outcomes`` with the cached verdicts of ``indices``; the rest."""
        if not self.cache or not indices:
            return indices
        hits = self.cache.get([keys[i] for i in indices])
        for index in indices:
            entry = hits.get(keys[index])
            if entry is not None:
                outcomes[index] = JudgeOutcome(
                    RowStatus.OK, entry.parsed, entry.reply, cached=True
                )
        left = [index for index in indices if index not in outcomes]
        if len(left) < len(indices):
            self.usage.add(self.config.model, cached=len(indices) - len(left))
            self._on_items(len(indices) - len(left))
        return left

    def _await_others(self, items, keys, waiting: list[int], outcomes) -> list[int]:
        """One round of waiting for requests under way elsewhere: verdicts
        that reached the cache are taken; a claim gone without one (its
        request failed, or its holder died past the deadline) is claimed
        here and asked. Returns what still waits."""
        self._stop.check()
        time.sleep(CLAIM_POLL_S)
        left = self._from_cache(keys, outcomes, waiting)
        held = self.cache.claimed([keys[i] for i in left]) if left else set()
        free = [i for i in left if keys[i] not in held]
        if free:
            mine = self.cache.claim([keys[i] for i in free])
            ours = [i for i in free if keys[i] in mine]
            ours = self._from_cache(keys, outcomes, ours)  # (as in evaluate)
            self._ask_all(items, keys, ours, outcomes)
        return [i for i in left if i not in outcomes]

    def _ask_all(self, items, keys, indices: list[int], outcomes: dict) -> None:
        """Ask the judge for ``indices``; their outcomes into ``outcomes``."""
        if not indices:
            return
        lane = f"{self.config.base_url} {self.config.model}"  # its own slots
        futures = {
            index: self.pool.submit(
                self._judged,
                items[index],
                keys[index] if keys else "",
                key=self.fair_key,
                lane=lane,
            )
            for index in indices
        }
        results: dict[int, tuple] = {}
        try:
            # Collected in submission order, which is the pool's order, so
            # each outcome is reported about when it arrives.
            for index, future in futures.items():
                results[index] = self._result(future)
                self._on_items(1)
        except LeaseLost:
            # Another worker holds the chunk now: no further call goes out
            # (each checks first); the calls under way are paid for and
            # keep their verdicts, where the next holder finds them.
            settled(futures)
            raise
        except Cancelled:
            # No further call goes out either; the calls under way get
            # CANCEL_GRACE_S to end, so the tokens the provider bills for
            # them are counted (cut at once, a cancelled run's cost left
            # them out); one still under way then (a reply dripping in) is
            # cut, not waited on to its deadline.
            settled(futures, within=CANCEL_GRACE_S)
            raise
        except Exception as exc:
            # The chunk fails (a verdict the storage would not take, the
            # database gone): no further call goes out (those waiting for a
            # slot are withdrawn), and the calls under way end (their
            # verdicts kept if the storage takes them) before its claims
            # end, so its retry pays none of them twice.
            self._halt(exc)
            self.pool.withdraw(futures.values())
            settled(futures)
            raise self._failure or exc from None
        for index, (outcome, _entry) in results.items():
            outcomes[index] = outcome

    async def _judged(self, item: JudgeItem, key: str) -> tuple:
        """One item's outcome, its verdict put into the cache the moment it is
        read (before the request's claim ends): a worker killed after a
        reply came pays nothing for it again, whatever its chunk's other
        calls were doing (kept at the end of a batch, a kill -9 lost 28
        answered verdicts of 240; bench/paid_once_drill.py)."""
        outcome, entry = await self._judge_one(item)
        if entry and key and self._keeper is not None:
            try:
                await self._keeper.keep({**entry, "key": key})
            except Exception as exc:
                self._halt(exc)  # before its slot is given back to a next call
                raise
        return outcome, entry

    def _halt(self, failure: BaseException) -> None:
        """No call of this judge goes out after ``failure`` (the first one
        is what its ``evaluate`` raises)."""
        if self._failure is None:
            self._failure = failure

    def _result(self, future):
        """A call's outcome; while waiting, whether the run was cancelled
        (raises ``Cancelled``: the caller ends the calls in flight)."""
        from concurrent.futures import TimeoutError as Waiting

        while True:
            try:
                return future.result(timeout=CANCEL_POLL_S)
            except Waiting:
                self._stop.check()

    async def _judge_one(self, item: JudgeItem) -> tuple[JudgeOutcome, dict | None]:
        """Ask; when the reply has no readable verdict, ask once more: a reply
        cut off by ``max_tokens`` with more tokens, any other quoting the
        format the prompt asked for. Then ``unscored`` with the reason."""
        await self._stop.acheck()
        raws: list[str] = []
        messages, sample = list(item.messages), item.sample
        max_tokens, why = self.config.max_tokens, None
        for attempt in range(2):
            try:
                reply = await self.ask(
                    item, messages, sample, max_tokens, reask=attempt > 0
                )
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
                entry = cache_entry(item, reply, verdict.to_dict())
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

    async def _before_attempt(self) -> None:
        """Before each request: no more for a cancelled run, nor beyond its
        cap; then it is counted: ``calls`` is every request sent, retries of
        a 500 or a timeout included (what the provider bills and the budget
        counts)."""
        if self._failure is not None:
            raise Halted(f"not sent: {type(self._failure).__name__}")
        await self._stop.acheck()
        allowance = self._allowance
        held = allowance is None or getattr(allowance, "take_held", bool)()
        if not held and not await asyncio.to_thread(allowance):
            raise Refused(note(getattr(allowance, "refusal", "budget_exhausted")))
        self.usage.add(self.config.model, calls=1)

    async def ask(
        self, item, messages, sample, max_tokens, reask: bool = False
    ) -> dict:
        """One request (retried on transport errors), asking for structured
        output while the server has not refused or ignored it. A coroutine
        for the judge loop (``run_on_loop`` runs it from elsewhere)."""
        model = self.config.model
        schema = item.mode.schema if self.structured.wanted() else None
        extra = {"max_tokens": max_tokens}
        if schema is not None:
            extra["response_format"] = response_format(item.mode.name, schema)
        if prompt_chars(messages) > self.config.max_prompt_chars:
            raise Refused(note("prompt_too_large", limit=self.config.max_prompt_chars))
        try:
            reply = await self.client.complete(
                messages, sample, self._before_attempt, **extra
            )
        except ReplyTooLarge:
            self.usage.add(model, reasks=int(reask))
            raise
        except Refused:  # never sent
            raise
        except JudgeHTTPError as exc:
            self.usage.add(model, reasks=int(reask))
            if schema is None or not names_structured_output(exc):
                raise
            self.structured.rejected()
            self.usage.add(model, structured_rejected=1)
            return await self.ask(item, messages, sample, max_tokens, reask)
        self.usage.add(model, reasks=int(reask), **core_usage.of_reply(reply))
        if schema is not None:
            honoured = strict_json(reply["text"]) is not None
            self.structured.answered(honoured)
            self.usage.add(
                model, **{"structured" if honoured else "structured_ignored": 1}
            )
        return reply


class JudgePanel:
    """Several judge models asked the same items (``JUDGE_MODELS`` panels):
    each judge suite runs once per judge (``metrics.engine.evaluate``) and
    every row names its judge. The judges share one pool, one cache and one
    ``usage``. Here, beside :class:`Judge`, not in ``judge_client``: the
    package is below its front and never imports it."""

    def __init__(self, judges: list[Judge]):
        self.judges = judges
        self.usage = judges[0].usage

    def release(self) -> None:
        for judge in self.judges:  # one shared allowance: the first gives it back
            judge.release()
