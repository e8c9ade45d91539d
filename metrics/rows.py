"""The tidy result row every suite emits (one shape, one place).

>>> result_row({"session_id": "s", "round": 1, "method": "M"}, "nvcs", 0.5)["status"]
'ok'
>>> result_row({"session_id": "s", "round": None, "method": "M"}, "ora", None, note="empty target order")["status"]
'unscored'
"""

from __future__ import annotations


def result_row(
    key: dict,
    metric: str,
    value: float | None,
    status: str | None = None,
    note: str | None = None,
    detail: dict | None = None,
) -> dict:
    """``key`` holds session_id, round (None = session level) and method. The
    status defaults to ``ok`` with a value and ``unscored`` without one, so a
    missing number is never mistaken for a score."""
    if status is None:
        status = "ok" if value is not None else "unscored"
    return {
        **key,
        "metric": metric,
        "value": value,
        "status": status,
        "note": note,
        "detail": detail,
    }
