"""Every suite's metric metadata in one place, for the engine and the UI.

``registry`` defines the suites and the alignment metrics and is imported by
validation, so it cannot import the suite modules (they import it); this
module sits above both. Per-topic ids such as ``slot_f1@basic_info`` are
data-dependent: they inherit the metadata of their base id.

>>> spec("slot_f1@basic_info").higher_is_better
True
>>> spec("no_such_metric") is None
True
"""

from __future__ import annotations

from metrics import quality, roleplay, simulation, slots, style
from metrics.registry import METRICS as ALIGNMENT_METRICS
from metrics.registry import Metric

SUITE_MODULES = {
    "quality": quality,
    "style": style,
    "roleplay": roleplay,
    "simulation": simulation,
    "slots": slots,
}

METRICS: dict[str, Metric] = dict(ALIGNMENT_METRICS)
for _module in SUITE_MODULES.values():
    METRICS.update({metric.id: metric for metric in _module.METRICS})


def spec(metric_id: str) -> Metric | None:
    return METRICS.get(metric_id) or METRICS.get(metric_id.split("@", 1)[0])


def summary_metrics(suite: str) -> list[Metric]:
    return [m for m in METRICS.values() if m.suite == suite and m.level == "summary"]
