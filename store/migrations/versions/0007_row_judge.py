"""Result rows name their judge model (judge panels: several judges score the
same item, one row each). Rows of earlier releases and rows no judge made
keep the empty name. The unique key gains the judge.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

OLD_KEY = ["run_id", "session_id", "round", "method", "metric", "sample"]


def upgrade() -> None:
    # On SQLite the constraint change rebuilds the table (rows are copied);
    # result_rows is a child table, so nothing cascades.
    with op.batch_alter_table("result_rows") as rows:
        rows.add_column(
            sa.Column("judge", sa.String(200), nullable=False, server_default="")
        )
        rows.drop_constraint("uq_result_row", type_="unique")
        rows.create_unique_constraint("uq_result_row", [*OLD_KEY, "judge"])


def downgrade() -> None:
    with op.batch_alter_table("result_rows") as rows:
        rows.drop_constraint("uq_result_row", type_="unique")
        rows.create_unique_constraint("uq_result_row", OLD_KEY)
        rows.drop_column("judge")
