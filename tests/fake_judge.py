"""A judge without HTTP for suite-level tests: the reply text comes from the
scripted judge server's ``decide`` (or a given function), then the item's own
parser decides, as in ``evaluator.Judge``. With ``status="error"`` every call
fails as an HTTP 503 would. Fakes live only in tests."""

from __future__ import annotations

from dataclasses import dataclass

from metrics.notes import Note, note
from testing.judge_decisions import decide
from testing.judge_state import JudgeState


@dataclass
class Outcome:
    status: str
    verdict: dict | None = None
    raw: str | None = None
    note: Note | None = None


class FakeJudge:
    def __init__(self, reply=None, status=None):
        self.reply = reply or scripted
        self.status = status
        self.batches: list[list] = []

    def evaluate(self, items):
        self.batches.append(list(items))
        return [self._one(item) for item in items]

    def _one(self, item) -> Outcome:
        if self.status:
            return Outcome(self.status, note=note("http_error", status=503))
        text = self.reply(item)
        verdict, why = item.read(text)
        if verdict is None:
            return Outcome("unscored", raw=text, note=why)
        return Outcome("ok", verdict.to_dict(), text)


def scripted(item) -> str:
    """The scripted judge server's reply to ``item``."""
    return decide(JudgeState(), user_text(item), "", text_of(item, "system"))[1]


def user_text(item) -> str:
    return text_of(item, "user")


def text_of(item, role: str) -> str:
    return next((m["content"] for m in item.messages if m["role"] == role), "")
