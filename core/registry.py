"""One generic registry type (as lm-evaluation-harness's ``Registry``): a
typed mapping from a name to its entry, filled by the modules that define
the entries. The suites (``metrics/registry.py``: ``SUITES``), the
importers (``dataset/importers/``: ``IMPORTERS``), the built-in judge
protocols (``metrics/protocols.py``: ``BUILTINS``), the protocol modes the
suites ask (``metrics/protocol_checks.py``: ``PROTOCOL_MODES``) and the
suites' prompt files (``metrics/judging.py``: ``PROMPT_FILES``) are each one
``Registry``; every list the pages, the CLI and the API show is read from
one of them.

A registry may be given ``discover``: called once, on the first read, to
import the modules that register their entries (no list to edit when an
entry is added).

>>> colours = Registry[int]("colour")
>>> colours.register("red", 1)
1
>>> colours.register("red", 2)
Traceback (most recent call last):
...
ValueError: colour 'red' is already registered
>>> colours.get("blue")
Traceback (most recent call last):
...
core.registry.UnknownName: no colour 'blue' (known: red)
>>> colours.names(), "red" in colours, dict(colours)
(['red'], True, {'red': 1})
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Generic, TypeVar

T = TypeVar("T")
_REQUIRED = object()


class UnknownName(KeyError):
    """A name no entry is registered under (a ``KeyError``, as a dict's)."""

    def __str__(self) -> str:
        return str(self.args[0])


class Registry(Mapping[str, T], Generic[T]):
    """``name -> entry`` of one kind; names in registration order unless
    ``order`` (an entry's sort key) is given."""

    def __init__(
        self,
        kind: str,
        discover: Callable[[], object] | None = None,
        order: Callable[[str, T], Any] | None = None,
        lock: threading.RLock | None = None,
    ) -> None:
        """``lock``: another registry's, when this one's discovery is that
        one's (one lock, so two threads never wait for each other)."""
        self.kind = kind
        self._discover = discover
        self._order = order
        self._entries: dict[str, T] = {}
        self.lock = lock or threading.RLock()
        self._discovered = discover is None
        self._discovering = False

    def _ensure(self) -> None:
        if self._discovered:
            return
        with self.lock:  # another thread waits for the discovery to end
            if self._discovering or self._discovered:
                return  # (discovery's own reads, in this thread)
            self._discovering = True
            try:
                assert self._discover is not None
                self._discover()
            finally:
                self._discovering, self._discovered = False, True

    def register(self, name: str, entry: T) -> T:
        """Add ``entry`` under a new ``name`` (ValueError when it is taken)."""
        with self.lock:
            if name in self._entries:
                raise ValueError(f"{self.kind} {name!r} is already registered")
            self._entries[name] = entry
        return entry

    def unregister(self, name: str) -> T:
        with self.lock:
            return self._entries.pop(name)

    @contextmanager
    def registered(self, name: str, entry: T) -> Iterator[T]:
        """An entry that exists for the duration of a ``with`` block (tests)."""
        self._ensure()
        self.register(name, entry)
        try:
            yield entry
        finally:
            self.unregister(name)

    def get(self, name: str, default: object = _REQUIRED) -> T:
        """The entry called ``name``; :class:`UnknownName` (a KeyError)
        naming the known ones when there is none, unless a ``default`` is
        given (then that, as a dict's ``get``)."""
        try:
            return self[name]
        except UnknownName:
            if default is _REQUIRED:
                raise
            return default  # type: ignore[return-value]

    def __getitem__(self, name: str) -> T:
        self._ensure()
        try:
            return self._entries[name]
        except (KeyError, TypeError):
            known = ", ".join(self.names())
            raise UnknownName(f"no {self.kind} {name!r} (known: {known})") from None

    def names(self) -> list[str]:
        """The registered names, in the registry's order."""
        return [name for name, _ in self.items()]

    def entries(self) -> list[T]:
        return [entry for _, entry in self.items()]

    def items(self) -> list[tuple[str, T]]:  # type: ignore[override]
        self._ensure()
        with self.lock:
            found = list(self._entries.items())
        if self._order is not None:
            order = self._order
            found.sort(key=lambda item: order(item[0], item[1]))
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        self._ensure()
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        self._ensure()
        try:
            return name in self._entries
        except TypeError:  # an unhashable name (a user's list) is no name
            return False

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}: {', '.join(self.names())})"
