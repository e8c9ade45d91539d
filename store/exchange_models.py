"""What a run's judge was asked and answered, kept per reply (issue 48):
the replies grid shows the exact prompt sent beside the raw reply of each
score. Written with the chunk's rows, in the same fenced transaction
(``store/result_rows.py``); deleting the run deletes them
(``store/deletion.py``); reusing a run copies them (``store/reuse.py``)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from store.models import AUTO_ID, Base, JSONType

# one exchange per item a suite's rows of one reply were built from: the
# first metric of those rows names the group (a reply of a pairwise run
# has one per opponent), ``seq`` the item in it (modes, samples, orders)
EXCHANGE_KEY = ("run_id", "session_id", "round", "method", "judge", "metric", "seq")


class JudgeExchange(Base):
    __tablename__ = "judge_exchanges"
    __table_args__ = (UniqueConstraint(*EXCHANGE_KEY, name="uq_judge_exchange"),)

    id: Mapped[int] = mapped_column(AUTO_ID, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    session_id: Mapped[str] = mapped_column(String(255))
    round: Mapped[int] = mapped_column(Integer)  # 0: a session-level item
    method: Mapped[str] = mapped_column(String(255))
    judge: Mapped[str] = mapped_column(String(200))
    metric: Mapped[str] = mapped_column(String(128))
    seq: Mapped[int] = mapped_column(Integer)
    metrics: Mapped[list[str]] = mapped_column(JSONType)  # the rows it scored
    mode: Mapped[str] = mapped_column(String(64))
    prompt_version: Mapped[str] = mapped_column(String(64))
    sample: Mapped[int] = mapped_column(Integer)
    # role/content dicts as sent, each content bounded (judge_client/exchanges.py)
    messages: Mapped[list[dict[str, Any]]] = mapped_column(JSONType)
    reply: Mapped[str | None] = mapped_column(Text)  # None: no reply came
    status: Mapped[str] = mapped_column(String(16))  # the outcome's RowStatus
    cached: Mapped[bool] = mapped_column(default=False)
