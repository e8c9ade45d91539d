"""The run service's judge budget (:class:`RunBudget`, a part of
``pipeline.service.runs.RunService``): the calls a request would make, and the
refusals of a run over the per-run limit, over its workspace's calls of the
day, or, for a retry, over what the upload's budget has left. The figures
themselves are ``pipeline/service/budget.py``'s."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.caps import Daily
from core.problems import Rejected
from pipeline.service import budget
from pipeline.service.run_request import (
    RunRequest,
    choose_suites,
    judge_options,
    public_judge,
)

if TYPE_CHECKING:
    import dataset
    from store import StorageLike
    from store.models import Run


class RunBudget:
    """The budget checks of the run service, over its storage and its
    configuration."""

    storage: StorageLike
    config: dict[str, Any]

    def judge_calls(
        self, report: dataset.ValidationReport, request: RunRequest
    ) -> dict[str, Any]:
        """The judge calls a run of ``report`` with ``request``'s suites,
        samples and judges would make, and the limit per run."""
        suites = choose_suites(report, request.suites)
        options = judge_options(self.config, request)
        judged = public_judge(self.config, suites, options) is not None
        estimate = budget.estimate(report, suites, options) if judged else 0
        spend = {}
        if judged:  # the expected cost reads the workspace's earlier runs
            models = options.get("judge_models") or [
                options.get("judge_model") or self.config.get("JUDGE_MODEL")
            ]
            history = self.storage.progress.workspace_usage(  # of this protocol
                request.workspace_id,
                [str(m) for m in models],
                options["protocol"]["sha256"],
            )
            spend = budget.spend(report, suites, options, self.config, history)
        return {
            "estimate": estimate,
            "limit": self.config["MAX_JUDGE_CALLS_PER_RUN"],
            "judges": spend,
        }

    def _check_budget(
        self,
        report: dataset.ValidationReport,
        suites: list[str],
        options: dict[str, Any],
        workspace_id: str | None,
        judge: dict[str, Any] | None,
    ) -> None:
        if judge is not None:
            calls = budget.estimate(report, suites, options)
            budget.check(calls, self.config["MAX_JUDGE_CALLS_PER_RUN"])
            self._check_daily(workspace_id, calls)

    def _check_daily(self, workspace_id: str | None, calls: int) -> None:
        """The workspace's daily cap, when the operator set one."""
        limit = self.config["WORKSPACE_DAILY_JUDGE_CALLS"]
        day = Daily.today(workspace_id, limit)
        if day is not None:
            budget.check_daily(calls, self.storage.budget.workspace_calls(day), limit)

    def _calls_left(self, run: Run) -> int:
        """What a retry of ``run`` may still call: the upload's budget is
        shared by the run and all its retries. None left: a 409."""
        limit: int = self.config["MAX_JUDGE_CALLS_PER_RUN"]
        left = limit - self.storage.budget.calls_reserved_by_chain(run.id)
        if run.judge and left <= 0:
            raise Rejected.one("retry_over_budget", http=409, limit=limit)
        if run.judge:
            self._check_daily(run.workspace_id, 1)
        return max(left, 1)
