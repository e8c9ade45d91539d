"""Small SQL helpers the query modules share."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import islice
from typing import cast

from sqlalchemy import Table

from store.models import Base


def table_of(model: type[Base]) -> Table:
    """The model's table. Every model here is mapped to a ``Table``; SQLAlchemy
    types ``__table__`` as any ``FromClause`` (a model may map a subquery)."""
    return cast(Table, model.__table__)


def batched(items: Iterable, size: int) -> Iterator[list]:
    """Lists of up to ``size`` items (``itertools.batched`` is Python 3.12+)."""
    iterator = iter(items)
    while part := list(islice(iterator, size)):
        yield part
