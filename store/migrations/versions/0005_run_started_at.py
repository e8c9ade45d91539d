"""Runs record when their first chunk went to a worker: the clock of the
progress estimates (rate since the run started, time left). Runs of earlier
releases have none; their estimates fall back to ``created_at``.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-24
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("runs") as runs:
        runs.add_column(sa.Column("started_at", sa.DateTime(timezone=True)))


def downgrade() -> None:
    with op.batch_alter_table("runs") as runs:
        runs.drop_column("started_at")
