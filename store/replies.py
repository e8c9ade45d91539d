"""The replies grid's reads (``web/views/replies.py``): a page of replies,
each a (session, round, method) scored for one metric, sorted and filtered
on the server; every row of those replies; and what the judge was asked
and answered for one of them (``store/exchange_models.py``), with the
writes of those exchanges: each prompt and reply stored once, and gone
with the last exchange naming it."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import Select, delete, exists, func, select, tuple_
from sqlalchemy.engine import Connection

from store.database import Database, Repository
from store.exchange_models import EXCHANGE_KEY, ExchangeText, JudgeExchange
from store.models import ROW_DICT_FIELDS, ResultRow, RunSession
from store.sql import batched, filtered_rows, method_position, table_of

# a reply of the grid: (session_id, round, method)
ReplyKey = tuple[str, int, str]
EXCHANGE_FIELDS = (
    "judge",
    "metric",
    "seq",
    "metrics",
    "mode",
    "prompt_version",
    "sample",
    "messages",
    "reply",
    "status",
    "cached",
)
TEXT_FIELDS = ("messages", "reply")  # an ExchangeText's, named by a row
ROW_FIELDS = tuple(name for name in ROW_DICT_FIELDS if name != "detail")


class ReplyQueries(Repository):
    """Replies with their scores, and the judge's exchanges behind them."""

    def reply_lines(
        self,
        run_id: str,
        filters: Mapping[str, Any],
        offset: int,
        limit: int,
        by_value: bool | None = None,
        methods: Sequence[str] = (),
    ) -> list[tuple[ReplyKey, float | None]]:
        """One page of replies with the filtered metric's value (the mean
        of a panel's judges), in the upload's order (sessions as in the
        file, rounds, then ``methods``: the run's, in the file's order), or
        by that value (``by_value``: True high first, False low first;
        missing last)."""
        lines = self._lines(run_id, filters).subquery()
        order = (
            select(RunSession.position)
            .where(
                RunSession.run_id == run_id,
                RunSession.session_id == lines.c.session_id,
            )
            .scalar_subquery()
        )
        in_file = method_position(lines.c.method, methods)
        keys = [order.nulls_last(), lines.c.session_id, lines.c.round, in_file]
        keys.append(lines.c.method)  # methods the list lacks: by name
        if by_value is not None:
            value = lines.c.value.desc() if by_value else lines.c.value.asc()
            keys.insert(0, value.nulls_last())
        query = select(lines).order_by(*keys).offset(offset).limit(limit)
        with self.engine.connect() as conn:
            return [((s, r, m), v) for s, r, m, v in conn.execute(query)]

    def count_reply_lines(self, run_id: str, filters: Mapping[str, Any]) -> int:
        query = select(func.count()).select_from(
            self._lines(run_id, filters).subquery()
        )
        with self.engine.connect() as conn:
            return int(conn.execute(query).scalar_one())

    def _lines(self, run_id: str, filters: Mapping[str, Any]) -> Select[Any]:
        key = (ResultRow.session_id, ResultRow.round, ResultRow.method)
        query = select(*key, func.avg(ResultRow.value).label("value"))
        query = filtered_rows(query.where(ResultRow.run_id == run_id), filters)
        return query.group_by(*key)

    def rows_of_replies(
        self, run_id: str, replies: Sequence[ReplyKey]
    ) -> list[dict[str, Any]]:
        """Every row of these replies (all metrics, all judges), no details."""
        if not replies:
            return []
        key = tuple_(ResultRow.session_id, ResultRow.round, ResultRow.method)
        query = select(*(getattr(ResultRow, name) for name in ROW_FIELDS)).where(
            ResultRow.run_id == run_id, key.in_(list(replies))
        )
        with self.engine.connect() as conn:
            return [
                dict(zip(ROW_FIELDS, found, strict=True))
                for found in conn.execute(query)
            ]

    def exchanges_of(self, run_id: str, reply: ReplyKey) -> list[dict[str, Any]]:
        """What the judges were asked and answered for one reply, by judge,
        then in the order the suite asked (the prompt and reply from the
        text the row names; a row stored before 0026 holds its own)."""
        session_id, round_, method = reply
        shared = [
            getattr(ExchangeText, name).label(f"t_{name}") for name in TEXT_FIELDS
        ]
        query = (
            select(
                *(getattr(JudgeExchange, name) for name in EXCHANGE_FIELDS),
                JudgeExchange.text_key,
                *shared,
            )
            .outerjoin(ExchangeText, ExchangeText.key == JudgeExchange.text_key)
            .where(
                JudgeExchange.run_id == run_id,
                JudgeExchange.session_id == session_id,
                JudgeExchange.round == round_,
                JudgeExchange.method == method,
            )
            .order_by(JudgeExchange.judge, JudgeExchange.metric, JudgeExchange.seq)
        )
        found = []
        with self.engine.connect() as conn:
            for row in conn.execute(query).mappings():
                exchange = {name: row[name] for name in EXCHANGE_FIELDS}
                if row["text_key"] is not None:
                    exchange.update({name: row[f"t_{name}"] for name in TEXT_FIELDS})
                found.append(exchange)
        return found


