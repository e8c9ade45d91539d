"""A run's settings, typed and frozen: what a worker reads of a run.

Recorded when the run is made (``pipeline/service/run_request.py``: the suites'
options checked, the judge's settings from the request and the instance's
configuration at that moment: model, sampling, history window and the
limits of ``judge_client.config.RUN_LIMITS``) and stored as
``run.options``; bookkeeping (chunks, call cap, reuse) has columns of its
own. A worker configured otherwise still judges the run as its header says:
every chunk's judge is :meth:`RunSpec.judge_config`.

>>> from types import SimpleNamespace
>>> run = SimpleNamespace(suites=["alignment"], judge=None, options={
...     "judge_model": "m", "samples": 2, "use_cache": False, "protocol": None})
>>> spec = RunSpec.of(run)
>>> spec.judge.models, spec.judge.samples, spec.judge.use_cache, spec.judge.temperature
(('m',), 2, False, 0.0)
>>> spec.judge.history_chars  # recorded by none: the default of its release
12000
>>> spec.judge.limits is None  # recorded by none: the worker's (and a warning)
True
>>> spec.judge = None
Traceback (most recent call last):
dataclasses.FrozenInstanceError: cannot assign to field 'judge'
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from config import DEFAULTS
from judge_client.config import RUN_LIMITS, JudgeConfig
from metrics import registry
from pipeline.service.run_request import history_chars

if TYPE_CHECKING:
    from store.models import Run

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class JudgeSpec:
    url: str | None  # the run's own endpoint; None: the instance's
    models: tuple[str, ...]  # two or more: a panel; none: the instance's model
    samples: int
    temperature: float
    history_chars: int  # dialogue history a prompt carries
    protocol: Mapping[str, Any] | None  # the stored protocol; None: the default
    use_cache: bool  # False: the run pays for its own verdicts (kept per run)
    batch: bool = False  # through the provider's Batch API (pipeline/batch/steps.py)
    # max tokens, timeouts, retries... (judge_client.config.RUN_LIMITS) by
    # field; None: recorded by an earlier release (the worker's are used)
    limits: Mapping[str, Any] | None = None
    judged: bool = True  # False: made without a judge (its header: none)


@dataclass(frozen=True)
class RunSpec:
    suites: tuple[str, ...]
    suite_options: Mapping[str, Any]  # the chosen suites' options, checked
    judge: JudgeSpec

    @classmethod
    def of(cls, run: Run) -> RunSpec:
        """The spec ``run`` recorded (runs of earlier releases recorded less:
        what they were judged with then)."""
        stored = dict(run.options or {})
        models = stored.get("judge_models") or (
            [stored["judge_model"]] if stored.get("judge_model") else []
        )
        judge = JudgeSpec(
            url=stored.get("judge_url"),
            models=tuple(models),
            samples=stored.get("samples", 1),
            temperature=stored.get("temperature", DEFAULTS["JUDGE_TEMPERATURE"]),
            history_chars=history_chars(stored, run.judge),
            protocol=stored.get("protocol"),
            use_cache=stored.get("use_cache", True),
            batch=bool(stored.get("batch", False)),
            limits=_frozen(stored.get("judge_limits")),
            judged=run.judge is not None,
        )
        names = registry.option_names()
        options = {key: value for key, value in stored.items() if key in names}
        return cls(tuple(run.suites), MappingProxyType(options), judge)

    def judge_config(
        self, config: Mapping[str, Any], run_id: str | None = None
    ) -> JudgeConfig | None:
        """The judge every chunk of the run asks (online or batch, first
        claim or retry): the run's recorded settings; from ``config`` (this
        worker's) only the key, the pacing, the endpoint when the run named
        none, and the limits a run of an earlier release did not record
        (logged). None: the run was made without a judge, or none is
        configured."""
        if not self.judge.judged:
            return None
        recorded = self.judge.limits or {}
        limits = {field: recorded[field] for field in RUN_LIMITS if field in recorded}
        if len(limits) < len(RUN_LIMITS):
            missing = [
                name for field, name in RUN_LIMITS.items() if field not in limits
            ]
            log.warning(
                "run %s recorded no %s (made by an earlier release): "
                "this worker's configuration is used",
                run_id or "?",
                ", ".join(missing),
            )
        settings = {
            "judge_url": self.judge.url,
            "judge_model": self.judge.models[0] if self.judge.models else None,
            "samples": self.judge.samples,
            "temperature": self.judge.temperature,
        }
        return JudgeConfig.from_settings(dict(config), settings, limits)

    def suite_inputs(self) -> dict[str, Any]:
        """What the suites read: their options, and the judge's protocol,
        samples and history window."""
        return {
            **self.suite_options,
            "protocol": self.judge.protocol,
            "samples": self.judge.samples,
            "history_chars": self.judge.history_chars,
        }


def _frozen(value: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    return None if value is None else MappingProxyType(dict(value))
