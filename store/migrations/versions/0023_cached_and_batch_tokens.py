"""Judge usage gains the provider's cached prompt tokens and the requests
and tokens sent through batch files (issue 49), for cost at the cached-input
and batch prices, and the time requests waited under the endpoint's rate
limits (progress says when a run is held back by them). Earlier runs read
0: their servers' cache and their waits were not counted.

Revision ID: 0023
Revises: 0022 (batch mode)
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None

COUNTERS = (
    "cached_tokens",
    "batch_calls",
    "batch_prompt_tokens",
    "batch_cached_tokens",
    "batch_completion_tokens",
    "paced_ms",
)


def upgrade() -> None:
    with op.batch_alter_table("judge_usage") as batch:
        for name in COUNTERS:
            batch.add_column(
                sa.Column(name, sa.BigInteger, nullable=False, server_default="0")
            )


def downgrade() -> None:
    with op.batch_alter_table("judge_usage") as batch:
        for name in reversed(COUNTERS):
            batch.drop_column(name)
