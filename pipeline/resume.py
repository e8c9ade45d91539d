"""Team mode's resume of unfinished runs, once per broker lifetime.

Tasks survive in Redis as long as Redis keeps its data, so only a broker
that lost it calls for a resume; :class:`BrokerEpoch` detects that once per
broker lifetime, from a worker starting or from the next run being
submitted. (The embedded worker resumes whenever it starts:
``pipeline/worker_process.begin``.)
"""

from __future__ import annotations

from datetime import UTC, datetime

EPOCH_KEY = "personasteer:broker-epoch"


class BrokerEpoch:
    """Team mode: resume once per broker lifetime.

    Redis keeps queued tasks (and redelivers those of a dead worker), so a
    worker or web restart needs no resume; only a broker that lost its data
    does. The first process to publish after that, or the first worker to
    start, finds the ``personasteer:broker-epoch`` key missing, sets it
    (``SET NX``: exactly one process wins) and re-sends the runs recorded
    before that moment.
    """

    def __init__(self, service, redis_url: str):
        self.service = service
        self.redis_url = redis_url

    def __call__(self) -> int | None:
        import redis

        now = datetime.now(UTC)
        with redis.Redis.from_url(self.redis_url, socket_connect_timeout=2) as client:
            if not client.set(EPOCH_KEY, now.isoformat(), nx=True):
                return None
        return self.service.resume_unfinished(created_before=now, live_leases=True)
