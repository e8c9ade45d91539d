"""Human agreement of an annotation queue's labels (issue 48): computed on
a worker when the labels change (``pipeline/worker/tasks.py``: the dispatcher
claims a queue whose labels changed, one computation at a time), stored
with the state of the labels it read; a page shows what is stored and
says when labels came in since. The bootstrap intervals take seconds, so
no page view computes it."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from metrics.human_agreement import human_agreement

log = logging.getLogger(__name__)
FAILED = "failed"  # stored beside the figures: the error that stopped them

if TYPE_CHECKING:
    from store import StorageLike
    from store.annotation_models import AnnotationQueue
    from store.models import Run


def refresh(
    storage: StorageLike, run: Run, queue: AnnotationQueue
) -> dict[str, Any] | None:
    """The judge against the queue's labels, and the labellers among
    themselves (``metrics/human_agreement.py``); None without labels.
    Computed only when a label changed; stored, which ends a worker's
    claim on it."""
    key = storage.annotations.labels_key(queue.id)
    found = queue.agreement
    if queue.agreement_key != key:
        found = _computed(storage, run, queue)
    storage.annotations.store_agreement(queue.id, key, found)
    return found


def shown(storage: StorageLike, queue: AnnotationQueue) -> dict[str, Any]:
    """What a page shows: the stored agreement, never computed here;
    whether labels changed since (a worker is computing it again); and
    why the latest labels' computation failed, if it did (``failed``)."""
    key = storage.annotations.labels_key(queue.id)
    labelled = not key.startswith("0:")  # labels_key: "<count>:<latest>"
    stored = dict(queue.agreement or {})
    failed = stored.pop(FAILED, None)
    return {
        "human": stored or None,
        "agreement_failed": failed,
        "pending": labelled and queue.agreement_key != key,
    }


def compute_for_run(storage: StorageLike, run_id: str) -> None:
    """The agreement of the run's queue (the worker's task). A computation
    that fails is stored as failed for these labels, with the figures of
    the labels before kept: the page says so instead of "being computed"
    for ever, and the next label asks again."""
    run = storage.runs.get_run(run_id)
    queue = storage.annotations.queue_of_run(run_id) if run else None
    if run is None or queue is None:
        return
    try:
        refresh(storage, run, queue)
    except Exception as exc:
        log.exception("the agreement of run %s failed", run_id)
        kept = {k: v for k, v in (queue.agreement or {}).items() if k != FAILED}
        key = storage.annotations.labels_key(queue.id)
        storage.annotations.store_agreement(
            queue.id, key, {**kept, FAILED: type(exc).__name__}
        )


def _computed(
    storage: StorageLike, run: Run, queue: AnnotationQueue
) -> dict[str, Any] | None:
    labels = [
        (tuple(queue.items[label.item]), label.annotator, label.al, label.binary)
        for label in storage.annotations.labels_of(queue.id)
        if not label.skipped
    ]
    if not labels:
        return None
    judged = storage.annotations.judged_values(run.id, [key for key, *_ in labels])
    return human_agreement(labels, judged)
