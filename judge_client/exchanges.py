"""What a judge was asked and answered, kept beside the rows it scored
(``store/exchange_models.py``), so a reader sees the exact prompt and the
raw reply behind a score. ``metrics.judging.Batch`` hands each group of
items with its outcomes and rows to :meth:`Exchanges.keep`; the chunk
stores what :meth:`Exchanges.take` gives with its rows.

>>> from types import SimpleNamespace as NS
>>> mode = NS(name="alignment", prompt="alignment_v1")
>>> item = NS(mode=mode, sample=0, prompt_version="alignment_v1",
...           messages=({"role": "user", "content": "x" * 5},))
>>> outcome = NS(raw="Total: \\\\boxed{80}", status="ok", cached=False)
>>> rows = [{"session_id": "s", "round": 1, "method": "M", "metric": "al"},
...         {"session_id": "s", "round": 1, "method": "M", "metric": "al_style"}]
>>> kept = Exchanges("gpt", message_chars=3)
>>> kept.keep(rows, [item], [outcome])
>>> [found] = kept.take()
>>> found["metric"], found["metrics"], found["judge"], found["messages"][0]["content"]
('al', ['al', 'al_style'], 'gpt', 'xxx… [2 more characters not kept]')
>>> kept.take()
[]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from judge_client.outcome import JudgeOutcome, kept_reply
from metrics.judging import JudgeItem

MESSAGE_CHARS = 20_000  # of each message's content kept (a reply: outcome.py)


class Exchanges:
    """One judge's exchanges of a chunk, collected until the chunk stores them."""

    def __init__(self, judge: str, message_chars: int = MESSAGE_CHARS) -> None:
        self.judge = judge
        self.message_chars = message_chars
        self._kept: list[dict[str, Any]] = []

    def keep(
        self,
        rows: Sequence[Mapping[str, Any]],
        items: Sequence[JudgeItem],
        outcomes: Sequence[JudgeOutcome],
    ) -> None:
        """The items one build made ``rows`` from, under each reply the rows
        name (a pairwise item scores two replies, each its own row)."""
        for key, metrics in _replies(rows).items():
            session_id, round_, method = key
            for seq, (item, outcome) in enumerate(zip(items, outcomes, strict=True)):
                self._kept.append(
                    {
                        "session_id": session_id,
                        "round": round_,
                        "method": method,
                        "judge": self.judge,
                        "metric": metrics[0],
                        "seq": seq,
                        "metrics": metrics,
                        "mode": item.mode.name,
                        "prompt_version": item.prompt_version,
                        "sample": item.sample,
                        "messages": [self._bounded(m) for m in item.messages],
                        "reply": outcome.raw,
                        "status": str(outcome.status),
                        "cached": bool(outcome.cached),
                    }
                )

    def _bounded(self, message: Mapping[str, Any]) -> dict[str, Any]:
        content = message.get("content")
        if isinstance(content, str):
            return {**message, "content": kept_reply(content, self.message_chars)}
        return dict(message)

    def take(self) -> list[dict[str, Any]]:
        """What was kept since the last take (and forget it here)."""
        kept, self._kept = self._kept, []
        return kept


def _replies(
    rows: Sequence[Mapping[str, Any]],
) -> dict[tuple[str, int, str], list[str]]:
    """Each reply the rows name (session-level rows: round 0, as stored),
    with the metrics of its rows in order."""
    found: dict[tuple[str, int, str], list[str]] = {}
    for row in rows:
        key = (row["session_id"], row["round"] or 0, row["method"])
        found.setdefault(key, []).append(row["metric"])
    return found
