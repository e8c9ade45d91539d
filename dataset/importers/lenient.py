"""Our own layout with other spellings (``docs/importers.md#lenient``)."""

from __future__ import annotations

from typing import Any

from core.i18n import _l
from dataset.importer import Importer
from dataset.layouts import lenient


def spelled_otherwise(record: dict[str, Any]) -> bool:
    """Our layout with one of the spellings ``lenient`` reads.

    >>> spelled_otherwise({"rounds": [{"round": 0}]})
    True
    >>> spelled_otherwise({"rounds": [{"round": 1}]}), spelled_otherwise({})
    (False, False)
    """
    if not isinstance(record.get("rounds"), list):
        return False
    if any(
        isinstance(record.get(k), list) for k in ("user_profile", "user_personality")
    ):
        return True
    numbers = [r.get("round") for r in record["rounds"] if isinstance(r, dict)]
    return bool(numbers) and (
        numbers[0] == 0 or any(isinstance(n, str) for n in numbers)
    )


IMPORTER = Importer(
    "lenient",
    lenient,
    spelled_otherwise,
    "record",
    _l(
        "our format with other spellings (0-based or string round numbers, "
        "personas as lists)"
    ),
    precedence=90,  # the last resort: our own keys
)
