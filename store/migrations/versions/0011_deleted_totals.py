"""What deleted runs had counted, so ``/metrics`` counters never go down.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

COUNTERS = ("judge_calls", "cache_hits", "prompt_tokens", "completion_tokens")


def upgrade() -> None:
    op.create_table(
        "deleted_totals",
        sa.Column("id", sa.Integer, primary_key=True),
        *(
            sa.Column(name, sa.BigInteger, nullable=False, server_default="0")
            for name in COUNTERS
        ),
    )


def downgrade() -> None:
    op.drop_table("deleted_totals")
