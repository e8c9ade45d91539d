"""A batch-mode run's judge requests at the provider (issue 49): where the
run stands, each batch file sent through the OpenAI-compatible Files and
Batches endpoints (its ids stored the moment the provider gives them, so a
restart picks the batch up), and each answer read back by ``custom_id``.
Deleting the run deletes them (``store/deletion.py``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    DateTime,
    Float,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
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
