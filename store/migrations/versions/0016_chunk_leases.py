"""Chunk leases (issue 46): a worker's claim on a chunk is a lease with a
fencing token. ``run_chunks.lease`` grows at every claim and release, and a
write of a chunk's rows or progress is accepted only under the token its
claim returned; ``holder`` names the process holding it (for operators);
``claims`` counts the claims (the attempts that give up on a chunk), apart
from ``attempts``, which numbers the sends a task is matched against.

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-27
"""

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("run_chunks") as chunks:
        chunks.add_column(
            sa.Column("lease", sa.Integer, nullable=False, server_default="0")
        )
        chunks.add_column(
            sa.Column("claims", sa.Integer, nullable=False, server_default="0")
        )
        chunks.add_column(sa.Column("holder", sa.String(96)))


def downgrade() -> None:
    with op.batch_alter_table("run_chunks") as chunks:
        chunks.drop_column("holder")
        chunks.drop_column("claims")
        chunks.drop_column("lease")
