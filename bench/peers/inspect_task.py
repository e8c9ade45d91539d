"""Runs inside ``.venv-peers`` (``inspect eval bench/peers/inspect_task.py``):
one Inspect task of 1,000 samples, each the messages of one of our judge
requests (``PACING_MESSAGES``, a JSON-lines file), generated once and not
scored, so every sample is exactly one model call as in our drill."""

from __future__ import annotations

import json
import os

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser
from inspect_ai.solver import generate

KINDS = {"system": ChatMessageSystem, "user": ChatMessageUser}


def _sample(number: int, messages: list) -> Sample:
    chat = [KINDS[m["role"]](content=m["content"]) for m in messages]
    return Sample(id=number, input=chat)


@task
def pacing() -> Task:
    with open(os.environ["PACING_MESSAGES"]) as lines:
        samples = [_sample(n, json.loads(line)) for n, line in enumerate(lines)]
    return Task(dataset=samples, solver=generate())
