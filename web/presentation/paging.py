"""Paging of the dashboard's and the exploration pages' tables: a page number
from the query string, and what ``_pager.html`` reads."""

from __future__ import annotations

PAGE_SIZE = 50


def page_number(raw: str | None) -> int:
    """A page from the query string; anything else is page 1.

    >>> page_number("3"), page_number("²"), page_number("-1"), page_number(None)
    (3, 1, 1, 1)
    """
    if not raw or not (raw.isascii() and raw.isdecimal()):
        return 1
    return max(1, min(int(raw), 10**9))


def paged(total: int, page: int, size: int = PAGE_SIZE) -> dict:
    """What ``_pager.html`` reads, with the offset of the page.

    >>> paged(101, 9, 50)["page"], paged(101, 9, 50)["pages"], paged(0, 1)["pages"]
    (3, 3, 1)
    """
    pages = max(1, -(-total // size))
    page = min(page, pages)
    return {"page": page, "pages": pages, "total": total,
            "offset": (page - 1) * size, "size": size}  # fmt: skip
