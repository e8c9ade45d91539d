"""Synthetic-Persona-Chat (``docs/importers.md#personachat``)."""

from __future__ import annotations

from typing import Any

from dataset.importer import Importer
from dataset.layouts import personachat


def looks_like(record: dict[str, Any]) -> bool:
    return "Best Generated Conversation" in record or "user 1 personas" in record


IMPORTER = Importer(
    "personachat",
    personachat,
    looks_like,
    "persona-chat",
    "Synthetic-Persona-Chat",
    precedence=60,
)
