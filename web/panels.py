"""Dashboard panels of the suites other than alignment, built from the
``panels`` and ``summary`` a run stored when it finished (no row scans)."""

from __future__ import annotations

import charts
from translations import _, metric_label


def _groups(*metric_ids: str) -> list[tuple[str, str]]:
    return [(metric_id, metric_label(metric_id)) for metric_id in metric_ids]


def slots_panel(run, summary: dict, data: dict) -> dict:
    methods, topics = run.methods, data.get("topics", [])
    return {
        "slots_prf": charts.grouped_bars(
            summary, methods, _groups("slot_precision", "slot_recall", "slot_f1", "slot_exact"),
            _("Slot precision, recall, F1 and exact match"),
        ),
        "slots_topics": charts.heatmap(
            data.get("per_topic_f1", {}), methods, topics, _("Slot F1 per topic")
        ),
        "slots_extra": charts.grouped_bars(
            summary, methods, _groups("extra_slots", "extra_values"),
            _("Hallucinated slots and values"),
        ),
        "slots_latency": charts.box_plot(
            data.get("latency", {}), methods, _("Latency per session"), _("seconds"),
            marks=data.get("latency_p95"), mark_label=_("P95"),
        ),
    }  # fmt: skip


BUILDERS = {"slots": slots_panel}


def build(run) -> list[dict]:
    """``[{"suite", "figures": {name: figure}}]`` for the suites of the run."""
    aggregates = run.aggregates or {}
    summary, stored = aggregates.get("summary", {}), aggregates.get("panels", {})
    sections = []
    for suite in run.suites:
        builder = BUILDERS.get(suite)
        if builder is None or suite not in stored:
            continue
        figures = {
            name: fig
            for name, fig in builder(run, summary, stored[suite]).items()
            if fig
        }
        sections.append({"suite": suite, "figures": figures})
    return sections
