"""Paging of the dashboard's and the exploration pages' tables: a page number
from the query string, and what ``_pager.html`` reads."""

from __future__ import annotations

PAGE_SIZE = 50


def page_number(raw: str | None) -> int:
    """A page from the query string; anything else is page 1.

    >>> page_number("3"), page_number("²"), page_number("-1"), page_number(None)
    (3, 1, 1, 1)
    >>> page_number("9" * 5001)  # past the last page, as any page number past it
    1000000000
    """
    if not raw or not (raw.isascii() and raw.isdecimal()):
        return 1
    found = decimal(raw, 10**9)
    return 10**9 if found is None else max(1, found)


def decimal(raw: str | None, high: int) -> int | None:
    """A whole number from 0 to ``high`` in ASCII digits (a query or form
    value), else None: never "²" (``isdigit`` is true, ``int`` raises) and
    never more digits than ``high`` has (``int`` refuses 4,301 digits, and a
    database column holds 32 or 64 bits).

    >>> decimal("0042", 100), decimal("9" * 5001, 10**9), decimal("-1", 9)
    (42, None, None)
    >>> decimal("²", 9), decimal("", 9), decimal("2147483648", 2**31 - 1)
    (None, None, None)
    """
    if not raw or not (raw.isascii() and raw.isdecimal()):
        return None
    digits = raw.lstrip("0") or "0"
    if len(digits) > len(str(high)):
        return None
    value = int(digits)
    return value if value <= high else None


def paged(total: int, page: int, size: int = PAGE_SIZE) -> dict[str, int]:
    """What ``_pager.html`` reads, with the offset of the page.

    >>> paged(101, 9, 50)["page"], paged(101, 9, 50)["pages"], paged(0, 1)["pages"]
    (3, 3, 1)
    """
    pages = max(1, -(-total // size))
    page = min(page, pages)
    return {
        "page": page,
        "pages": pages,
        "total": total,
        "offset": (page - 1) * size,
        "size": size,
    }
