"""The one clock of record: timezone-aware UTC, as every stored time is.
Here, not in ``store/models.py``, so code that only stamps a time (the
dispatcher, finalize) does not load SQLAlchemy to get it.

>>> utcnow().tzinfo
datetime.timezone.utc
"""

from __future__ import annotations

from datetime import UTC, datetime


def utcnow() -> datetime:
    return datetime.now(UTC)


def aware(moment: datetime) -> datetime:
    """A stored time as UTC-aware (SQLite gives back naive UTC).

    >>> aware(datetime(2026, 1, 1)).isoformat()
    '2026-01-01T00:00:00+00:00'
    """
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
