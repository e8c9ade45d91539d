"""Interned strings and row groups: the parts of
:class:`~metrics.columns.RowColumns` that hold no rows."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


class Names:
    """Interned strings: a code per distinct string, in first-seen order.

    >>> names = Names()
    >>> names.code("b"), names.code("a"), names.code("b"), names.ranks().tolist()
    (0, 1, 0, [1, 0])
    """

    def __init__(self) -> None:
        self.names: list[str] = []
        self.codes: dict[str, int] = {}

    def code(self, name: str) -> int:
        if name not in self.codes:
            self.codes[name] = len(self.names)
            self.names.append(name)
        return self.codes[name]

    def codes_of(self, names: Iterable[str]) -> list[int]:
        """The codes of many strings (new ones coded as first seen)."""
        names = list(names)
        for name in dict.fromkeys(names):  # (ordered, unlike a set)
            self.code(name)
        return list(map(self.codes.__getitem__, names))

    def ranks(self) -> NDArray[np.int64]:
        """Each code's place in the sorted strings (``sorted`` order)."""
        import numpy as np

        order = sorted(range(len(self.names)), key=self.names.__getitem__)
        ranks = np.empty(len(order), dtype=np.int64)
        ranks[order] = np.arange(len(order))
        return ranks


class Groups:
    """Rows grouped by some columns: ``rows`` lists the row positions group
    after group (arrival order inside a group); ``bounds`` are each group's
    ``(start, end)`` in ``rows``."""

    def __init__(self, rows: NDArray[Any], bounds: list[tuple[int, int]]) -> None:

        self.rows, self.bounds = rows, bounds
