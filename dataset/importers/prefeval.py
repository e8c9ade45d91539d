"""PrefEval's generation results (``docs/importers.md#prefeval``): the
method is the model in the file's name, unless --method names one."""

from __future__ import annotations

from typing import Any

from dataset.importer import Importer
from dataset.prefeval import prefeval


def looks_like(record: dict[str, Any]) -> bool:
    return "preference" in record and "question" in record


IMPORTER = Importer(
    "prefeval", prefeval, looks_like, "prefeval", "PrefEval", precedence=20
)
