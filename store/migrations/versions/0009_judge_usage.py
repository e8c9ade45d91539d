"""Judge usage per run and judge model (calls, cached verdicts, tokens,
re-asks, structured output), for ``judge_usage`` in the results and cost.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

COUNTERS = (
    "calls",
    "cached",
    "prompt_tokens",
    "completion_tokens",
    "reasoning_tokens",
    "reasks",
    "structured",
    "structured_rejected",
    "structured_ignored",
)


def upgrade() -> None:
    op.create_table(
        "judge_usage",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer, "sqlite"),
            primary_key=True,
            autoincrement=True,
        ),
        sa.Column(
            "run_id",
            sa.String(32),
            sa.ForeignKey("runs.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("model", sa.String(200), nullable=False),
        *(sa.Column(name, sa.BigInteger, nullable=False) for name in COUNTERS),
        sa.UniqueConstraint("run_id", "model", name="uq_judge_usage"),
    )


def downgrade() -> None:
    op.drop_table("judge_usage")
