"""Files a run can be downloaded as. Exported files are inert: CSV cells
that a spreadsheet would run as a formula are neutralised, and no file
carries the run's share token (they name the run by its id).

>>> safe_cell('=HYPERLINK("http://evil.example","x")'), safe_cell("-0.25")
('\\'=HYPERLINK("http://evil.example","x")', '-0.25')
>>> safe_cell("@sum"), safe_cell(0.5), safe_cell("Ours")
("'@sum", 0.5, 'Ours')
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

from reports import Reported

CSV_FIELDS = (
    "session_id",
    "round",
    "method",
    "metric",
    "value",
    "status",
    "note",
    "note_code",
    "judge",
)
# OWASP CSV injection: a cell starting with one of these is a formula to a
# spreadsheet. Real numbers (e.g. "-0.25") stay as they are.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_V = TypeVar("_V")


def safe_cell(value: _V) -> _V | str:
    if not isinstance(value, str) or not value.startswith(FORMULA_STARTS):
        return value
    if _is_number(value):
        return value
    return "'" + value


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def csv_chunks(
    rows: Iterable[dict[str, Any]], flush_bytes: int = 64 * 1024
) -> Iterator[str]:
    """The tidy rows as CSV text, streamed in pieces of about ``flush_bytes``."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_FIELDS, extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        writer.writerow({key: safe_cell(row.get(key)) for key in CSV_FIELDS})
        if buffer.tell() > flush_bytes:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue()


def file_name(run: Reported, extension: str) -> str:
    return f"personasteer-{run.id[:12]}.{extension}"
