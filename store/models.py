"""ORM models: workspaces, runs, result rows, chunk bookkeeping, the session
index, the judge cache and which runs used which cache entries. Session-level rows have no round; they are stored with
``round = 0`` because a SQL unique constraint treats NULLs as distinct (the
results format maps 0 back to null). Schema changes go through a migration
in ``store/migrations/versions`` (a test compares the two)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    BigInteger,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

# re-exported explicitly: the store's modules import the clock from here
from core.clock import utcnow as utcnow
from core.status import ChunkState, ComparisonState, RunStatus

JSONType = JSON().with_variant(JSONB(), "postgresql")
ROW_KEY = ("run_id", "session_id", "round", "method", "metric", "sample", "judge")
ROW_DICT_FIELDS = (
    "session_id",
    "round",
    "method",
    "metric",
    "sample",
    "value",
    "status",
    "note",
    "detail",
    "note_code",
    "note_params",
    "judge",
)
AUTO_ID = BigInteger().with_variant(Integer, "sqlite")


class Base(DeclarativeBase):
    # JSON columns; the registry looks a parametrized annotation up as it is
    # written (``Mapped[dict[str, Any]]`` does not find ``dict``)
    type_annotation_map: ClassVar = {
        dict: JSONType,
        list: JSONType,
        dict[str, Any]: JSONType,
        list[Any]: JSONType,
        list[str]: JSONType,
    }


class Workspace(Base):
    """A group of runs. ``token`` views it, ``manage_token`` changes it; the
    two are independent random tokens (``store/workspaces.py``)."""

    __tablename__ = "workspaces"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    token: Mapped[str] = mapped_column(String(64), unique=True)
    manage_token: Mapped[str] = mapped_column(String(64), unique=True)
    name: Mapped[str] = mapped_column(String(255), default="")
    created_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), default=utcnow
    )


class Run(Base):
    __tablename__ = "runs"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    token: Mapped[str] = mapped_column(String(64), unique=True)
    status: Mapped[str] = mapped_column(
        String(16), default=RunStatus.QUEUED.value, index=True
    )
    created_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), default=utcnow
    )
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # when the first chunk was sent: the clock of the progress estimates
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    file_name: Mapped[str] = mapped_column(String(255))
    file_sha256: Mapped[str] = mapped_column(String(64))
    upload_id: Mapped[str] = mapped_column(String(64))
    sessions: Mapped[int] = mapped_column(Integer, default=0)
    rounds: Mapped[int] = mapped_column(Integer, default=0)
    methods: Mapped[list[str]] = mapped_column(default=list)
    suites: Mapped[list[str]] = mapped_column(default=list)
    judge: Mapped[dict[str, Any] | None] = mapped_column()
    options: Mapped[dict[str, Any]] = mapped_column(default=dict)
    # the model family of each method and judge the run named, for the
    # self-preference check: {"methods": {name: family}, "judges": {model:
    # family}} (migration 0027); None when none was named
    families: Mapped[dict[str, Any] | None] = mapped_column()
    done: Mapped[int] = mapped_column(Integer, default=0)
    total: Mapped[int] = mapped_column(Integer, default=0)
    judge_calls: Mapped[int] = mapped_column(BigInteger, default=0)
    # judge requests reserved before they went out (re-asks and transport
    # retries included): what the run's call cap is checked against
    calls_reserved: Mapped[int] = mapped_column(
        BigInteger, default=0, server_default="0"
    )
    cache_hits: Mapped[int] = mapped_column(BigInteger, default=0)
    prompt_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    completion_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    aggregates: Mapped[dict[str, Any] | None] = mapped_column()
    # the aggregates of the rows stored so far (provisional, while the run is
    # evaluated) and when they were last computed (pipeline/worker/interim.py)
    interim: Mapped[dict[str, Any] | None] = mapped_column()
    interim_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # when a worker claimed the final aggregation (store/interim.py): the
    # others that ask for it leave it alone (claimed again only if stale)
    finalizing_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    error: Mapped[str | None] = mapped_column(Text)  # English, for logs and the API
    # when a unit, judge counter or row last moved (pipeline/stalls.py), and
    # a running run's stall while it does not: {"cause", "params", "since",
    # "handed_at"}
    moved_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    stall: Mapped[dict[str, Any] | None] = mapped_column()
    failure: Mapped[dict[str, Any] | None] = (
        mapped_column()
    )  # {"code", "params"}: translated
    client: Mapped[str | None] = mapped_column(String(64))  # fair share key
    retry_of: Mapped[str | None] = mapped_column(String(32), index=True)
    # bookkeeping, apart from the settings in ``options`` (migration 0019):
    # chunks the run was planned in, a retry's share of its original's call
    # cap, the key a finished run is reused by, and what a reused run copied
    chunks_planned: Mapped[int | None] = mapped_column(Integer)
    call_cap: Mapped[int | None] = mapped_column(BigInteger)
    reuse_key: Mapped[str | None] = mapped_column(String(64), index=True)
    reused_from: Mapped[str | None] = mapped_column(String(32))
    reused_rows: Mapped[int | None] = mapped_column(BigInteger)
    history_truncated: Mapped[int] = mapped_column(
        BigInteger, default=0, server_default="0"
    )
    # Owner rights (cancel, retry, rename, delete). Runs of earlier releases
    # have none: their share token keeps every right it had.
    # (Indexes, not constraints: on SQLite a new constraint rebuilds the table,
    # and dropping the old one would cascade to the rows.) Deleting a
    # workspace deletes its runs (store/deletion.py).
    manage_token: Mapped[str | None] = mapped_column(
        String(64), index=True, unique=True
    )
    workspace_id: Mapped[str | None] = mapped_column(String(32), index=True)
    name: Mapped[str | None] = mapped_column(String(255))
    tags: Mapped[list[str] | None] = mapped_column(default=list)
    comment: Mapped[str | None] = mapped_column(Text)


class ResultRow(Base):
    __tablename__ = "result_rows"
    __table_args__ = (
        UniqueConstraint(*ROW_KEY, name="uq_result_row"),
        Index("ix_result_rows_cursor", "run_id", "id"),  # /rows pages by id
    )

    id: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer, "sqlite"),
        primary_key=True,
        autoincrement=True,
    )
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    session_id: Mapped[str] = mapped_column(String(255))
    round: Mapped[int] = mapped_column(Integer)
    method: Mapped[str] = mapped_column(String(255))
    metric: Mapped[str] = mapped_column(String(128))
    sample: Mapped[int] = mapped_column(Integer, default=0)
    value: Mapped[float | None] = mapped_column(Float)
    status: Mapped[str] = mapped_column(String(16))
    note: Mapped[str | None] = mapped_column(Text)  # English (API, exports)
    detail: Mapped[dict[str, Any] | None] = mapped_column()
    note_code: Mapped[str | None] = mapped_column(String(64))  # metrics/notes.py
    note_params: Mapped[dict[str, Any] | None] = mapped_column()
    # the judge model that made the row ("" for rows no judge made, and for
    # rows of earlier releases): a judge panel scores each item once per judge
    judge: Mapped[str] = mapped_column(String(200), default="", server_default="")


class RunChunk(Base):
    """One row per planned chunk: the source of truth of a run's work. The
    dispatcher hands out pending chunks fairly; a chunk is counted done once;
    the watchdog re-queues chunks whose worker went quiet. Rows of the first
    release (finished chunks only) have no byte range and state ``done``."""

    __tablename__ = "run_chunks"
    __table_args__ = (
        UniqueConstraint("run_id", "chunk", name="uq_run_chunk"),
        Index("ix_run_chunks_state", "state", "run_id"),
    )

    id: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer, "sqlite"),
        primary_key=True,
        autoincrement=True,
    )
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    chunk: Mapped[int] = mapped_column(Integer)
    # units counted into run.done: the high-water mark of the partial count
    # while the chunk runs (store/progress.py), all of them once it finishes
    items: Mapped[int] = mapped_column(Integer, default=0)
    start: Mapped[int | None] = mapped_column(BigInteger)  # byte range in the upload
    end: Mapped[int | None] = mapped_column(BigInteger)
    units: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # the database's default is the state of the first release's chunks, all
    # finished (0003); the product always writes the state
    state: Mapped[str] = mapped_column(
        String(16), default=ChunkState.PENDING.value, server_default="done"
    )
    attempts: Mapped[int] = mapped_column(  # sends: tasks match it
        Integer, default=0, server_default="0"
    )
    # the lease (store/chunks.py): a fencing token grown at every claim and
    # release, the claims made (what gives up on a chunk), who holds it
    lease: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    claims: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    holder: Mapped[str | None] = mapped_column(String(96))
    sent_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    beat_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    error: Mapped[str | None] = mapped_column(Text)


class JudgeCallClaim(Base):
    """A judge request under way (``store/call_claims.py``): whoever holds
    its cache key's claim makes the request; another worker asking the same
    waits for the verdict in the cache instead of paying for it again, until
    the claim's deadline passes (its holder died with it)."""

    __tablename__ = "judge_call_claims"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    holder: Mapped[str] = mapped_column(String(96))
    until: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class JudgeCacheEntry(Base):
    __tablename__ = "judge_cache"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    prompt_version: Mapped[str] = mapped_column(String(64))
    reply: Mapped[str] = mapped_column(Text)
    parsed: Mapped[dict[str, Any]] = mapped_column()
    prompt_tokens: Mapped[int] = mapped_column(Integer, default=0)
    completion_tokens: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), default=utcnow
    )


