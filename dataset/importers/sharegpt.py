"""ShareGPT's ``conversations`` of ``from`` + ``value`` turns
(``docs/importers.md#sharegpt``)."""

from __future__ import annotations

from typing import Any

from dataset.importer import Importer
from dataset.layouts import sharegpt


def looks_like(record: dict[str, Any]) -> bool:
    """>>> looks_like({"conversations": [{"from": "human", "value": "hi"}]})
    True
    """
    turns = record.get("conversations")
    first = turns[0] if isinstance(turns, list) and turns else None
    return isinstance(first, dict) and "from" in first


# after ALOE, whose rounds may carry a "from" too
IMPORTER = Importer(
    "sharegpt", sharegpt, looks_like, "record", "ShareGPT", precedence=31
)
