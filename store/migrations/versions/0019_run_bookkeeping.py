"""A run's bookkeeping in columns (issue 47): the chunks planned, the call
cap of a retry, the reuse key and what a reused run copied leave
``options``, which then holds the run's settings alone (what reuse hashes
and the results header shows). The dashboard's link to the run a retry
retried reads ``retry_of`` (its id), not a token kept in the options.

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
# option key -> column
MOVED = {
    "chunks": "chunks_planned",
    "call_cap": "call_cap",
    "reuse_key": "reuse_key",
    "reused_from": "reused_from",
    "reused_rows": "reused_rows",
}
RUNS = sa.table(
    "runs",
    sa.column("id", sa.String),
    sa.column("options", JSON),
    *(sa.column(column) for column in MOVED.values()),
)


def upgrade() -> None:
    with op.batch_alter_table("runs") as runs:
        runs.add_column(sa.Column("chunks_planned", sa.Integer))
        runs.add_column(sa.Column("call_cap", sa.BigInteger))
        runs.add_column(sa.Column("reuse_key", sa.String(64)))
        runs.add_column(sa.Column("reused_from", sa.String(32)))
        runs.add_column(sa.Column("reused_rows", sa.BigInteger))
        runs.create_index("ix_runs_reuse_key", ["reuse_key"])
    conn = op.get_bind()
    for run_id, options in conn.execute(sa.select(RUNS.c.id, RUNS.c.options)):
        options = dict(options or {})
        moved = {column: options.pop(key, None) for key, column in MOVED.items()}
        options.pop("retry_of", None)  # a token; the column holds the id
        conn.execute(
            RUNS.update().where(RUNS.c.id == run_id).values(options=options, **moved)
        )


def downgrade() -> None:
    conn = op.get_bind()
    for row in conn.execute(sa.select(RUNS)).mappings():
        options = dict(row["options"] or {})
        for key, column in MOVED.items():
            if row[column] is not None:
                options[key] = row[column]
        conn.execute(
            RUNS.update().where(RUNS.c.id == row["id"]).values(options=options)
        )
    with op.batch_alter_table("runs") as runs:
        runs.drop_index("ix_runs_reuse_key")
        for column in MOVED.values():
            runs.drop_column(column)
