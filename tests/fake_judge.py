"""A judge without HTTP for suite-level tests: the reply text comes from the
scripted judge server's ``decide`` (or a given function), then the item's own
parser decides, as in ``evaluator.Judge``. Fakes live only in tests."""

from __future__ import annotations

from dataclasses import dataclass

from bench.judge_server import JudgeState, decide


@dataclass
class Outcome:
    status: str
    verdict: dict | None = None
    raw: str | None = None
    note: str | None = None


class FakeJudge:
    def __init__(self, reply=None):
        self.reply = reply or (lambda item: decide(JudgeState(), user_text(item))[1])
        self.batches: list[list] = []

    def evaluate(self, items):
        self.batches.append(list(items))
        return [self._one(item) for item in items]

    def _one(self, item) -> Outcome:
        text = self.reply(item)
        verdict = item.parse(text)
        if verdict is None:
            return Outcome("unscored", raw=text, note="judge reply could not be parsed")
        return Outcome("ok", verdict.to_dict(), text)


def user_text(item) -> str:
    return item.messages[-1]["content"]
