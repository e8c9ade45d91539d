"""The model families a run names for its methods and judges (issue 58: the
judge report card's self-preference check).

Revision ID: 0027
Revises: 0026 (exchange texts)
Create Date: 2026-12-07
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0027"
down_revision = "0026"
branch_labels = None
depends_on = None
JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("families", JSON))


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("families")
