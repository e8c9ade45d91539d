"""Runs count the judge calls they reserved: the judge budget is a ceiling
enforced before each call (``Storage.reserve_calls``), not an estimate. Runs of
earlier releases start from 0.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("runs") as runs:
        runs.add_column(
            sa.Column(
                "calls_reserved", sa.BigInteger, nullable=False, server_default="0"
            )
        )


def downgrade() -> None:
    with op.batch_alter_table("runs") as runs:
        runs.drop_column("calls_reserved")
