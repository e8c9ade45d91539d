"""The primitive checks the session checker is built from: typed fields,
strings with their length bound, string lists, objects (pure).

Paths travel as tuples and become text only when a problem is reported,
which keeps validation of a large valid file cheap.

>>> format_path(("rounds", 2, "responses", "Ours"))
'rounds[2].responses.Ours'
>>> type_name([1]), type_name(True), type_name(None)
('array', 'boolean', 'null')
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeGuard

from core.problems import Problem
from dataset.limits import Limits

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
WARNING_LINES = 5  # line numbers a grouped warning names

# where a value sits in a line: keys and list indexes from the line's object
KeyPath = tuple[str | int, ...]
# a JSON object as read (its values are any JSON value)
JSONObject = Mapping[str, Any]


class Sink(Protocol):
    """Where the checks report (``dataset.validation``'s collector)."""

    def error(self, problem: Problem) -> None: ...

    def warning(self, problem: Problem) -> None: ...

    def counted_warning(
        self, problem: Problem, count: int, lines: list[int]
    ) -> None: ...


def type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    names: dict[type, str] = {str: "string", list: "array", dict: "object"}
    return names.get(type(value), "value")


def format_path(parts: KeyPath) -> str:
    """``rounds[2].responses.Ours``; odd keys are quoted: ``responses["a b"]``.

    >>> format_path(("rounds", 2, "responses", "Ours"))
    'rounds[2].responses.Ours'
    >>> format_path(("rounds", 0, "responses", "my method"))
    'rounds[0].responses["my method"]'
    """
    text = ""
    for key in parts:
        if isinstance(key, int):
            text += f"[{key}]"
        elif _IDENTIFIER.match(key):
            text += f".{key}" if text else key
        else:
            text += f"[{json.dumps(key, ensure_ascii=False)}]"
    return text


def is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def is_finite_number(value: object) -> TypeGuard[int | float]:
    """Not NaN nor infinite (JSON's 1e999 reads as infinity)."""
    return is_number(value) and math.isfinite(value)


class FieldChecks:
    """Reports problems of one line; subclasses walk the session format."""

    def __init__(self, sink: Sink, limits: Limits | None = None):
        self.sink = sink
        self.limits = limits or Limits()
        self.seen_ids: dict[str, int] = {}
        self.methods: dict[str, None] = {}  # ordered set of the file's methods
        self.replies: dict[str, int] = {}  # method -> rounds it replied to
        self.reply_slots = 0  # rounds with a responses object
        # the lines (sessions) lacking a reply of a method, for its warning:
        # method -> [how many, the first WARNING_LINES]; and the lines with
        # rounds so far, for a method first seen later (it lacks all of them)
        self.lacking: dict[str, list[Any]] = {}
        self.round_lines: list[Any] = [0, []]
        self.line_replies: dict[str, int] = {}  # this line: method -> replies
        self.line_slots = 0  # this line: rounds with a responses object
        self.to_evaluate = 0  # replies of non-blank text (a file with none is refused)
        self.reference_line: int | None = None  # where too many methods were seen
        self.warned_unknown: set[str] = set()  # its first UNKNOWN_KEYS names
        self.line = 0
        self.ok = True

    def error(self, path: KeyPath, code: str, **params: Any) -> None:
        self.ok = False
        self.sink.error(Problem.make(self.line, format_path(path), code, **params))

    def warn(self, path: KeyPath, code: str, **params: Any) -> None:
        self.sink.warning(Problem.make(self.line, format_path(path), code, **params))

    # -- primitives -------------------------------------------------------
    def _typed(
        self,
        parent: JSONObject,
        base: KeyPath,
        key: str,
        kinds: Callable[[Any], bool],
        expected: str,
        required: bool = False,
    ) -> Any:
        path = (*base, key)
        if key not in parent:
            if required:
                self.error(path, "missing_field")
            return None
        value = parent[key]
        if not kinds(value):
            self.error(path, "wrong_type", expected=expected, found=type_name(value))
            return None
        return value

    def _string(
        self,
        parent: JSONObject,
        base: KeyPath,
        key: str,
        required: bool = False,
        non_empty: bool = False,
        limit: int | None = None,
    ) -> str | None:
        value: str | None = self._typed(
            parent, base, key, lambda v: isinstance(v, str), "string", required
        )
        if non_empty and isinstance(value, str) and not value.strip():
            self.error((*base, key), "empty_value")
        self._length(value, (*base, key), limit)
        return value

    def _length(self, value: object, path: KeyPath, limit: int | None = None) -> None:
        limit = limit or self.limits.max_text_chars
        if isinstance(value, str) and len(value) > limit:
            self.error(path, "too_long", length=len(value), limit=limit)

    def _string_list(
        self,
        parent: JSONObject,
        base: KeyPath,
        key: str,
        allow_string: bool = False,
        numbers: bool = False,
    ) -> None:
        """An array of strings (or, ``allow_string``, one string); with
        ``numbers`` a JSON number stands for its text (slot values, 22 for
        "22": :func:`value_text`)."""
        value = parent.get(key)
        if key not in parent:
            return
        if numbers and is_finite_number(value):
            return
        if allow_string and isinstance(value, str):
            self._length(value, (*base, key))
            return
        expected = "string or array of strings" if allow_string else "array of strings"
        if not isinstance(value, list):
            self.error(
                (*base, key),
                "wrong_type",
                expected=expected,
                found=type_name(value),
            )
            return
        if len(value) > self.limits.max_list_items:
            self.error(
                (*base, key),
                "too_many_items",
                count=len(value),
                limit=self.limits.max_list_items,
            )
            return
        for index, item in enumerate(value):
            if numbers and is_finite_number(item):
                continue
            if not isinstance(item, str):
                path = (*base, key, index)
                self.error(path, "wrong_type", expected="string", found=type_name(item))
            else:
                self._length(item, (*base, key, index))
        total = sum(len(item) for item in value if isinstance(item, str))
        if total > self.limits.max_text_chars:  # together they reach one prompt
            self.error(
                (*base, key),
                "list_too_long",
                length=total,
                limit=self.limits.max_text_chars,
            )

    def _object(
        self, parent: JSONObject, base: KeyPath, key: str, required: bool = False
    ) -> dict[str, Any] | None:
        found: dict[str, Any] | None = self._typed(
            parent, base, key, lambda v: isinstance(v, dict), "object", required
        )
        return found


def value_text(value: object) -> str | None:
    """A slot value as text: a string as it is, a JSON number as its decimal
    text (22 -> "22", 2.5 -> "2.5"); None for anything else.

    >>> value_text(22), value_text(2.5), value_text("22"), value_text(True)
    ('22', '2.5', '22', None)
    """
    if isinstance(value, str):
        return value
    return repr(value) if is_finite_number(value) else None
