"""``GET /metrics`` in the Prometheus text format (prometheus_client).

Two sources. Figures every process shares are read from the database at
scrape time, so they are right whichever web or worker process did the work
and survive restarts: runs by status, judge calls, cache hits and tokens,
and chunks waiting or in work (the queue depth as the dispatcher sees it);
in team mode also the broker's queue length. Figures of one process (judge
latency, judge failures, server errors: core/telemetry.py) come from the
process registry, or from every process of the host when
``PROMETHEUS_MULTIPROC_DIR`` is set (gunicorn.conf.py).

Like /healthz it is not rate-limited; it names no run, token or URL.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from flask import Blueprint, Response, current_app
from flask.typing import ResponseReturnValue
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from core.status import ChunkState, RunStatus
from web import extensions

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric
    from sqlalchemy import ColumnElement, Select

    from store import StorageLike

bp = Blueprint("prometheus", __name__)
PREFIX = "personasteer"
WAITING = (ChunkState.PENDING, ChunkState.SENT, ChunkState.RUNNING)
RUN_TOTALS = {  # Run column -> (metric, help)
    "judge_calls": ("judge_calls", "Judge calls made by stored runs."),
    "cache_hits": ("judge_cache_hits", "Judge verdicts served from the cache."),
    "prompt_tokens": ("judge_prompt_tokens", "Prompt tokens the judge reported."),
    "completion_tokens": ("judge_completion_tokens", "Completion tokens reported."),
}


class StoredFigures:
    """A collector reading the shared figures from the database."""

    def __init__(self, storage: StorageLike, redis_url: str | None) -> None:
        self.storage, self.redis_url = storage, redis_url

    def collect(self) -> Iterator[Metric]:
        with self.storage.engine.connect() as conn:
            by_status = dict(conn.execute(_runs_by_status()).all())
            totals = conn.execute(_run_totals()).one()
            chunks = dict(conn.execute(_chunks_waiting()).all())
        runs = GaugeMetricFamily(
            f"{PREFIX}_runs", "Stored runs by status.", labels=["status"]
        )
        for status in RunStatus:
            runs.add_metric([status.value], by_status.get(status.value, 0))
        yield runs
        for (name, help_text), value in zip(RUN_TOTALS.values(), totals, strict=True):
            yield CounterMetricFamily(f"{PREFIX}_{name}", help_text, value=value or 0)
        waiting = GaugeMetricFamily(
            f"{PREFIX}_chunks", "Chunks of work not yet done.", labels=["state"]
        )
        for state in WAITING:
            waiting.add_metric([state.value], chunks.get(state.value, 0))
        yield waiting
        if self.redis_url:
            yield from _broker_queue(self.redis_url)


# The queries load SQLAlchemy and the models on the first scrape, not with
# the app (the CLI's validate needs neither).
def _runs_by_status() -> Select[str, int]:
    from sqlalchemy import func, select

    from store.models import Run

    return select(Run.status, func.count()).group_by(Run.status)


def _run_totals() -> Select[Any]:
    """The stored runs' sums plus what deleted runs had counted."""
    from sqlalchemy import func, select

    from store.models import DeletedTotals, Run

    kept = DeletedTotals.__table__

    def total(column: str) -> ColumnElement[Any]:
        stored = select(func.coalesce(func.sum(getattr(Run, column)), 0))
        gone = select(func.coalesce(func.sum(kept.c[column]), 0))
        return stored.scalar_subquery() + gone.scalar_subquery()

    return select(*(total(column) for column in RUN_TOTALS))


def _chunks_waiting() -> Select[str, int]:
    from sqlalchemy import func, select

    from store.models import RunChunk

    query = select(RunChunk.state, func.count()).where(RunChunk.state.in_(WAITING))
    return query.group_by(RunChunk.state)


def _broker_queue(url: str) -> Iterator[Metric]:
    """Tasks waiting in the Redis queue; nothing when Redis does not answer
    (``/readyz`` reports that)."""
    import redis

    try:
        with redis.Redis.from_url(url, socket_timeout=2) as client:
            length = client.llen("celery")  # Celery's default queue
    except redis.RedisError:
        return
    yield GaugeMetricFamily(
        f"{PREFIX}_broker_queue_length", "Tasks waiting in the broker.", value=length
    )


def _process_registry(multiprocess_dir: str | None) -> CollectorRegistry:
    if not multiprocess_dir:
        return REGISTRY
    from prometheus_client import multiprocess

    registry = CollectorRegistry()
    # prometheus_client leaves this constructor unannotated
    multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
    return registry


@bp.get("/metrics")
def metrics() -> ResponseReturnValue:
    config = current_app.config
    shared = CollectorRegistry()
    shared.register(StoredFigures(extensions.storage(), config["REDIS_URL"]))
    local = _process_registry(config["PROMETHEUS_MULTIPROC_DIR"])
    body = generate_latest(local) + generate_latest(shared)
    response = Response(body)
    response.headers["Content-Type"] = CONTENT_TYPE_LATEST  # with its version
    return response
