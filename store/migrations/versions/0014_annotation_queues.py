"""Annotation queues and their labels (issue 30): a sample of a run's items
labelled in the browser through an annotator token; the judge audit reads
the labels.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-26
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
AUTO_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
TIME = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "annotation_queues",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column(
            "run_id",
            sa.String(32),
            sa.ForeignKey("runs.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("token", sa.String(64), nullable=False),
        sa.Column("created_at", TIME, nullable=False),
        sa.Column("seed", sa.Integer, nullable=False),
        sa.Column("per_item", sa.Integer, nullable=False),
        sa.Column("dimensions", sa.Boolean, nullable=False),
        sa.Column("items", JSON, nullable=False),
        sa.Column("closed_at", TIME),
        sa.Column("agreement", JSON),
        sa.Column("agreement_key", sa.String(64)),
    )
    op.create_index("ix_annotation_queues_run_id", "annotation_queues", ["run_id"])
    op.create_index(
        "ix_annotation_queues_token", "annotation_queues", ["token"], unique=True
    )
    op.create_table(
        "annotation_labels",
        sa.Column("id", AUTO_ID, primary_key=True, autoincrement=True),
        sa.Column(
            "queue_id",
            sa.String(32),
            sa.ForeignKey("annotation_queues.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("item", sa.Integer, nullable=False),
        sa.Column("annotator", sa.String(80), nullable=False),
        sa.Column("al", sa.Float),
        sa.Column("binary", sa.Integer),
        sa.Column("dimensions", JSON),
        sa.Column("comment", sa.Text),
        sa.Column("skipped", sa.Boolean, nullable=False),
        sa.Column("created_at", TIME, nullable=False),
        sa.Column("updated_at", TIME, nullable=False),
        sa.UniqueConstraint(
            "queue_id", "item", "annotator", name="uq_annotation_label"
        ),
    )
    op.create_index("ix_annotation_labels_queue_id", "annotation_labels", ["queue_id"])


def downgrade() -> None:
    op.drop_table("annotation_labels")
    op.drop_table("annotation_queues")
