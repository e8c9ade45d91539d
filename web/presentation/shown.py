"""What the results pages read of what they show: a run, or a comparison
across runs (``metrics.comparison.Comparison`` quacks like a finished run),
so the dashboard's panels and comparison tables render either."""

from __future__ import annotations

from typing import Any, Protocol


class Shown(Protocol):
    """A :class:`store.models.Run` or a ``Comparison``: its id, methods,
    suites and stored aggregates (None: a run not summarized yet)."""

    @property
    def id(self) -> str: ...
    @property
    def methods(self) -> list[str]: ...
    @property
    def suites(self) -> list[str]: ...
    @property
    def aggregates(self) -> dict[str, Any] | None: ...
