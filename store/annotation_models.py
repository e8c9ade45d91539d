"""Annotation queues: a sample of a run's items that people label in the
browser, blind (``pipeline/service/annotations.py``), and their labels. Deleting the
run deletes both (``store/deletion.py``)."""

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
    false,
)
from sqlalchemy.orm import Mapped, mapped_column

from store.models import AUTO_ID, Base, JSONType, utcnow


class AnnotationQueue(Base):
    """One queue per run at a time: ``items`` are ``[session_id, round,
    method]`` in the order they are served (shuffled with ``seed``); the
    annotator ``token`` opens the labelling page and nothing else."""

    __tablename__ = "annotation_queues"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    run_id: Mapped[str] = mapped_column(
        ForeignKey("runs.id", ondelete="CASCADE"), index=True
    )
    token: Mapped[str] = mapped_column(String(64), unique=True, index=True)
    created_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), default=utcnow
    )
    seed: Mapped[int] = mapped_column(Integer)
    per_item: Mapped[int] = mapped_column(Integer)  # annotators wanted per item
    dimensions: Mapped[bool] = mapped_column(default=False)  # the five 0-20 too
    items: Mapped[list[Any]] = mapped_column(JSONType)
    closed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # the agreement figures (bootstrap intervals take seconds) and the state
    # of the labels they were computed from: recomputed only when it changes
    agreement: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    agreement_key: Mapped[str | None] = mapped_column(String(64))
    # computed on a worker (pipeline/agreement_task.py): labels changed since,
    # and when a dispatcher handed it out (a worker that died is replaced)
    agreement_wanted: Mapped[bool] = mapped_column(
        default=False, server_default=false()
    )
    agreement_sent_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class AnnotationLabel(Base):
    """One annotator's label of one item (revised in place); ``skipped``
    labels carry no values and only keep the item from coming back."""

    __tablename__ = "annotation_labels"
    __table_args__ = (
        UniqueConstraint("queue_id", "item", "annotator", name="uq_annotation_label"),
    )

    id: Mapped[int] = mapped_column(AUTO_ID, primary_key=True, autoincrement=True)
    queue_id: Mapped[str] = mapped_column(
        ForeignKey("annotation_queues.id", ondelete="CASCADE"), index=True
    )
    item: Mapped[int] = mapped_column(Integer)  # index into the queue's items
    annotator: Mapped[str] = mapped_column(String(80))
    al: Mapped[float | None] = mapped_column(Float)
    binary: Mapped[int | None] = mapped_column(Integer)
    dimensions: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    comment: Mapped[str | None] = mapped_column(Text)
    skipped: Mapped[bool] = mapped_column(default=False)
    created_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), default=utcnow
    )
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), default=utcnow
    )


class AnnotatorLink(Base):
    """One annotator's link to a queue: the name is fixed in its token, so
    an annotator labels as themselves only and no one invents a name
    (``store/annotator_links.py``). Revoking it deletes the row."""

    __tablename__ = "annotator_links"
    __table_args__ = (
        UniqueConstraint("queue_id", "name", name="uq_annotator_link_name"),
    )

    id: Mapped[int] = mapped_column(AUTO_ID, primary_key=True, autoincrement=True)
    queue_id: Mapped[str] = mapped_column(
        ForeignKey("annotation_queues.id", ondelete="CASCADE"), index=True
    )
    token: Mapped[str] = mapped_column(String(64), unique=True, index=True)
    name: Mapped[str] = mapped_column(String(80))
    created_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), default=utcnow
    )
