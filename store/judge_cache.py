"""The judge cache: verdicts by content-addressed key, scoped per team, and
the keys each run wrote or read (so deleting a run deletes what only it
used)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from functools import cached_property
from typing import Any, Protocol

from sqlalchemy import Row, bindparam, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.sql.dml import Insert, Update
from sqlalchemy.sql.selectable import Select

from core.holders import gone
from core.status import StorageUnavailable
from store.database import Repository
from store.models import (
    JudgeCacheEntry,
    Run,
    RunCacheKey,
    utcnow,
)
from store.sql import table_of

# a cached verdict as read: (key, reply, parsed), Core rows with attributes
CachedRow = Row[str, str, dict[str, Any]]


class CacheQueries(Repository):
    """Cached judge verdicts, keyed by request."""

    def cache_get(self, keys: Iterable[str]) -> dict[str, CachedRow]:
        """``{key: row}``; rows carry ``.reply`` and ``.parsed`` (Core rows:
        no ORM identity map for thousands of cache hits per chunk)."""
        keys = list(set(keys))
        if not keys:
            return {}
        table = JudgeCacheEntry.__table__
        query = select(table.c.key, table.c.reply, table.c.parsed).where(
            table.c.key.in_(keys)
        )
        with self.engine.connect() as conn:
            return {row.key: row for row in conn.execute(query)}

    # The statements of a put, built once: a worker puts each verdict as it
    # is read (judge_client/keeper.py), and building them per put was a
    # fifth of its CPU (issue 61 item 8).
    @cached_property
    def _put_entries(self) -> Insert:
        return self._insert(table_of(JudgeCacheEntry)).on_conflict_do_nothing(
            index_elements=["key"]
        )

    @cached_property
    def _put_owned(self) -> Insert:
        return self._insert(table_of(RunCacheKey)).on_conflict_do_nothing(
            index_elements=["run_id", "key"]
        )

    def cache_put(
        self, entries: Iterable[dict[str, Any]], run_id: str | None = None
    ) -> None:
        """Store verdicts; with ``run_id``, together with the run's record of
        them, in one transaction that first locks the run: a run deleted
        meanwhile gets no entries (none is left behind without an owner)."""
        entries = list(entries)
        if not entries:
            return
        with self.engine.begin() as conn:
            if run_id is not None and not _run_alive(conn, run_id):
                return  # deleted: nothing of it is written
            conn.execute(self._put_entries, entries)
            if run_id is not None:
                keys = [
                    {"run_id": run_id, "key": key}
                    for key in {e["key"] for e in entries}
                ]
                conn.execute(self._put_owned, keys)

    def record_cache_keys(self, run_id: str, keys: Iterable[str]) -> None:
        """Remember that a run wrote or read these judge cache entries."""
        rows = [{"run_id": run_id, "key": key} for key in set(keys)]
        if rows:
            stmt = self._insert(RunCacheKey).on_conflict_do_nothing(
                index_elements=["run_id", "key"]
            )
            with self.engine.begin() as conn:
                conn.execute(stmt, rows)


_RUNS = table_of(Run)
# (built once, the run a parameter: see CacheQueries._put_entries)
_LOCK_RUN: Select[tuple[str]] = (
    select(_RUNS.c.id)
    .where(_RUNS.c.id == bindparam("alive_id"))
    .with_for_update(key_share=True)
)
# SQLite's lock is a write that changes nothing: ``done = done``, a column no
# index or foreign key names. ``id = id`` rewrote the key that every table of a
# run refers to, and SQLite then checked each of them for rows: 1.0 of the
# 1.1 ms of CPU a one-verdict put took (0.04 ms now; issue 61 item 8).
_TOUCH_RUN: Update = (
    update(_RUNS).where(_RUNS.c.id == bindparam("alive_id")).values(done=_RUNS.c.done)
)


def _run_alive(conn: Connection, run_id: str) -> bool:
    """Whether the run exists, locked against its deletion until the
    transaction ends. PostgreSQL: FOR KEY SHARE, which waits for a deletion
    but not for the progress updates that lock the run's row all the time;
    SQLite: a write, which takes the database's write lock first."""
    if conn.dialect.name == "postgresql":
        return conn.execute(_LOCK_RUN, {"alive_id": run_id}).first() is not None
    return conn.execute(_TOUCH_RUN, {"alive_id": run_id}).rowcount > 0


