"""Numbers as a reader should see them, in the reader's locale: counts as
integers, tiny p-values as ``< 0.0001``, no negative zero, signed
differences, rates optionally as percentages (differences of rates then in
percentage points). Every template formats numbers through these.

>>> from flask import Flask
>>> from flask_babel import Babel
>>> app = Flask(__name__); _ = Babel(app)
>>> with app.test_request_context():
...     number(-0.0004), signed(0.1612), signed(-0.004), p_value(0.00002)
('0.00', '+0.16', '0.00', '< 0.0001')
>>> with app.test_request_context():
...     metric_number("slot_tp", 8.0), metric_number("binary_rate", 0.25, True)
('8', '25.0%')
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from flask_babel import format_decimal, format_percent

from metrics.registry import spec
from metrics.suite import Format
from translations import _

if TYPE_CHECKING:  # for the checker only: no run-time dependency
    from typing_extensions import TypeIs

P_FLOOR = 0.0001  # smaller p-values are shown as "< 0.0001"
MINUS = "\u2212"  # a real minus sign, as typeset


def _finite(value: object) -> TypeIs[int | float]:
    return isinstance(value, int | float) and math.isfinite(value)


def number(value: object, digits: int = 2) -> str:
    """``value`` rounded to ``digits``; a value that rounds to zero is shown
    as zero, never "-0.00"."""
    if not _finite(value):
        return "—"
    rounded = round(float(value), digits) + 0.0  # + 0.0 turns -0.0 into 0.0
    pattern = f"#,##0.{'0' * digits}" if digits else "#,##0"
    shown: str = format_decimal(rounded, format=pattern)  # flask-babel: untyped
    return shown


def signed(value: object, digits: int = 2) -> str:
    """A difference with its sign ("+0.16", "−0.08"; zero has none)."""
    shown = number(value, digits)
    if not _finite(value) or round(float(value), digits) == 0:
        return shown
    return f"+{shown}" if value > 0 else MINUS + shown.lstrip("-")


def count(value: object) -> str:
    return number(value, 0)


def p_value(value: object) -> str:
    if not _finite(value):
        return "—"
    if value < P_FLOOR:
        return "< " + number(P_FLOOR, 4)
    return number(value, 4)


def is_rate(metric_id: str) -> bool:
    metric = spec(metric_id)
    return metric is not None and metric.format == Format.RATE


def metric_number(metric_id: str, value: object, percent: bool = False) -> str:
    """A metric's value in its display format (see ``metrics.suite.Format``)."""
    metric = spec(metric_id)
    if metric is not None and metric.format == Format.COUNT:
        return count(value)
    if percent and is_rate(metric_id) and _finite(value):
        shown: str = format_percent(value, format="#,##0.0%")  # flask-babel: untyped
        return shown
    return number(value)


def metric_difference(metric_id: str, value: object, percent: bool = False) -> str:
    """A difference of a metric's values: rates shown as percentages differ
    in percentage points."""
    if percent and is_rate(metric_id) and _finite(value):
        return _("%(value)s pp", value=signed(value * 100, 1))
    digits = 0 if (m := spec(metric_id)) and m.format == Format.COUNT else 2
    return signed(value, digits)


def display_key(metric_id: str, value: object, percent: bool = False) -> float | None:
    """The value rounded as it is shown, for deciding ties: methods that
    look equal on the page are equal (no bold "best" among equal numbers).

    >>> display_key("nvcs_avg", 0.5612), display_key("binary_rate", 0.25612, True)
    (0.56, 0.256)
    """
    if not _finite(value):
        return None
    metric = spec(metric_id)
    digits = 0 if metric is not None and metric.format == Format.COUNT else 2
    if percent and is_rate(metric_id):
        digits = 3  # one decimal of a percentage
    return round(float(value), digits) + 0.0


GLOBALS: dict[str, Callable[..., str]] = {
    "number": number,
    "signed": signed,
    "count": count,
    "p_value": p_value,
    "metric_number": metric_number,
    "metric_difference": metric_difference,
}
