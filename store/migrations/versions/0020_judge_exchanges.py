"""Judge exchanges (issue 48): the prompt each score's judge was sent and
its raw reply, kept per reply for the replies grid.

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
AUTO_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "judge_exchanges",
        sa.Column("id", AUTO_ID, primary_key=True, autoincrement=True),
        sa.Column(
            "run_id",
            sa.String(32),
            sa.ForeignKey("runs.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("session_id", sa.String(255), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("method", sa.String(255), nullable=False),
        sa.Column("judge", sa.String(200), nullable=False),
        sa.Column("metric", sa.String(128), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("metrics", JSON, nullable=False),
        sa.Column("mode", sa.String(64), nullable=False),
        sa.Column("prompt_version", sa.String(64), nullable=False),
        sa.Column("sample", sa.Integer(), nullable=False),
        sa.Column("messages", JSON, nullable=False),
        sa.Column("reply", sa.Text(), nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("cached", sa.Boolean(), nullable=False),
        sa.UniqueConstraint(
            "run_id",
            "session_id",
            "round",
            "method",
            "judge",
            "metric",
            "seq",
            name="uq_judge_exchange",
        ),
    )


def downgrade() -> None:
    op.drop_table("judge_exchanges")
