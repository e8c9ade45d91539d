"""Finalize exactly once (issue 32): ``runs.finalizing_at`` is the claim a
worker takes (a compare-and-set) before it aggregates a run, so the last
chunks and the watchdog's sweep, which may all ask for it, aggregate once.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-26
"""

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("runs") as runs:
        runs.add_column(sa.Column("finalizing_at", sa.DateTime(timezone=True)))


def downgrade() -> None:
    with op.batch_alter_table("runs") as runs:
        runs.drop_column("finalizing_at")
