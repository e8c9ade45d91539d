"""Workspaces, owner (manage) tokens for runs, run names, tags and comments,
and the record of which runs used which judge cache entries (deletion).

Runs of earlier releases get no manage token: their share token keeps the
rights it had (``store/workspaces.py``).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
AUTO_ID = sa.BigInteger().with_variant(sa.Integer, "sqlite")


def upgrade() -> None:
    op.create_table(
        "workspaces",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("token", sa.String(64), nullable=False, unique=True),
        sa.Column("manage_token", sa.String(64), nullable=False, unique=True),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    # Plain ADD COLUMN and indexes: a constraint would make SQLite rebuild
    # the table, and dropping the old one would cascade to its rows.
    op.add_column("runs", sa.Column("manage_token", sa.String(64)))
    op.add_column("runs", sa.Column("workspace_id", sa.String(32)))
    op.add_column("runs", sa.Column("name", sa.String(255)))
    op.add_column("runs", sa.Column("tags", JSON))
    op.add_column("runs", sa.Column("comment", sa.Text))
    op.create_index("ix_runs_manage_token", "runs", ["manage_token"], unique=True)
    op.create_index("ix_runs_workspace_id", "runs", ["workspace_id"])
    op.create_table(
        "run_cache_keys",
        sa.Column("id", AUTO_ID, primary_key=True, autoincrement=True),
        sa.Column(
            "run_id",
            sa.String(32),
            sa.ForeignKey("runs.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("key", sa.String(64), nullable=False),
        sa.UniqueConstraint("run_id", "key", name="uq_run_cache_key"),
    )
    op.create_index("ix_run_cache_keys_key", "run_cache_keys", ["key"])


def downgrade() -> None:
    op.drop_index("ix_run_cache_keys_key", "run_cache_keys")
    op.drop_table("run_cache_keys")
    op.drop_index("ix_runs_workspace_id", "runs")
    op.drop_index("ix_runs_manage_token", "runs")
    with op.batch_alter_table("runs") as runs:
        for column in ("comment", "tags", "name", "workspace_id", "manage_token"):
            runs.drop_column(column)
    op.drop_table("workspaces")
