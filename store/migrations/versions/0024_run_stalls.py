"""A run says when it last moved and, while it does not, why (issue 57:
four faults left runs ``running`` for ever with no reason on their page).

Revision ID: 0024
Revises: 0023 (cached and batch tokens)
Create Date: 2026-12-07
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None
JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("moved_at", sa.DateTime(timezone=True)))
        batch.add_column(sa.Column("stall", JSON))


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("stall")
        batch.drop_column("moved_at")