class CacheStore(Protocol):
    """What :class:`JudgeCache` asks of ``Storage`` (``CacheQueries`` and
    ``store.call_claims.ClaimQueries``)."""

    def cache_get(self, keys: Iterable[str]) -> dict[str, CachedRow]: ...
    def cache_put(
        self, entries: Iterable[dict[str, Any]], run_id: str | None = None
    ) -> None: ...
    def record_cache_keys(self, run_id: str, keys: Iterable[str]) -> None: ...
    def claim_requests(
        self,
        keys: Iterable[str],
        holder: str,
        until: datetime,
        gone: Iterable[str] = (),
    ) -> set[str]: ...
    def requests_claimed(self, keys: Iterable[str]) -> dict[str, str]: ...
    def release_requests(self, keys: Iterable[str], holder: str) -> None: ...
    def release_holder(self, holder: str) -> int: ...


class JudgeCache:
    """The judge's view of the cache: ``get(keys)`` and ``put(entries)``.
    With a ``run_id``, the entries the run wrote or read are recorded, so
    deleting the run can delete the ones no other run used.

    Entries are kept per ``scope`` (the run's workspace, else its client):
    a verdict cached for one team is never served to another, so nobody
    learns from hit counts which items someone else had judged."""

    def __init__(
        self,
        store: CacheStore,
        run_id: str | None = None,
        scope: str = "",
        holder: str = "",
        claim_s: float = 0.0,
    ):
        self.store, self.run_id, self.scope = store, run_id, scope
        # with a holder, requests under way are claimed (store/call_claims.py)
        # for claim_s seconds, the longest one request with its retries takes
        self.holder, self.claim_s = holder, claim_s

    def _scoped(self, key: str) -> str:
        if not self.scope:
            return key
        return hashlib.sha256(f"{self.scope}\n{key}".encode()).hexdigest()

    def get(self, keys: Iterable[str]) -> dict[str, CachedRow]:
        scoped = {self._scoped(key): key for key in keys}
        with _storage():
            found = self.store.cache_get(scoped)
            if self.run_id and found:
                self.store.record_cache_keys(self.run_id, found)
        return {scoped[key]: entry for key, entry in found.items()}

    def put(self, entries: Iterable[dict[str, Any]]) -> None:
        scoped = [{**entry, "key": self._scoped(entry["key"])} for entry in entries]
        with _storage():
            self.store.cache_put(scoped, self.run_id)

    def claim(self, keys: Iterable[str]) -> set[str]:
        """The keys whose requests this worker is to make: unclaimed, past
        their deadline, or claimed by a process known to be gone (killed on
        this host); without a holder, all of them."""
        if not self.holder:
            return set(keys)
        scoped = {self._scoped(key): key for key in keys}
        until = utcnow() + timedelta(seconds=self.claim_s)
        with _storage():
            holders = set(self.store.requests_claimed(scoped).values())
            dead = [h for h in holders if h != self.holder and gone(h)]
            got = self.store.claim_requests(scoped, self.holder, until, dead)
        return {scoped[key] for key in got}

    def claimed(self, keys: Iterable[str]) -> set[str]:
        """Of ``keys``, those under way in another live process now."""
        if not self.holder:
            return set()
        scoped = {self._scoped(key): key for key in keys}
        with _storage():
            found = self.store.requests_claimed(scoped)
        return {scoped[key] for key, holder in found.items() if not gone(holder)}

    def release(self, keys: Iterable[str]) -> None:
        """End this holder's claims among ``keys`` (its outcomes are in)."""
        if not self.holder:
            return
        scoped = [self._scoped(key) for key in keys]
        with _storage():
            self.store.release_requests(scoped, self.holder)


@contextmanager
def _storage() -> Iterator[None]:
    """A failure of the cache's database is the storage's, never the suite's
    whose judge asked (``core.status.StorageUnavailable``)."""
    try:
        yield
    except StorageUnavailable:
        raise
    except Exception as exc:
        raise StorageUnavailable.of(exc) from exc
