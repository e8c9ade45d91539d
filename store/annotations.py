"""Queries of annotation queues and labels (``store/annotation_models.py``).

Serving: an annotator gets the first item (in the queue's shuffled order)
they have not labelled or skipped, among those with the fewest labels, so
with ``per_item`` annotators wanted the items still short of labels come
first. A label is one row per (queue, item, annotator), saved at once and
revised in place (an upsert), so a closed tab loses nothing.
"""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Update, delete, func, insert, select, update
from sqlalchemy.engine import Connection, Engine

from core.status import RowStatus
from store.annotation_models import AnnotationLabel, AnnotationQueue, AnnotatorLink
from store.database import Repository
from store.models import ResultRow, utcnow
from store.sql import claim_each

LABEL_FIELDS = ("al", "binary", "dimensions", "comment", "skipped")
# an item: (session_id, round, method)
ItemKey = tuple[str, int, str]


def new_token() -> str:
    """An annotator token: 192 random bits, unrelated to the run's tokens."""
    return secrets.token_urlsafe(24)


class AnnotationQueries(Repository):
    """Annotation queues and their labels."""

    def create_queue(
        self,
        run_id: str,
        items: list[list[Any]],
        seed: int,
        per_item: int,
        dimensions: bool,
    ) -> AnnotationQueue:
        """A new open queue for the run; an earlier one is closed (one queue
        at a time, its labels kept)."""
        queue = AnnotationQueue(
            id=uuid.uuid4().hex,
            run_id=run_id,
            token=new_token(),
            seed=seed,
            per_item=per_item,
            dimensions=dimensions,
            items=items,
            created_at=utcnow(),
        )
        with self.session.begin() as db:
            db.execute(
                update(AnnotationQueue)
                .where(
                    AnnotationQueue.run_id == run_id,
                    AnnotationQueue.closed_at.is_(None),
                )
                .values(closed_at=utcnow())
            )
            db.add(queue)
        return queue

    def queue_of_run(self, run_id: str) -> AnnotationQueue | None:
        """The run's newest queue (open or closed)."""
        query = (
            select(AnnotationQueue)
            .where(AnnotationQueue.run_id == run_id)
            .order_by(AnnotationQueue.created_at.desc())
            .limit(1)
        )
        with self.session() as db:
            return db.scalars(query).first()

    def queue_by_token(self, token: str) -> AnnotationQueue | None:
        with self.session() as db:
            return db.scalars(
                select(AnnotationQueue).where(AnnotationQueue.token == token)
            ).first()

    def revoke_queue_token(self, queue_id: str) -> str:
        """A new annotator token: the old link stops working."""
        token = new_token()
        self._update_queue(queue_id, token=token)
        return token

    def close_queue(self, queue_id: str) -> None:
        self._update_queue(queue_id, closed_at=utcnow())

    def _update_queue(self, queue_id: str, **values: Any) -> None:
        with self.session.begin() as db:
            db.execute(
                update(AnnotationQueue)
                .where(AnnotationQueue.id == queue_id)
                .values(**values)
            )

    def save_label(
        self, queue_id: str, item: int, annotator: str, **values: Any
    ) -> None:
        """Insert or revise ``annotator``'s label of ``item``."""
        values = {name: values.get(name) for name in LABEL_FIELDS}
        values["skipped"] = bool(values["skipped"])
        with self.session.begin() as db:
            found = db.scalars(
                select(AnnotationLabel)
                .where(
                    AnnotationLabel.queue_id == queue_id,
                    AnnotationLabel.item == item,
                    AnnotationLabel.annotator == annotator,
                )
                .with_for_update()
            ).first()
            if found is None:
                db.add(
                    AnnotationLabel(
                        queue_id=queue_id,
                        item=item,
                        annotator=annotator,
                        created_at=utcnow(),
                        updated_at=utcnow(),
                        **values,
                    )
                )
            else:
                for name, value in values.items():
                    setattr(found, name, value)
                found.updated_at = utcnow()
            db.execute(_agreement_wanted(queue_id))

    def add_labels(
        self, queue_id: str, labels: dict[tuple[int, str], dict[str, Any]]
    ) -> None:
        """Insert the labels of a new queue, ``{(item, annotator): values}``,
        in one statement."""
        if not labels:
            return
        now = utcnow()
        rows = [
            {
                "queue_id": queue_id,
                "item": item,
                "annotator": annotator,
                "created_at": now,
                "updated_at": now,
                **{name: values.get(name) for name in LABEL_FIELDS},
                "skipped": bool(values.get("skipped")),
            }
            for (item, annotator), values in labels.items()
        ]
        with self.session.begin() as db:
            db.execute(insert(AnnotationLabel), rows)
            db.execute(_agreement_wanted(queue_id))

    def labels_of(self, queue_id: str) -> list[AnnotationLabel]:
        query = (
            select(AnnotationLabel)
            .where(AnnotationLabel.queue_id == queue_id)
            .order_by(AnnotationLabel.item, AnnotationLabel.annotator)
        )
        with self.session() as db:
            return list(db.scalars(query))

    def label_of(
        self, queue_id: str, item: int, annotator: str
    ) -> AnnotationLabel | None:
        with self.session() as db:
            return db.scalars(
                select(AnnotationLabel).where(
                    AnnotationLabel.queue_id == queue_id,
                    AnnotationLabel.item == item,
                    AnnotationLabel.annotator == annotator,
                )
            ).first()

    def next_item(self, queue: AnnotationQueue, annotator: str) -> int | None:
        """The next item for ``annotator`` (see the module), None when done.
        Two aggregate queries: the database counts, not this process."""
        of_queue = AnnotationLabel.queue_id == queue.id
        mine_query = select(AnnotationLabel.item).where(
            of_queue, AnnotationLabel.annotator == annotator
        )
        counts_query = (
            select(AnnotationLabel.item, func.count())
            .where(of_queue, AnnotationLabel.skipped.is_(False))
            .group_by(AnnotationLabel.item)
        )
        with self.session() as db:
            mine = set(db.scalars(mine_query))
            labels = {item: count for item, count in db.execute(counts_query)}
        open_items = [i for i in range(len(queue.items)) if i not in mine]
        if not open_items:
            return None
        return min(
            open_items,
            key=lambda i: (labels.get(i, 0) >= queue.per_item, labels.get(i, 0), i),
        )

    def labels_key(self, queue_id: str) -> str:
        """The state of a queue's labels: their number and latest change."""
        query = select(func.count(), func.max(AnnotationLabel.updated_at)).where(
            AnnotationLabel.queue_id == queue_id
        )
        with self.session() as db:
            count, latest = db.execute(query).one()
        return f"{count}:{latest.isoformat() if latest else ''}"

    def store_agreement(
        self, queue_id: str, key: str, agreement: dict[str, Any] | None
    ) -> None:
        """The agreement of the labels in state ``key``; the queue's claim
        ends (labels given meanwhile have asked for the next one)."""
        self._update_queue(
            queue_id, agreement=agreement, agreement_key=key, agreement_sent_at=None
        )

    def annotator_done(self, queue_id: str, annotator: str) -> int:
        query = select(func.count()).where(
            AnnotationLabel.queue_id == queue_id, AnnotationLabel.annotator == annotator
        )
        with self.session() as db:
            return int(db.execute(query).scalar_one())

    def judged_values(
        self, run_id: str, keys: Iterable[Sequence[Any]]
    ) -> dict[str, dict[ItemKey, tuple[float | None, int | None]]]:
        """``{judge: {(session_id, round, method): (al, binary)}}`` of the
        items ``keys``: the judge's scored ``al`` and ``binary`` rows."""
        wanted = {tuple(key) for key in keys}
        query = select(
            ResultRow.session_id,
            ResultRow.round,
            ResultRow.method,
            ResultRow.metric,
            ResultRow.judge,
            ResultRow.value,
        ).where(
            ResultRow.run_id == run_id,
            ResultRow.metric.in_(("al", "binary")),
            ResultRow.status == RowStatus.OK,
            ResultRow.sample == 0,
            ResultRow.session_id.in_({key[0] for key in wanted}),
        )
        found: dict[str, dict[ItemKey, tuple[float | None, int | None]]] = {}
        with self.session() as db:
            for session_id, number, method, metric, judge, value in db.execute(query):
                key = (session_id, number, method)
                if key in wanted:
                    al, binary = found.setdefault(judge, {}).get(key, (None, None))
                    verdict = (
                        None if value is None else int(value)
                    )  # scored rows have one
                    pair = (value, binary) if metric == "al" else (al, verdict)
                    found[judge][key] = pair
        return found


