"""Index result rows by (run, id): ``GET /api/v1/runs/<token>/rows`` pages a
run's rows with a cursor on ``id`` and reads one page per request.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-24
"""

from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_result_rows_cursor", "result_rows", ["run_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_result_rows_cursor", table_name="result_rows")
