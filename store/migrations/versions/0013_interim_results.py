"""Results before a run ends: ``runs.interim`` holds the aggregates of the
rows stored so far (shown, marked provisional, while the run is evaluated),
``runs.interim_at`` when they were last computed (the claim that picks one
worker; for a cancelled run, whether its rows were summarized).

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-26
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("runs") as runs:
        runs.add_column(sa.Column("interim", JSON))
        runs.add_column(sa.Column("interim_at", sa.DateTime(timezone=True)))


def downgrade() -> None:
    with op.batch_alter_table("runs") as runs:
        runs.drop_column("interim_at")
        runs.drop_column("interim")
