"""The schema of the first release.

A database created by that release (``create_all``, no ``alembic_version``)
already has these tables: they are left as they are, so upgrading it keeps
every row.

Revision ID: 0001
Revises:
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
AUTO_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _missing(table: str) -> bool:
    return not sa.inspect(op.get_bind()).has_table(table)


def upgrade() -> None:
    if _missing("runs"):
        op.create_table(
            "runs",
            sa.Column("id", sa.String(32), primary_key=True),
            sa.Column("token", sa.String(64), nullable=False, unique=True),
            sa.Column("status", sa.String(16), nullable=False),
            sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
            sa.Column("finished_at", sa.DateTime(timezone=True)),
            sa.Column("file_name", sa.String(255), nullable=False),
            sa.Column("file_sha256", sa.String(64), nullable=False),
            sa.Column("upload_id", sa.String(64), nullable=False),
            sa.Column("sessions", sa.Integer, nullable=False),
            sa.Column("rounds", sa.Integer, nullable=False),
            sa.Column("methods", JSON, nullable=False),
            sa.Column("suites", JSON, nullable=False),
            sa.Column("judge", JSON),
            sa.Column("options", JSON, nullable=False),
            sa.Column("done", sa.Integer, nullable=False),
            sa.Column("total", sa.Integer, nullable=False),
            sa.Column("judge_calls", sa.BigInteger, nullable=False),
            sa.Column("cache_hits", sa.BigInteger, nullable=False),
            sa.Column("prompt_tokens", sa.BigInteger, nullable=False),
            sa.Column("completion_tokens", sa.BigInteger, nullable=False),
            sa.Column("aggregates", JSON),
            sa.Column("error", sa.Text),
        )
    if _missing("result_rows"):
        op.create_table(
            "result_rows",
            sa.Column("id", AUTO_ID, primary_key=True, autoincrement=True),
            sa.Column(
                "run_id",
                sa.String(32),
                sa.ForeignKey("runs.id", ondelete="CASCADE"),
                nullable=False,
            ),
            sa.Column("session_id", sa.String(255), nullable=False),
            sa.Column("round", sa.Integer, nullable=False),
            sa.Column("method", sa.String(255), nullable=False),
            sa.Column("metric", sa.String(128), nullable=False),
            sa.Column("sample", sa.Integer, nullable=False),
            sa.Column("value", sa.Float),
            sa.Column("status", sa.String(16), nullable=False),
            sa.Column("note", sa.Text),
            sa.Column("detail", JSON),
            sa.UniqueConstraint(
                "run_id",
                "session_id",
                "round",
                "method",
                "metric",
                "sample",
                name="uq_result_row",
            ),
        )
    if _missing("run_chunks"):
        op.create_table(
            "run_chunks",
            sa.Column("id", AUTO_ID, primary_key=True, autoincrement=True),
            sa.Column(
                "run_id",
                sa.String(32),
                sa.ForeignKey("runs.id", ondelete="CASCADE"),
                nullable=False,
            ),
            sa.Column("chunk", sa.Integer, nullable=False),
            sa.Column("items", sa.Integer, nullable=False),
            sa.UniqueConstraint("run_id", "chunk", name="uq_run_chunk"),
        )
    if _missing("judge_cache"):
        op.create_table(
            "judge_cache",
            sa.Column("key", sa.String(64), primary_key=True),
            sa.Column("prompt_version", sa.String(64), nullable=False),
            sa.Column("reply", sa.Text, nullable=False),
            sa.Column("parsed", JSON, nullable=False),
            sa.Column("prompt_tokens", sa.Integer, nullable=False),
            sa.Column("completion_tokens", sa.Integer, nullable=False),
            sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        )
    if _missing("run_sessions"):
        op.create_table(
            "run_sessions",
            sa.Column("id", AUTO_ID, primary_key=True, autoincrement=True),
            sa.Column(
                "run_id",
                sa.String(32),
                sa.ForeignKey("runs.id", ondelete="CASCADE"),
                nullable=False,
            ),
            sa.Column("position", sa.Integer, nullable=False),
            sa.Column("session_id", sa.String(255), nullable=False),
            sa.Column("start", sa.BigInteger, nullable=False),
            sa.Column("end", sa.BigInteger, nullable=False),
            sa.UniqueConstraint("run_id", "session_id", name="uq_run_session"),
        )


def downgrade() -> None:
    for table in ("run_sessions", "judge_cache", "run_chunks", "result_rows", "runs"):
        op.drop_table(table)
