"""The JSONL input format: validation and reading (pure, no frameworks).

``docs/input-format.md`` describes the format. :mod:`dataset.validation`
checks a file line by line; :mod:`dataset.reader` reads the sessions of an
already validated file; :mod:`dataset.schema` holds the per-field rules.
"""

from dataset.reader import (
    is_blank,
    iter_sessions,
    normalize_session,
    read_sessions,
    session_spans,
    sessions_from,
)
from dataset.validation import (
    ValidationReport,
    has_allowed_extension,
    validate_file,
    validate_stream,
)

__all__ = [
    "ValidationReport",
    "has_allowed_extension",
    "is_blank",
    "iter_sessions",
    "normalize_session",
    "read_sessions",
    "session_spans",
    "sessions_from",
    "validate_file",
    "validate_stream",
]
