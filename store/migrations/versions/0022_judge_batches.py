"""Batch mode (issue 49): a batch-mode run's stage, its batch files at the
provider (their ids, so a restart picks them up) and the answers read
back by ``custom_id``.

Revision ID: 0022
Revises: 0021
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
AUTO_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
WHEN = sa.DateTime(timezone=True)


def _run_id(primary: bool = False) -> sa.Column[str]:
    return sa.Column(
        "run_id",
        sa.String(32),
        sa.ForeignKey("runs.id", ondelete="CASCADE"),
        nullable=False,
        primary_key=primary,
    )


def upgrade() -> None:
    op.create_table(
        "batch_runs",
        _run_id(primary=True),
        sa.Column("stage", sa.String(16), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("sent_at", WHEN, nullable=True),
        sa.Column("held_until", WHEN, nullable=True),
        sa.Column("poll_at", WHEN, nullable=True),
        sa.Column("poll_s", sa.Float(), nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
    )
    op.create_table(
        "judge_batches",
        sa.Column("id", AUTO_ID, primary_key=True, autoincrement=True),
        _run_id(),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("part", sa.Integer(), nullable=False),
        sa.Column("input_file_id", sa.String(200), nullable=True),
        sa.Column("batch_id", sa.String(200), nullable=True),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("total", sa.Integer(), nullable=False),
        sa.Column("completed", sa.Integer(), nullable=False),
        sa.Column("failed", sa.Integer(), nullable=False),
        sa.Column("output_file_id", sa.String(200), nullable=True),
        sa.Column("error_file_id", sa.String(200), nullable=True),
        sa.Column("read_at", WHEN, nullable=True),
        sa.UniqueConstraint("run_id", "round", "model", "part", name="uq_judge_batch"),
    )
    op.create_table(
        "batch_answers",
        _run_id(primary=True),
        sa.Column("custom_id", sa.String(64), primary_key=True),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("body", JSON, nullable=True),
        sa.Column("error", sa.String(64), nullable=True),
    )


def downgrade() -> None:
    op.drop_table("batch_answers")
    op.drop_table("judge_batches")
    op.drop_table("batch_runs")
