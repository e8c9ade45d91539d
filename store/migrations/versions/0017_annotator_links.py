"""Annotator links (issue 46): one link per annotator of a queue, the name
fixed in its token; an annotator labels as themselves only.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "annotator_links",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer, "sqlite"),
            primary_key=True,
            autoincrement=True,
        ),
        sa.Column(
            "queue_id",
            sa.String(32),
            sa.ForeignKey("annotation_queues.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("token", sa.String(64), nullable=False),
        sa.Column("name", sa.String(80), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("queue_id", "name", name="uq_annotator_link_name"),
    )
    op.create_index("ix_annotator_links_queue_id", "annotator_links", ["queue_id"])
    op.create_index(
        "ix_annotator_links_token", "annotator_links", ["token"], unique=True
    )


def downgrade() -> None:
    op.drop_index("ix_annotator_links_token", "annotator_links")
    op.drop_index("ix_annotator_links_queue_id", "annotator_links")
    op.drop_table("annotator_links")
