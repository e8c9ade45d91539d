"""Several judge models asked the same items (``JUDGE_MODELS`` panels)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evaluator import Judge


class JudgePanel:
    """Several judge models asked the same items: each judge suite runs once
    per judge (``metrics.engine.evaluate``) and every row names its judge.
    The judges share one pool, one cache and one ``usage``."""

    def __init__(self, judges: list[Judge]):
        self.judges = judges
        self.usage = judges[0].usage

    def release(self) -> None:
        for judge in self.judges:  # one shared allowance: the first gives it back
            judge.release()
