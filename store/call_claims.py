"""Claims on judge requests under way (``store.models.JudgeCallClaim``).

A request is paid once per cache key while its verdict can still come: the
worker that claims the key sends it; another that asks the same question
(a redelivered chunk, a new lease holder while the old one's calls are
still out) finds the claim and waits for the verdict in the cache. A claim
ends when its holder has the outcome (``release``), or at its deadline, the
longest its request can take, after which its holder is taken to have died
with it and the key may be claimed again.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from sqlalchemy import delete, or_, select

from store.database import Repository
from store.models import JudgeCallClaim, utcnow
from store.sql import table_of


class ClaimQueries(Repository):
    """Claims on judge requests under way, so none is paid twice."""

    def claim_requests(
        self,
        keys: Iterable[str],
        holder: str,
        until: datetime,
        gone: Iterable[str] = (),
    ) -> set[str]:
        """The keys claimed for ``holder`` (new, expired, its own, or of a
        holder known ``gone``); the others are under way elsewhere."""
        keys = sorted(set(keys))
        if not keys:
            return set()
        table = table_of(JudgeCallClaim)
        insert = self._insert(table)
        mine = [holder, *gone]
        stmt = insert.on_conflict_do_update(
            index_elements=["key"],
            set_={"holder": insert.excluded.holder, "until": insert.excluded.until},
            # (no IN: an expanding parameter cannot go into an executemany)
            where=or_(table.c.until < utcnow(), *(table.c.holder == h for h in mine)),
        ).returning(table.c.key)
        rows = [{"key": key, "holder": holder, "until": until} for key in keys]
        with self.engine.begin() as conn:
            return {row.key for row in conn.execute(stmt, rows)}

    def requests_claimed(self, keys: Iterable[str]) -> dict[str, str]:
        """Of ``keys``, those still claimed (by anyone, before their
        deadline), with their holders."""
        keys = list(set(keys))
        if not keys:
            return {}
        table = table_of(JudgeCallClaim)
        query = select(table.c.key, table.c.holder).where(
            table.c.key.in_(keys), table.c.until >= utcnow()
        )
        with self.engine.connect() as conn:
            return {row.key: row.holder for row in conn.execute(query)}

    def release_requests(self, keys: Iterable[str], holder: str) -> None:
        keys = list(set(keys))
        if keys:
            table = table_of(JudgeCallClaim)
            stmt = delete(table).where(table.c.key.in_(keys), table.c.holder == holder)
            with self.engine.begin() as conn:
                conn.execute(stmt)

    def release_holder(self, holder: str) -> int:
        """End every claim of ``holder`` (an attempt that failed): how many."""
        table = table_of(JudgeCallClaim)
        with self.engine.begin() as conn:
            return conn.execute(delete(table).where(table.c.holder == holder)).rowcount