class JudgeUsage(Base):
    """What one judge model used for a run (``core.usage.FIELDS``), added to
    by every chunk with ``SET x = x + n`` (store/progress.py)."""

    __tablename__ = "judge_usage"
    __table_args__ = (UniqueConstraint("run_id", "model", name="uq_judge_usage"),)

    id: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer, "sqlite"),
        primary_key=True,
        autoincrement=True,
    )
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    model: Mapped[str] = mapped_column(String(200))
    calls: Mapped[int] = mapped_column(BigInteger, default=0)
    cached: Mapped[int] = mapped_column(BigInteger, default=0)
    prompt_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    completion_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    reasoning_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    reasks: Mapped[int] = mapped_column(BigInteger, default=0)
    structured: Mapped[int] = mapped_column(BigInteger, default=0)
    structured_rejected: Mapped[int] = mapped_column(BigInteger, default=0)
    structured_ignored: Mapped[int] = mapped_column(BigInteger, default=0)
    # the provider's prompt cache, and requests through batch files (0023)
    cached_tokens: Mapped[int] = mapped_column(
        BigInteger, default=0, server_default="0"
    )
    batch_calls: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    batch_prompt_tokens: Mapped[int] = mapped_column(
        BigInteger, default=0, server_default="0"
    )
    batch_cached_tokens: Mapped[int] = mapped_column(
        BigInteger, default=0, server_default="0"
    )
    batch_completion_tokens: Mapped[int] = mapped_column(
        BigInteger, default=0, server_default="0"
    )
    # time requests waited under the endpoint's rate limits (0023)
    paced_ms: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")


