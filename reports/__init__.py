"""Reports of a run or a comparison, for the web and the command line
alike: the comparison tables (``tables``) and their number formats, the
paper exports (LaTeX and Markdown tables, ``summary.csv``, the Methods
paragraph) and the row CSV's safety. The web serves them as downloads
(``web/views/downloads.py``, ``web/views/compare.py``); ``flask --app app report`` and
``flask --app app compare`` write them (``cli/reports.py``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol


class Reported(Protocol):
    """What a report reads of a run (``store.models.Run``) or of a
    comparison of runs (``metrics.comparison.Comparison``), which quacks like
    one; the other fields a report shows are asked with ``getattr``."""

    @property
    def id(self) -> str: ...

    @property
    def methods(self) -> list[str]: ...

    @property
    def suites(self) -> list[str]: ...

    @property
    def aggregates(self) -> dict[str, Any] | None: ...


class ReportedRun(Reported, Protocol):
    """What the Methods paragraph also reads of a run (``store.models.Run``)."""

    @property
    def sessions(self) -> int: ...

    @property
    def rounds(self) -> int: ...

    @property
    def file_sha256(self) -> str: ...

    @property
    def options(self) -> dict[str, Any]: ...

    @property
    def judge(self) -> dict[str, Any] | None: ...

    @property
    def finished_at(self) -> datetime | None: ...
