"""JSON from users, read within bounds (pure): a refusal is a ``ValueError``
that says what is wrong, never a ``RecursionError`` (a value nested 100,000
deep) or a traceback (an integer of more than 4,300 digits), so every
caller answers 400 with the problem instead of 500.

>>> loads('{"a": [1, 2]}')
{'a': [1, 2]}
>>> loads("[" * 100_000)
Traceback (most recent call last):
 ...
dataset.user_json.Unreadable: nested too deeply to read
>>> loads("9" * 5000)
Traceback (most recent call last):
 ...
dataset.user_json.Unreadable: an integer of more than 4,300 digits
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

_T = TypeVar("_T")

_DECODER = json.JSONDecoder()


class Unreadable(ValueError):
    """Not JSON we read; the message says why (line and column if known)."""


def loads(text: str | bytes) -> Any:
    """``json.loads`` (bytes as UTF-8, as json reads them), refusals ``Unreadable``."""
    return _read(json.loads, text)


def raw_decode(text: str, start: int = 0) -> tuple[Any, int]:
    """``(value, end)`` of the JSON value at ``start`` (``JSONDecoder.raw_decode``)."""
    return _read(_DECODER.raw_decode, text, start)


def _read(decode: Callable[..., _T], *args: object) -> _T:
    try:
        return decode(*args)
    except RecursionError:
        raise Unreadable("nested too deeply to read") from None
    except json.JSONDecodeError as exc:
        raise Unreadable(f"{exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    except ValueError as exc:  # int digits: "Exceeds the limit (4300 digits) ..."
        if "digits" in str(exc):
            raise Unreadable("an integer of more than 4,300 digits") from None
        raise Unreadable(str(exc)[:200]) from None
