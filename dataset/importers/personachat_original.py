"""PersonaChat as first released (``docs/importers.md#personachat-original``)."""

from __future__ import annotations

from typing import Any

from core.i18n import _l
from dataset.importer import Importer
from dataset.layouts import personachat_original


def looks_like(record: dict[str, Any]) -> bool:
    return isinstance(record.get("utterances"), list) and "personality" in record


IMPORTER = Importer(
    "personachat-original",
    personachat_original,
    looks_like,
    "personachat",
    _l("PersonaChat (original release)"),
    precedence=40,
)
