"""Row notes become translatable: a code and its parameters beside the
English text (``metrics/notes.py``). Rows of earlier releases keep their text.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("result_rows") as rows:
        rows.add_column(sa.Column("note_code", sa.String(64)))
        rows.add_column(sa.Column("note_params", JSON))


def downgrade() -> None:
    with op.batch_alter_table("result_rows") as rows:
        rows.drop_column("note_params")
        rows.drop_column("note_code")
