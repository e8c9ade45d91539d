"""The replies grid's reads (``web/views/replies.py``): a page of replies,
each a (session, round, method) scored for one metric, sorted and filtered
on the server; every row of those replies; and what the judge was asked
and answered for one of them (``store/exchange_models.py``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import Select, func, select, tuple_
from sqlalchemy.engine import Connection

from store.database import Database, Repository
from store.exchange_models import EXCHANGE_KEY, JudgeExchange
from store.models import ROW_DICT_FIELDS, ResultRow, RunSession
from store.sql import batched, filtered_rows, method_position, table_of

# a reply of the grid: (session_id, round, method)
ReplyKey = tuple[str, int, str]
EXCHANGE_FIELDS = ("judge", "metric", "seq", "metrics", "mode", "prompt_version",
                   "sample", "messages", "reply", "status", "cached")  # fmt: skip
ROW_FIELDS = tuple(name for name in ROW_DICT_FIELDS if name != "detail")


class ReplyQueries(Repository):
    """Replies with their scores, and the judge's exchanges behind them."""

    def reply_lines(
        self, run_id: str, filters: Mapping[str, Any], offset: int, limit: int,
        by_value: bool | None = None, methods: Sequence[str] = (),
    ) -> list[tuple[ReplyKey, float | None]]:  # fmt: skip
        """One page of replies with the filtered metric's value (the mean
        of a panel's judges), in the upload's order (sessions as in the
        file, rounds, then ``methods``: the run's, in the file's order), or
        by that value (``by_value``: True high first, False low first;
        missing last)."""
        lines = self._lines(run_id, filters).subquery()
        order = select(RunSession.position).where(
            RunSession.run_id == run_id,
            RunSession.session_id == lines.c.session_id,
        ).scalar_subquery()  # fmt: skip
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
        then in the order the suite asked."""
        session_id, round_, method = reply
        query = (
            select(*(getattr(JudgeExchange, name) for name in EXCHANGE_FIELDS))
            .where(
                JudgeExchange.run_id == run_id,
                JudgeExchange.session_id == session_id,
                JudgeExchange.round == round_,
                JudgeExchange.method == method,
            )
            .order_by(JudgeExchange.judge, JudgeExchange.metric, JudgeExchange.seq)
        )
        with self.engine.connect() as conn:
            return [
                dict(zip(EXCHANGE_FIELDS, found, strict=True))
                for found in conn.execute(query)
            ]


def write_exchanges(
    conn: Connection, database: Database, run_id: str,
    exchanges: Iterable[dict[str, Any]], batch: int = 500,
) -> None:  # fmt: skip
    """Store a chunk's exchanges with its rows (in their transaction); a
    chunk tried again replaces what it wrote before."""
    stmt = database.insert(table_of(JudgeExchange))
    changing = [name for name in EXCHANGE_FIELDS if name not in EXCHANGE_KEY]
    stmt = stmt.on_conflict_do_update(
        index_elements=list(EXCHANGE_KEY),
        set_={name: stmt.excluded[name] for name in changing},
    )
    for part in batched(exchanges, batch):
        conn.execute(stmt, [{**found, "run_id": run_id} for found in part])
