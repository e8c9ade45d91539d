"""OpenAI chat ``messages`` (``docs/importers.md#openai-messages``)."""

from __future__ import annotations

from typing import Any

from core.i18n import _l
from dataset.importer import Importer
from dataset.layouts import openai_messages


def looks_like(record: dict[str, Any]) -> bool:
    return isinstance(record.get("messages"), list)


IMPORTER = Importer(
    "openai-messages",
    openai_messages,
    looks_like,
    "record",
    _l("OpenAI chat messages"),
)
