"""Chunks become the source of truth of a run's work (fair dispatch, heartbeats,
the watchdog); runs record a translatable failure, their client, the run they
retry and how many judge prompts had their history shortened.

Chunks recorded by earlier releases are finished ones: they become ``done``.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("runs") as runs:
        runs.add_column(sa.Column("failure", JSON))
        runs.add_column(sa.Column("client", sa.String(64)))
        runs.add_column(sa.Column("retry_of", sa.String(32)))
        runs.add_column(
            sa.Column(
                "history_truncated", sa.BigInteger, nullable=False, server_default="0"
            )
        )
        runs.create_index("ix_runs_retry_of", ["retry_of"])
    with op.batch_alter_table("run_chunks") as chunks:
        chunks.add_column(sa.Column("start", sa.BigInteger))
        chunks.add_column(sa.Column("end", sa.BigInteger))
        chunks.add_column(
            sa.Column("units", sa.Integer, nullable=False, server_default="0")
        )
        chunks.add_column(
            sa.Column("state", sa.String(16), nullable=False, server_default="done")
        )
        chunks.add_column(
            sa.Column("attempts", sa.Integer, nullable=False, server_default="0")
        )
        chunks.add_column(sa.Column("sent_at", sa.DateTime(timezone=True)))
        chunks.add_column(sa.Column("beat_at", sa.DateTime(timezone=True)))
        chunks.add_column(sa.Column("error", sa.Text))
        chunks.create_index("ix_run_chunks_state", ["state", "run_id"])


def downgrade() -> None:
    with op.batch_alter_table("run_chunks") as chunks:
        chunks.drop_index("ix_run_chunks_state")
        for column in (
            "error",
            "beat_at",
            "sent_at",
            "attempts",
            "state",
            "units",
            "end",
            "start",
        ):
            chunks.drop_column(column)
    with op.batch_alter_table("runs") as runs:
        runs.drop_index("ix_runs_retry_of")
        for column in ("history_truncated", "retry_of", "client", "failure"):
            runs.drop_column(column)
