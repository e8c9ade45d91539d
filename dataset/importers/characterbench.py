"""CharacterBench's dimension files (``docs/importers.md#characterbench``):
the method is each record's own model; the dimension, the file's name."""

from __future__ import annotations

from typing import Any

from dataset.characterbench import characterbench
from dataset.importer import Importer


def looks_like(record: dict[str, Any]) -> bool:
    return isinstance(record.get("response_messages"), dict) and "dialogue" in record


IMPORTER = Importer(
    "characterbench",
    characterbench,
    looks_like,
    "characterbench",
    "CharacterBench",
    ("profile", "personality", "language"),
    precedence=10,
)
