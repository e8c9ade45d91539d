"""Judge call claims (issue 46): a request under way is claimed by its cache
key, so another worker asking the same question waits for the verdict
instead of paying for it twice.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "judge_call_claims",
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("holder", sa.String(96), nullable=False),
        sa.Column("until", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("judge_call_claims")