def delete_annotations_of(conn: Connection, run_id: str) -> None:
    """The run's queues and labels (in the run's deletion transaction)."""
    queues = select(AnnotationQueue.id).where(AnnotationQueue.run_id == run_id)
    conn.execute(delete(AnnotationLabel).where(AnnotationLabel.queue_id.in_(queues)))
    conn.execute(delete(AnnotatorLink).where(AnnotatorLink.queue_id.in_(queues)))
    conn.execute(delete(AnnotationQueue).where(AnnotationQueue.run_id == run_id))


def claim_agreements(engine: Engine, sent_before: datetime) -> list[str]:
    """The runs whose queue's agreement a worker is to compute now: its
    labels changed, and it was not handed out since ``sent_before`` (one
    computation at a time per queue: labels given while it runs ask for the
    next). Each is claimed once however many dispatchers ask at once."""
    waiting = AnnotationQueue.agreement_wanted.is_(True) & (
        AnnotationQueue.agreement_sent_at.is_(None)
        | (AnnotationQueue.agreement_sent_at < sent_before)
    )
    with engine.begin() as conn:
        claimed = claim_each(
            conn,
            AnnotationQueue.id,
            waiting,
            agreement_sent_at=utcnow(),
            agreement_wanted=False,
        )
        if not claimed:
            return []
        runs = select(AnnotationQueue.run_id).where(AnnotationQueue.id.in_(claimed))
        return list(conn.scalars(runs))


def _agreement_wanted(queue_id: str) -> Update:
    """The labels of the queue changed: its agreement is to be computed
    again (``claim_agreements``), in the transaction that changed them."""
    return (
        update(AnnotationQueue)
        .where(AnnotationQueue.id == queue_id)
        .values(agreement_wanted=True)
    )
