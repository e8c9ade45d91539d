"""What an importer declares (``dataset/importers/<name>.py`` exports
``IMPORTER = Importer(...)``; ``dataset.importers.IMPORTERS`` collects
them). Kept apart from the registry's package, as ``metrics/suite.py`` is
from ``metrics/suites/``, so an importer's module imports no module that
imports it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core.i18n import LazyText
from dataset.turns import Options

CHAT_OPTIONS = ("profile", "personality", "method")


@dataclass(frozen=True)
class Importer:
    """One layout's importer, declared by its module as ``IMPORTER``."""

    name: str  # what --from, the API's ``from`` and the upload page call it
    convert: Callable[[dict[str, Any], int, Options], dict[str, Any]]
    # whether one record (a dict) is in this layout; the first importer
    # whose ``detect`` holds, by ``precedence``, names a file's layout
    detect: Callable[[dict[str, Any]], bool]
    id_prefix: str  # of the session id made for a record: <prefix>-<number>
    title: str | LazyText  # what the upload page and validate call the layout
    # the options (Options fields) it reads: the upload page's Convert asks these
    options: tuple[str, ...] = CHAT_OPTIONS
    # detection order: a layout whose records would also pass a broader
    # layout's ``detect`` goes first (lower)
    precedence: int = 50
