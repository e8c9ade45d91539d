"""Team mode's broker: kombu's Redis transport, with the fault that killed
every worker when Redis went away (issue 57) turned into the connection
error kombu and Celery already recover from.

What happened (celery 5.7.0, kombu 5.7.0): when the connection to Redis
breaks, the worker's consumer calls ``connection.collect()`` and then
``connection.close()``. ``collect`` starts closing the channel, fails on the
dead socket (a connection error, ignored), and detaches the transport from
the connection (``transport.client = None``). ``close`` closes the same
channel again; to put back the messages it had delivered and not yet
acknowledged, the channel builds a new connection pool from
``transport.client.hostname``: ``AttributeError`` on ``None``. That error is
neither a connection nor a channel error, so nothing catches it, and the
worker stops with "Unrecoverable error". (celery 5.6 called only
``collect``; 5.7 added the ``close``.)

Here a channel whose transport is detached raises Redis's
``ConnectionError`` instead: the close gives up restoring, as it does when
Redis cannot be reached, and the consumer reconnects with its usual
back-off. Nothing is lost by not restoring: the chunks those messages carry
are still being worked on by this worker's threads, their rows go to the
database, and the watchdog sends again any chunk whose task went missing
(``pipeline/worker/execution.py: sweep``). Imported by kombu by name when the
worker or the web process connects (``TRANSPORT``), never before.
"""

from __future__ import annotations

from typing import Any

from kombu.transport import redis as kombu_redis
from redis.exceptions import ConnectionError as RedisConnectionError

TRANSPORT = "pipeline.worker.redis_broker:Transport"


class Channel(kombu_redis.Channel):
    def _connparams(self, asynchronous: bool = False) -> dict[str, Any]:
        if self.connection.client is None:
            raise RedisConnectionError("the connection to the broker was closed")
        return super()._connparams(asynchronous=asynchronous)  # type: ignore[no-untyped-call, no-any-return]  # kombu's own


class Transport(kombu_redis.Transport):
    Channel = Channel
