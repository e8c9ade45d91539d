"""Statuses of a run and of a result row: the one definition of each.

Both are ``StrEnum``s, so they compare equal to, and serialise as, the plain
strings stored in the database and written in the results format.

>>> RunStatus("partial") in FINAL_RUN, RowStatus.OK == "ok"
(True, True)
>>> sorted(FAILED_ROWS)
['error', 'unscored']
"""

from __future__ import annotations

from enum import StrEnum

from core.i18n import LazyText, _l


class _Status(StrEnum):
    def __repr__(self) -> str:  # shown as the plain string it stands for
        return repr(self.value)


class RunStatus(_Status):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"  # every row that could be scored was scored
    PARTIAL = "partial"  # some rows are unscored or error
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def label(self) -> LazyText:
        return _RUN_LABELS[self]

    @property
    def final(self) -> bool:
        return self in FINAL_RUN


class RowStatus(_Status):
    OK = "ok"
    UNSCORED = "unscored"  # the judge or a metric could not score this item
    ERROR = "error"  # transport or internal failure
    NOT_CONFIGURED = "not_configured"  # no judge configured
    NOT_APPLICABLE = "not_applicable"  # the metric cannot apply to this item
    # the method has no reply in this round (null or absent in the file):
    # never scored, and no failure (it never makes a run partial)
    MISSING = "missing"

    @property
    def label(self) -> LazyText:
        return _ROW_LABELS[self]


class ChunkState(_Status):
    """Where one chunk of a run's work is (``store/chunks.py``)."""

    PENDING = "pending"  # planned, not yet handed to the queue
    SENT = "sent"  # in the queue
    RUNNING = "running"  # a worker is on it (heartbeat in beat_at)
    DONE = "done"
    FAILED = "failed"  # given up after its attempts: its rows are errors


class ComparisonState(_Status):
    """Where a stored comparison of finished runs is (``store/comparison.py``)."""

    COMPUTING = "computing"  # asked for; a worker computes it
    DONE = "done"
    FAILED = "failed"  # the runs cannot be compared (its problem is stored)


class BatchStage(_Status):
    """Where a batch-mode run stands (``pipeline/batch/steps.py``)."""

    COLLECT = "collect"  # its requests are to be gathered and sent
    WAITING = "waiting"  # its batches are at the provider
    ANSWERED = "answered"  # its chunks run, reading the answers


# what the provider calls a batch that will change no more
PROVIDER_FINAL = ("completed", "failed", "expired", "cancelled")
ACTIVE_RUN = frozenset({RunStatus.QUEUED, RunStatus.RUNNING})
FINAL_RUN = frozenset(RunStatus) - ACTIVE_RUN
RETRYABLE_RUN = frozenset({RunStatus.PARTIAL, RunStatus.FAILED, RunStatus.CANCELLED})
FAILED_ROWS = frozenset({RowStatus.UNSCORED, RowStatus.ERROR})

_RUN_LABELS = {
    RunStatus.QUEUED: _l("queued"),
    RunStatus.RUNNING: _l("running"),
    RunStatus.DONE: _l("done"),
    RunStatus.PARTIAL: _l("partial"),
    RunStatus.FAILED: _l("failed"),
    RunStatus.CANCELLED: _l("cancelled"),
}
_ROW_LABELS = {
    RowStatus.OK: _l("scored"),
    RowStatus.UNSCORED: _l("unscored"),
    RowStatus.ERROR: _l("error"),
    RowStatus.NOT_CONFIGURED: _l("not configured"),
    RowStatus.NOT_APPLICABLE: _l("not applicable"),
    RowStatus.MISSING: _l("reply missing"),
}


def status_label(value: str) -> LazyText | str:
    """The label of a run or row status given as a string (unknown: itself)."""
    for enum in (RunStatus, RowStatus):
        if value in enum._value2member_map_:
            return enum(value).label
    return value


class Cancelled(Exception):
    """The run was cancelled while it was being evaluated: nothing of the
    interrupted work is stored."""


class StorageUnavailable(Exception):
    """A read or write of a run's state failed while its chunk was judged
    (the database down, its disk full): the chunk's attempt fails and is
    tried again; it never becomes a row's status, as a bug in a suite does
    (``metrics/engine.py`` lets it through). Its text is the driver's error,
    without the statement.

    >>> str(StorageUnavailable.of(OSError(28, "No space left on device")))
    'OSError: [Errno 28] No space left on device'
    """

    @classmethod
    def of(cls, error: BaseException) -> StorageUnavailable:
        cause = getattr(error, "orig", None) or error  # SQLAlchemy's: the driver's
        return cls(f"{type(cause).__name__}: {cause}")


class LeaseLost(Cancelled):
    """The chunk's lease was taken (its worker was stopped or starved past
    it, and another claimed it): this worker makes no further call and
    writes nothing more of it (``store/chunks.py``). Calls already under
    way end, and their verdicts still go to the judge cache."""
