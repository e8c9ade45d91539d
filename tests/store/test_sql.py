"""The SQL helpers the query modules share (store/sql.py)."""

from sqlalchemy import Column, MetaData, String, Table, create_engine, insert, select

from store.models import ResultRow
from store.sql import batched, method_position, table_of


def test_batched_cuts_any_iterable_into_lists_of_size_at_most_n():
    assert list(batched(iter(range(7)), 3)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(batched([], 3)) == []


def test_table_of_is_the_model_s_table():
    assert table_of(ResultRow) is ResultRow.__table__


def test_method_position_sorts_as_the_file_gave_the_methods_unknown_last():
    replies = Table("replies", MetaData(), Column("method", String))
    order = method_position(replies.c.method, ["Base", "Ours", "Zeta"])
    engine = create_engine("sqlite://")
    with engine.begin() as conn:
        replies.create(conn)
        conn.execute(
            insert(replies),
            [{"method": m} for m in ("Zeta", "unknown", "Base", "Ours")],
        )
        found = conn.scalars(select(replies.c.method).order_by(order)).all()
    assert found == ["Base", "Ours", "Zeta", "unknown"]
    engine.dispose()
