"""What a run's judge was asked and answered, kept per reply (issue 48):
the replies grid shows the exact prompt sent beside the raw reply of each
score. Written with the chunk's rows, in the same fenced transaction
(``store/result_rows.py``); deleting the run deletes them
(``store/deletion.py``); reusing a run copies them (``store/reuse.py``).

The prompt and the reply are stored once per distinct pair (issue 57):
an ``ExchangeText`` keyed by their hash, which each ``JudgeExchange`` row
names (``text_key``), so a run whose verdicts come from the cache stores
only those rows. A text goes with the last row naming it
(``store/replies.py``). Rows written before that keep their own text
(``text_key`` null, ``messages`` and ``reply`` in the row)."""

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
    # the prompt and reply (ExchangeText); null in rows stored before 0026
    text_key: Mapped[str | None] = mapped_column(
        String(64), ForeignKey("judge_exchange_texts.key"), index=True
    )
    # rows stored before 0026 only (else null): their prompt and reply
    messages: Mapped[list[dict[str, Any]] | None] = mapped_column(JSONType)
    reply: Mapped[str | None] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16))  # the outcome's RowStatus
    cached: Mapped[bool] = mapped_column(default=False)


class ExchangeText(Base):
    """A prompt as sent and the raw reply, once however many exchanges of
    however many runs had them (a cached verdict's exchange names the text
    its first exchange stored)."""

    __tablename__ = "judge_exchange_texts"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    # role/content dicts as sent, each content bounded (judge_client/exchanges.py)
    messages: Mapped[list[dict[str, Any]]] = mapped_column(JSONType)
    reply: Mapped[str | None] = mapped_column(Text)  # None: no reply came
