"""Page parts built once per version, whoever asks (issue 48): twenty
teammates reading a run's page while it evaluates made twenty builds of
the same charts and tables, each new interim result again (p95 3–4 s).

A part is named by its family (the run, the language, the query) and a
version (when the run's results were last written). The first reader of
a version builds it; the others wait for that build, or, when an earlier
version is at hand, are given that one at once (it was true a moment ago
and the page says when it was computed). Kept in this process, the most
recently used ``size`` parts.

>>> parts, built = SingleFlight(size=2), []
>>> def build(text):
...     built.append(text)
...     return text
>>> parts.get(("run", "en"), 1, lambda: build("v1"))
'v1'
>>> parts.get(("run", "en"), 1, lambda: build("again"))
'v1'
>>> parts.get(("run", "en"), 2, lambda: build("v2")), built
('v2', ['v1', 'v2'])
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

WAIT_S = 60.0  # for another reader's build; then build it oneself


class _Flight:
    """A build under way: its version, and the event set when it ends."""

    def __init__(self, version: Hashable) -> None:
        self.version = version
        self.done = threading.Event()
        self.value: Any = None
        self.ok = False


class SingleFlight:
    """``previous=False``: readers of a version being built wait for it
    (a page that must never be older than its data)."""

    def __init__(self, size: int = 64, previous: bool = True) -> None:
        self.size = size
        self.previous = previous
        self._lock = threading.Lock()
        self._kept: OrderedDict[Hashable, tuple[Hashable, Any]] = OrderedDict()
        self._flights: dict[Hashable, _Flight] = {}

    def get(self, family: Hashable, version: Hashable, build: Callable[[], Any]) -> Any:
        """The family's part at ``version`` (or the previous one while
        another reader builds ``version``)."""
        with self._lock:
            kept = self._kept.get(family)
            if kept is not None and kept[0] == version:
                self._kept.move_to_end(family)
                return kept[1]
            flight = self._flights.get(family)
            mine = flight is None or flight.version != version
            if mine:
                flight = self._flights[family] = _Flight(version)
            elif kept is not None and self.previous:
                return kept[1]  # the previous version, at once
        assert flight is not None
        if mine:
            return self._build(family, flight, build)
        if flight.done.wait(WAIT_S) and flight.ok:
            return flight.value
        return build()  # its builder failed or hangs: no reader waits on it

    def _build(
        self, family: Hashable, flight: _Flight, build: Callable[[], Any]
    ) -> Any:
        try:
            flight.value, flight.ok = build(), True
        finally:
            with self._lock:
                current = self._flights.get(family) is flight
                if current:
                    del self._flights[family]
                if flight.ok and (current or family not in self._kept):
                    self._kept[family] = (flight.version, flight.value)
                    self._kept.move_to_end(family)
                    while len(self._kept) > self.size:
                        self._kept.popitem(last=False)
            flight.done.set()
        return flight.value
