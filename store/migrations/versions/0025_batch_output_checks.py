"""A batch's output read defensively (issue 57): the requests each batch
file sent (an output line naming another ``custom_id`` is not stored, and
a request no line answered is known to be missing), the lines skipped and
the requests missing per batch, and the steps of a batch-mode run that
failed in a row with the last one's error (the third fails the batch part).
Batches sent before have no listed requests: their lines are read as before.

Revision ID: 0025
Revises: 0024 (run stalls)
Create Date: 2026-12-07
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0025"
down_revision = "0024"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
AUTO_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "batch_requests",
        sa.Column(
            "run_id",
            sa.String(32),
            sa.ForeignKey("runs.id", ondelete="CASCADE"),
            primary_key=True,
            nullable=False,
        ),
        sa.Column("custom_id", sa.String(64), primary_key=True, nullable=False),
        sa.Column("batch", AUTO_ID, nullable=False),
    )
    op.create_index("ix_batch_requests_batch", "batch_requests", ["batch"])
    with op.batch_alter_table("batch_runs") as batch:
        batch.add_column(
            sa.Column("failures", sa.Integer(), nullable=False, server_default="0")
        )
        batch.add_column(sa.Column("error", sa.Text(), nullable=True))
    with op.batch_alter_table("judge_batches") as batch:
        batch.add_column(sa.Column("skipped", JSON, nullable=True))
        batch.add_column(
            sa.Column("missing", sa.Integer(), nullable=False, server_default="0")
        )
        batch.add_column(
            sa.Column("listed", sa.Boolean(), nullable=False, server_default=sa.false())
        )


def downgrade() -> None:
    with op.batch_alter_table("judge_batches") as batch:
        batch.drop_column("listed")
        batch.drop_column("missing")
        batch.drop_column("skipped")
    with op.batch_alter_table("batch_runs") as batch:
        batch.drop_column("error")
        batch.drop_column("failures")
    op.drop_index("ix_batch_requests_batch", table_name="batch_requests")
    op.drop_table("batch_requests")
