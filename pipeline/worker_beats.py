"""Which Celery workers are alive, in team mode (issue 57: ``/readyz``
answered 200 with every worker dead).

Each worker's consumer writes a beat into Redis every ``BEAT_S`` while it is
connected and consuming (``pipeline/worker/queue.py``: its consumer step): a key
of its own that Redis expires ``ALIVE_S`` later, and its name in a set that
lists the workers. A worker that stops cleanly removes both at once; a
killed one, or one that lost Redis, is gone when its key expires. ``/readyz``
counts the keys still there: two commands, no message to the workers and
no waiting for their answers (Celery's ``ping`` would wait out its whole
timeout to know that nobody answers). Redis expires the keys by its own
clock, so the machines' clocks need not agree.

Nothing here imports Celery or kombu: the web's probe reads it too.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import redis

log = logging.getLogger(__name__)

KEY = "personasteer:worker:"  # + the worker's name: one key per worker
INDEX = "personasteer:workers"  # the names of the workers that beat
BEAT_S = 5.0
# A worker not heard from for this long is taken for gone: four beats, so
# an event loop held up for a few seconds on a busy machine is not.
ALIVE_S = 20


def beat(client: redis.Redis, name: str) -> None:
    """Say ``name`` is alive for the next ``ALIVE_S``, and drop from the
    list the workers whose key expired."""
    pipe = client.pipeline(transaction=False)
    pipe.set(KEY + name, 1, ex=ALIVE_S)
    pipe.sadd(INDEX, name)
    pipe.smembers(INDEX)
    names = [_text(n) for n in pipe.execute()[-1]]
    for other in names:
        pipe.exists(KEY + other)
    gone = [n for n, there in zip(names, pipe.execute(), strict=True) if not there]
    if gone:
        client.srem(INDEX, *gone)


def forget(client: redis.Redis, name: str) -> None:
    """``name`` stops: no longer alive, at once."""
    pipe = client.pipeline(transaction=False)
    pipe.delete(KEY + name)
    pipe.srem(INDEX, name)
    pipe.execute()


def alive(client: redis.Redis) -> int:
    """How many workers beat within the last ``ALIVE_S``."""
    names = [_text(n) for n in client.smembers(INDEX)]
    return int(client.exists(*(KEY + n for n in names))) if names else 0


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