def text_key(messages: Any, reply: str | None) -> str:
    """The key of an exchange's text: SHA-256 of the prompt and the reply
    as canonical JSON.

    >>> key = text_key([{"role": "user", "content": "x"}], "y")
    >>> key == text_key([{"content": "x", "role": "user"}], "y"), len(key)
    (True, 64)
    >>> key == text_key([{"role": "user", "content": "x"}], None)
    False
    """
    canonical = json.dumps(
        [messages, reply], sort_keys=True, ensure_ascii=False, separators=(",", ":")
    )
    # a lone surrogate (a reply's "\\ud800") hashes as it is
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def write_exchanges(
    conn: Connection,
    database: Database,
    run_id: str,
    exchanges: Iterable[dict[str, Any]],
    batch: int = 500,
) -> None:
    """Store a chunk's exchanges with its rows (in their transaction): each
    row names its prompt and reply, stored unless already there. A chunk
    tried again replaces what it wrote before; a text only the replaced
    rows named goes."""
    # messages and reply are left out: SQL NULL (a JSON column would store
    # None as JSON null), also over a row stored before 0026
    changing = [
        name for name in (*EXCHANGE_FIELDS, "text_key") if name not in EXCHANGE_KEY
    ]
    stmt = database.upsert(table_of(JudgeExchange), EXCHANGE_KEY, changing)
    texts: dict[str, dict[str, Any]] = {}
    rows = []
    for found in exchanges:
        row = {**found, "run_id": run_id}
        messages, reply = row.pop("messages"), row.pop("reply")
        row["text_key"] = key = text_key(messages, reply)
        texts.setdefault(key, {"key": key, "messages": messages, "reply": reply})
        rows.append(row)
    # the texts first, all in key order, as a deletion locks them (no
    # deadlock between the two)
    for keys in batched(sorted(texts), batch):
        _keep_texts(conn, database, [texts[key] for key in keys])
    replaced: set[str] = set()
    for part in batched(rows, batch):
        replaced |= _text_keys_of(conn, run_id, part)
        conn.execute(stmt, part)
    drop_unused_texts(conn, replaced - texts.keys(), wait=False)


def _text_keys_of(
    conn: Connection, run_id: str, rows: Sequence[dict[str, Any]]
) -> set[str]:
    """The texts the run's stored exchanges with these rows' keys name."""
    key = tuple_(*(getattr(JudgeExchange, name) for name in EXCHANGE_KEY[1:]))
    query = select(JudgeExchange.text_key).where(
        JudgeExchange.run_id == run_id,
        JudgeExchange.text_key.is_not(None),
        key.in_([tuple(row[name] for name in EXCHANGE_KEY[1:]) for row in rows]),
    )
    return {found for found in conn.execute(query).scalars() if found is not None}


def _keep_texts(
    conn: Connection, database: Database, texts: Sequence[dict[str, Any]]
) -> None:
    """Store the texts not stored yet; on PostgreSQL the stored ones are
    locked (FOR KEY SHARE, in key order) until the transaction ends, so a
    deletion (``drop_unused_texts``) cannot take one this transaction is
    about to name. One a deletion took meanwhile is stored again."""
    have: set[str] = set()
    if conn.dialect.name == "postgresql":
        table = table_of(ExchangeText)
        query = (
            select(table.c.key)
            .where(table.c.key.in_([found["key"] for found in texts]))
            .order_by(table.c.key)
            .with_for_update(key_share=True)
        )
        have = set(conn.execute(query).scalars())
    missing = [found for found in texts if found["key"] not in have]
    if missing:
        stmt = database.insert(table_of(ExchangeText)).on_conflict_do_nothing(
            index_elements=["key"]
        )
        conn.execute(stmt, missing)


def delete_exchanges_of(conn: Connection, run_id: str) -> None:
    """Delete a run's exchanges and the texts no other exchange names
    (``store/deletion.py``, in its transaction)."""
    query = (
        select(JudgeExchange.text_key)
        .where(JudgeExchange.run_id == run_id, JudgeExchange.text_key.is_not(None))
        .distinct()
    )
    named = {key for key in conn.execute(query).scalars() if key is not None}
    conn.execute(delete(JudgeExchange).where(JudgeExchange.run_id == run_id))
    drop_unused_texts(conn, named)


def drop_unused_texts(
    conn: Connection, keys: Collection[str], wait: bool = True, batch: int = 500
) -> None:
    """Delete the texts among ``keys`` that no exchange names. On
    PostgreSQL each is locked first (FOR UPDATE, in key order), which waits
    for a transaction naming it (``_keep_texts``) to end, so the check that
    follows sees its rows. ``wait=False`` skips a text locked by another
    transaction instead (it is in use, or being deleted by it)."""
    table = table_of(ExchangeText)
    named = exists().where(JudgeExchange.text_key == table.c.key)
    for part in batched(sorted(keys), batch):
        candidates = part
        if conn.dialect.name == "postgresql":
            query = (
                select(table.c.key)
                .where(table.c.key.in_(part))
                .order_by(table.c.key)
                .with_for_update(skip_locked=not wait)
            )
            candidates = list(conn.execute(query).scalars())
        if candidates:
            conn.execute(delete(table).where(table.c.key.in_(candidates), ~named))
