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
