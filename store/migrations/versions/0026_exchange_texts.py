"""Judge exchanges' texts stored once (issue 57): the prompt and the raw
reply of an exchange go into ``judge_exchange_texts``, keyed by their
hash, which each exchange row names (``text_key``); a run whose verdicts
come from the cache stores its exchange rows and no text. Rows stored
before keep their own text (``text_key`` null), so ``messages`` may now
be null.

Revision ID: 0026
Revises: 0025 (batch output checks)
Create Date: 2026-12-08
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0026"
down_revision = "0025"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "judge_exchange_texts",
        sa.Column("key", sa.String(64), primary_key=True, nullable=False),
        sa.Column("messages", JSON, nullable=False),
        sa.Column("reply", sa.Text(), nullable=True),
    )
    with op.batch_alter_table("judge_exchanges") as exchanges:
        exchanges.add_column(sa.Column("text_key", sa.String(64), nullable=True))
        exchanges.create_foreign_key(
            "fk_judge_exchanges_text_key",
            "judge_exchange_texts",
            ["text_key"],
            ["key"],
        )
        exchanges.create_index("ix_judge_exchanges_text_key", ["text_key"])
        exchanges.alter_column("messages", existing_type=JSON, nullable=True)


def downgrade() -> None:
    # the shared texts go back into the rows that name them
    op.execute(
        "UPDATE judge_exchanges SET"
        " messages = (SELECT t.messages FROM judge_exchange_texts t"
        " WHERE t.key = judge_exchanges.text_key),"
        " reply = (SELECT t.reply FROM judge_exchange_texts t"
        " WHERE t.key = judge_exchanges.text_key)"
        " WHERE text_key IS NOT NULL"
    )
    with op.batch_alter_table("judge_exchanges") as exchanges:
        exchanges.alter_column("messages", existing_type=JSON, nullable=False)
        exchanges.drop_index("ix_judge_exchanges_text_key")
        exchanges.drop_constraint("fk_judge_exchanges_text_key", type_="foreignkey")
        exchanges.drop_column("text_key")
    op.drop_table("judge_exchange_texts")
