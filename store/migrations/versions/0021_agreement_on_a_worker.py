"""Human agreement computed on a worker (issue 48): a queue whose labels
changed wants its agreement computed again; the dispatcher claims it once
(``agreement_sent_at``) and a worker stores it, so no page view waits for
the bootstrap.

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("annotation_queues") as batch:
        batch.add_column(
            sa.Column(
                "agreement_wanted",
                sa.Boolean(),
                nullable=False,
                server_default=sa.false(),
            )
        )
        batch.add_column(
            sa.Column("agreement_sent_at", sa.DateTime(timezone=True), nullable=True)
        )
    # the agreements stored by page views so far: computed again once, so
    # none is left behind labels it did not read
    queues = sa.table("annotation_queues", sa.column("agreement_wanted", sa.Boolean()))
    op.execute(queues.update().values(agreement_wanted=True))


def downgrade() -> None:
    with op.batch_alter_table("annotation_queues") as batch:
        batch.drop_column("agreement_sent_at")
        batch.drop_column("agreement_wanted")
