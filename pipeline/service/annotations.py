"""Annotation queues of a run (issue 30): people label a blind sample of
its replies in the browser; the judge audit compares the judge with them
(``metrics/human_agreement.py``).

The owner (manage link) makes a queue: a stratified sample
(``dataset/annotation_sample.py``) of ``size`` present replies with a
recorded seed, ``per_item`` annotators wanted per item, and whether the five
0-20 dimensions are asked for too. Annotators open the queue's own token,
give their name once, and label one item at a time; each label is saved at
once and can be revised. Values are checked here: AL 0-100, binary 0 or 1,
each dimension 0-20, a comment of at most ``MAX_COMMENT_CHARS``.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import dataset
from core.problems import Rejected
from core.status import RunStatus
from dataset.annotation_sample import item_view, stratified_sample
from metrics import registry
from pipeline.service import agreement, label_files

if TYPE_CHECKING:
    from store import StorageLike
    from store.annotation_models import AnnotationQueue
    from store.models import Run

SIZE_RANGE = (10, 1000)  # items per queue
PER_ITEM_RANGE = (1, 10)  # annotators wanted per item
MAX_COMMENT_CHARS = 2000
MAX_ANNOTATOR_CHARS = 80
LABELLED = frozenset({RunStatus.DONE, RunStatus.PARTIAL})


def bounded_int(raw: Any, path: str, bounds: tuple[int, int]) -> int:
    low, high = bounds
    try:
        value = int(raw)
    except (TypeError, ValueError):
        raise Rejected.one("out_of_range", path=path, low=low, high=high) from None
    if not low <= value <= high:
        raise Rejected.one("out_of_range", path=path, low=low, high=high)
    return value


class AnnotationService:
    def __init__(
        self, storage: StorageLike, upload_path: Callable[[Run], Path]
    ) -> None:
        self.storage = storage
        self.upload_path = upload_path  # run -> its upload file

    def create(
        self, run: Run, size: Any, per_item: Any = 1, dimensions: Any = False
    ) -> AnnotationQueue:
        """A new queue over the run's replies; the seed is recorded."""
        if run.status not in LABELLED:
            raise Rejected.one("not_finished_for_labels", http=409, status=run.status)
        size = bounded_int(size, "size", SIZE_RANGE)
        per_item = bounded_int(per_item, "per_item", PER_ITEM_RANGE)
        seed = secrets.randbelow(2**31)
        sessions = dataset.iter_sessions(self.upload_path(run))
        items = stratified_sample(sessions, list(run.methods), size, seed)
        return self.storage.annotations.create_queue(
            run.id, items, seed, per_item, bool(dimensions)
        )

    def item(self, run: Run, queue: AnnotationQueue, index: int) -> dict[str, Any]:
        """The blind view of the queue's item ``index``."""
        if not 0 <= index < len(queue.items):
            raise Rejected.one("no_such_item", path="item", item=index, http=404)
        session_id, round_number, method = queue.items[index]
        span = self.storage.chunks.session_span(run.id, session_id)
        # the queue's items are sessions of the run: each is in its index
        span = cast("tuple[int, int]", span)
        [session] = dataset.read_sessions(self.upload_path(run), *span)
        return {"item": index, **item_view(session, round_number, method)}

    def agreement(self, run: Run, queue: AnnotationQueue) -> dict[str, Any] | None:
        """The queue's agreement, computed now if its labels changed
        (``pipeline/service/agreement.py``; a worker's task, and tests)."""
        return agreement.refresh(self.storage, run, queue)

    def shown_agreement(self, queue: AnnotationQueue) -> dict[str, Any]:
        """The stored agreement and whether labels came in since."""
        return agreement.shown(self.storage, queue)

    def label(
        self, queue: AnnotationQueue, annotator: str, body: Mapping[str, Any]
    ) -> None:
        """Save (or revise) ``annotator``'s label from a JSON body."""
        if queue.closed_at is not None:
            raise Rejected.one("queue_closed", http=409)
        item, values = checked_label(queue, body)
        self.storage.annotations.save_label(queue.id, item, annotator, **values)


def label_dimensions() -> tuple[str, ...]:
    """The rubric dimensions a label may score: those of the suite whose
    judge the human AL label stands beside."""
    owner = registry.spec("human_al")
    return registry.get(owner.suite).dimensions if owner is not None else ()


def checked_label(
    queue: AnnotationQueue, body: Mapping[str, Any]
) -> tuple[int, dict[str, Any]]:
    """The item and label values of a JSON body, every value checked."""
    index = bounded_int(body.get("item"), "item", (0, len(queue.items) - 1))
    if body.get("skipped"):
        return index, {"skipped": True}
    al = bounded_int(body.get("al"), "al", (0, 100))
    binary = (
        None
        if body.get("binary") is None
        else bounded_int(body.get("binary"), "binary", (0, 1))
    )
    dims = None
    if queue.dimensions:
        raw = body.get("dimensions")
        raw = raw if isinstance(raw, dict) else {}
        dims = {
            name: bounded_int(raw.get(name), f"dimensions.{name}", (0, 20))
            for name in label_dimensions()
        }
    comment = str(body.get("comment") or "").strip()
    if len(comment) > MAX_COMMENT_CHARS:
        raise Rejected.one(
            "too_long", path="comment", length=len(comment), limit=MAX_COMMENT_CHARS
        )
    return index, {
        "al": float(al),
        "binary": binary,
        "dimensions": dims,
        "comment": comment or None,
    }


def import_labels(
    service: AnnotationService, run: Run, lines: Iterable[bytes]
) -> dict[str, int]:
    """A ``labels.jsonl`` (``pipeline/service/label_files.py``) into a new queue of
    this run holding the items its replies match: ``{"imported",
    "unmatched"}``. Every value is checked as a label given on the page."""
    if run.status not in LABELLED:
        raise Rejected.one("not_finished_for_labels", http=409, status=run.status)
    matched, unmatched = label_files.matched_labels(service.upload_path(run), lines)
    items = list(dict.fromkeys(key for key, _ in matched))
    if not items:
        return {"imported": 0, "unmatched": unmatched}
    queue = service.storage.annotations.create_queue(
        run.id,
        [list(k) for k in items],
        0,
        1,
        any(row.get("dimensions") for _, row in matched),
    )
    index = {key: position for position, key in enumerate(items)}
    # one per item and annotator: a later line revises an earlier
    labels: dict[tuple[int, str], dict[str, Any]] = {}
    for key, row in matched:
        item, values = checked_label(queue, {**row, "item": index[key]})
        labels[item, annotator_name(row["annotator"])] = values
    service.storage.annotations.add_labels(
        queue.id, labels
    )  # one transaction for the file
    return {"imported": len(matched), "unmatched": unmatched}


def annotator_name(raw: Any) -> str:
    """The annotator's name as given once on the page: 1-80 characters."""
    name = str(raw or "").strip()
    if not name or len(name) > MAX_ANNOTATOR_CHARS:
        raise Rejected.one(
            "too_long" if name else "missing_field",
            path="annotator",
            length=len(name),
            limit=MAX_ANNOTATOR_CHARS,
        )
    return name