class RunSession(Base):
    """Where each session of a run's upload lives, for drill-down and paging."""

    __tablename__ = "run_sessions"
    __table_args__ = (UniqueConstraint("run_id", "session_id", name="uq_run_session"),)

    id: Mapped[int] = mapped_column(AUTO_ID, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    position: Mapped[int] = mapped_column(Integer)
    session_id: Mapped[str] = mapped_column(String(255))
    start: Mapped[int] = mapped_column(BigInteger)
    end: Mapped[int] = mapped_column(BigInteger)


class RunCacheKey(Base):
    """A judge cache entry a run wrote or read: deleting a run deletes the
    entries no other run used. Entries of earlier releases have no record
    and are kept."""

    __tablename__ = "run_cache_keys"
    __table_args__ = (UniqueConstraint("run_id", "key", name="uq_run_cache_key"),)

    id: Mapped[int] = mapped_column(AUTO_ID, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    key: Mapped[str] = mapped_column(String(64), index=True)


class DeletedTotals(Base):
    """What deleted runs had counted (one row, id 1): ``/metrics`` counters
    add it to the stored runs' sums, so a counter never goes down when a
    run is deleted (Prometheus reads a drop as a restart)."""

    __tablename__ = "deleted_totals"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    judge_calls: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    cache_hits: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    prompt_tokens: Mapped[int] = mapped_column(
        BigInteger, default=0, server_default="0"
    )
    completion_tokens: Mapped[int] = mapped_column(
        BigInteger, default=0, server_default="0"
    )


class StoredComparison(Base):
    """A comparison of finished runs, computed once on a worker and read by
    the compare page, its exports and the API. ``key`` digests each run's
    id, name, status and end (a rename or a retry makes a new key);
    ``runs_digest`` digests the run ids alone, so a newer comparison of the
    same runs replaces the older one."""

    __tablename__ = "comparisons"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    runs_digest: Mapped[str] = mapped_column(String(64), index=True)
    state: Mapped[str] = mapped_column(
        String(16), default=ComparisonState.COMPUTING.value
    )
    document: Mapped[dict[str, Any] | None] = mapped_column()  # metrics/comparison.py
    failure: Mapped[dict[str, Any] | None] = (
        mapped_column()
    )  # {"code", "params", "http"}
    requested_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), default=utcnow
    )
    # handed to a worker (by ``pipeline.dispatch``, as chunks are); sent again
    # when still computing COMPARE_STALE_S later (its worker died)
    sent_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class ComparisonRun(Base):
    """Which runs a stored comparison reads: deleting a run deletes them."""

    __tablename__ = "comparison_runs"

    id: Mapped[int] = mapped_column(AUTO_ID, primary_key=True, autoincrement=True)
    comparison_key: Mapped[str] = mapped_column(
        ForeignKey("comparisons.key", ondelete="CASCADE"), index=True
    )
    run_id: Mapped[str] = mapped_column(String(32), index=True)
    position: Mapped[int] = mapped_column(Integer)  # the first is the baseline


class WorkspaceCalls(Base):
    """Judge calls a workspace's runs reserved on one day (UTC): what
    ``WORKSPACE_DAILY_JUDGE_CALLS`` is checked against (``store/budget.py``)."""

    __tablename__ = "workspace_calls"
    __table_args__ = (
        UniqueConstraint("workspace_id", "day", name="uq_workspace_calls"),
    )

    id: Mapped[int] = mapped_column(AUTO_ID, primary_key=True, autoincrement=True)
    workspace_id: Mapped[str] = mapped_column(String(32))
    day: Mapped[str] = mapped_column(String(10))  # YYYY-MM-DD
    reserved: Mapped[int] = mapped_column(BigInteger, default=0)
