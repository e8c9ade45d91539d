"""The judge client of a batch-mode run (issue 49): it stands where
:class:`judge_client.http.JudgeClient` stands, so a batch answer goes
through the same re-asks, verdict grammar and rows as an online reply.

A request is named by its ``custom_id``, a hash of its whole body: the
line sent in the batch file and the request the chunk would send online
are the same request, so each finds the other's answer.

* Gathering (``recorder`` given): a first ask with no answer yet is
  recorded for the next batch file and is not sent; its item ends
  :class:`Pending` (the gathering pass stores no row). A request that
  needs an earlier answer is asked in the pass after that answer came.
* Answering (no ``recorder``): a request the provider answered with a
  completion is read from its answer; any other (a re-ask, a line that
  failed or expired, a batch that failed) goes online, paced and counted
  as every online call.

>>> custom_id({"model": "m", "messages": []}) == custom_id(
...     {"messages": [], "model": "m"})
True
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable, Mapping
from typing import Any

from judge_client.http import (
    BeforeAttempt,
    JudgeClient,
    Messages,
    Refused,
    read_completion,
)
from metrics.notes import note

# a batch answer's usage, counted when the batch is read, not per item
UNBILLED = ("prompt_tokens", "completion_tokens", "cached_tokens", "reasoning_tokens")
REASK_SAMPLE = 1000  # evaluator.RETRY_SAMPLE_OFFSET: a re-ask's sample index


class Pending(Refused):
    """A request gathered for a batch: no answer yet, nothing sent."""


def custom_id(body: Mapping[str, Any]) -> str:
    """The request's name in a batch file: sha256 of its canonical JSON,
    without ``response_format``. Whether structured output is asked for
    changes as the judge's replies honour or ignore it, and the answer to
    either request is read by the same grammar (the text one reads JSON too):
    one asked with it in the batch answers the chunk's without it."""
    named = {key: value for key, value in body.items() if key != "response_format"}
    canonical = json.dumps(named, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


class Recorder:
    """The requests one gathering pass found unanswered, each once."""

    def __init__(self) -> None:
        self.bodies: dict[str, dict[str, Any]] = {}

    def add(self, body: dict[str, Any]) -> None:
        self.bodies.setdefault(custom_id(body), body)


class BatchClient:
    """``complete`` as :class:`JudgeClient` has it, answered from the run's
    batch answers first. ``answer_of(custom_id)`` returns the stored answer
    (``status_code``, ``body``) or None; it may ask the database, so it
    runs on a thread, never on the judge loop."""

    def __init__(
        self,
        online: JudgeClient,
        answer_of: Callable[[str], Any],
        recorder: Recorder | None = None,
    ):
        self.online = online
        self.config = online.config
        self._answer_of = answer_of
        self.recorder = recorder

    async def complete(
        self,
        messages: Messages,
        sample: int,
        before_attempt: BeforeAttempt | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        body = self.online.request_body(messages, sample, **extra)
        answer = await asyncio.to_thread(self._answer_of, custom_id(body))
        if answer is not None and answer.status_code == 200:
            reply = read_completion(json.dumps(answer.body).encode())
            # its tokens were counted once when the batch was read
            # (pipeline/batch/steps.py): items asking the same request share a line
            return {**reply, **dict.fromkeys(UNBILLED, 0), "via": "batch"}
        if self.recorder is not None:
            if answer is None and not self._reask(sample, extra):
                self.recorder.add(body)
            raise Pending(note("batch_pending"))
        return await self.online.complete(messages, sample, before_attempt, **extra)

    def _reask(self, sample: int, extra: Mapping[str, Any]) -> bool:
        """A re-ask (for the format, or with more tokens after a cut reply)
        goes online, never in another batch: a batch may take up to its
        24-hour window, and re-asks are a few of a run's requests."""
        return sample >= REASK_SAMPLE or extra.get("max_tokens", 0) > (
            self.config.max_tokens
        )
