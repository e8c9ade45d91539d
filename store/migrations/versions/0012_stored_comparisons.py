"""Comparisons of finished runs are computed once on a worker and stored:
the compare page, its exports and the API read them. Workspaces count the
judge calls their runs reserve per day (``WORKSPACE_DAILY_JUDGE_CALLS``).

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-26
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
AUTO_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
TIME = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "comparisons",
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("runs_digest", sa.String(64), nullable=False, index=True),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("document", JSON),
        sa.Column("failure", JSON),
        sa.Column("requested_at", TIME, nullable=False),
        sa.Column("sent_at", TIME),
        sa.Column("finished_at", TIME),
    )
    op.create_table(
        "comparison_runs",
        sa.Column("id", AUTO_ID, primary_key=True, autoincrement=True),
        sa.Column(
            "comparison_key",
            sa.String(64),
            sa.ForeignKey("comparisons.key", ondelete="CASCADE"),
            nullable=False,
            index=True,
        ),
        sa.Column("run_id", sa.String(32), nullable=False, index=True),
        sa.Column("position", sa.Integer, nullable=False),
    )

    op.create_table(
        "workspace_calls",
        sa.Column("id", AUTO_ID, primary_key=True, autoincrement=True),
        sa.Column("workspace_id", sa.String(32), nullable=False),
        sa.Column("day", sa.String(10), nullable=False),
        sa.Column("reserved", sa.BigInteger, nullable=False),
        sa.UniqueConstraint("workspace_id", "day", name="uq_workspace_calls"),
    )


def downgrade() -> None:
    op.drop_table("workspace_calls")
    op.drop_table("comparison_runs")
    op.drop_table("comparisons")
