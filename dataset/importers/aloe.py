"""ALOE's ``conversations`` of ``user`` + ``assistant`` rounds
(``docs/importers.md#aloe``)."""

from __future__ import annotations

from typing import Any

from dataset.importer import Importer
from dataset.layouts import aloe


def looks_like(record: dict[str, Any]) -> bool:
    """>>> looks_like({"conversations": [{"user": "hi", "assistant": "hello"}]})
    True
    """
    turns = record.get("conversations")
    first = turns[0] if isinstance(turns, list) and turns else None
    return isinstance(first, dict) and "user" in first and "assistant" in first


IMPORTER = Importer("aloe", aloe, looks_like, "aloe", "ALOE", precedence=30)
