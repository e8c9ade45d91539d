"""A batch-mode run's judge requests at the provider (issue 49): where the
run stands, each batch file sent through the OpenAI-compatible Files and
Batches endpoints (its ids stored the moment the provider gives them, so a
restart picks the batch up), and each answer read back by ``custom_id``.
Deleting the run deletes them (``store/deletion.py``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.orm import Mapped, mapped_column

from store.models import AUTO_ID, Base, JSONType


class BatchRun(Base):
    """One per batch-mode run: ``stage`` is ``collect`` (its requests are
    to be gathered and sent), ``waiting`` (batches at the provider) or
    ``answered`` (its chunks run, reading the answers); ``round`` counts the
    batches sent one after another (requests that needed an earlier answer
    go in the next). ``sent_at``: when a worker was handed the next step
    (claimed once, again only when stale); ``held_until``: the step's hold
    on the run; ``poll_at``: when the batches
    are to be asked about next, ``poll_s`` the wait that grows between."""

    __tablename__ = "batch_runs"

    run_id: Mapped[str] = mapped_column(
        ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True
    )
    stage: Mapped[str] = mapped_column(String(16))
    round: Mapped[int] = mapped_column(Integer, default=0)
    sent_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # the step under way holds the run until then (renewed as it works): a
    # second task of the run (a redelivery) leaves it alone
    held_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    poll_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    poll_s: Mapped[float | None] = mapped_column(Float)
    note: Mapped[str | None] = mapped_column(Text)  # why the run went online
    # steps that failed in a row (reset by one that ends well), and the last
    # one's error (English): at ``pipeline.batch.steps.MAX_FAILURES`` the batch
    # part fails with it (``note`` ``step_failed``)
    failures: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    error: Mapped[str | None] = mapped_column(Text)


class JudgeBatch(Base):
    """One batch file at the provider: a part of one round for one judge
    (a provider's batch holds one model's requests)."""

    __tablename__ = "judge_batches"
    __table_args__ = (
        UniqueConstraint("run_id", "round", "model", "part", name="uq_judge_batch"),
    )

    id: Mapped[int] = mapped_column(AUTO_ID, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    round: Mapped[int] = mapped_column(Integer)
    model: Mapped[str] = mapped_column(String(200))
    part: Mapped[int] = mapped_column(Integer)
    input_file_id: Mapped[str | None] = mapped_column(String(200))
    batch_id: Mapped[str | None] = mapped_column(String(200))
    status: Mapped[str] = mapped_column(String(32))  # the provider's word
    total: Mapped[int] = mapped_column(Integer, default=0)
    completed: Mapped[int] = mapped_column(Integer, default=0)
    failed: Mapped[int] = mapped_column(Integer, default=0)
    output_file_id: Mapped[str | None] = mapped_column(String(200))
    error_file_id: Mapped[str | None] = mapped_column(String(200))
    read_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # lines of its output and error files that were no answer, by kind
    # (``judge_client.batch_api.answers_in``, and ``foreign``: a request
    # the run did not send), and its requests neither file answered
    skipped: Mapped[dict[str, int] | None] = mapped_column(JSONType)
    missing: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # its requests are listed (``BatchRequest``); a batch an older release
    # sent is not: every line of its files is read as before
    listed: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())


class BatchRequest(Base):
    """A request the run sent in a batch file (``batch``: the
    ``JudgeBatch`` row's id), listed before the file is uploaded: an output
    line naming another ``custom_id`` is not stored, and a request no line
    answered is known to be missing (it goes online)."""

    __tablename__ = "batch_requests"
    __table_args__ = (Index("ix_batch_requests_batch", "batch"),)

    run_id: Mapped[str] = mapped_column(
        ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True
    )
    custom_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    batch: Mapped[int] = mapped_column(AUTO_ID)


class BatchAnswer(Base):
    """What the provider answered one request of a batch: a completion
    body (``status_code`` 200), an error body, or no response at all
    (``error``: e.g. ``batch_expired``). Requests without a 200 go online."""

    __tablename__ = "batch_answers"

    run_id: Mapped[str] = mapped_column(
        ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True
    )
    custom_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    status_code: Mapped[int | None] = mapped_column(Integer)
    body: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    error: Mapped[str | None] = mapped_column(String(64))
