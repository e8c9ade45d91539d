"""Dashboard panels of the suites other than alignment, built from the
``panels`` and ``summary`` a run stored when it finished (no row scans)."""

from __future__ import annotations

import charts
from translations import CRRS_BANDS, _, metric_label, number


def _groups(*metric_ids: str) -> list[tuple[str, str]]:
    return [(metric_id, metric_label(metric_id)) for metric_id in metric_ids]


def slots_panel(run, summary: dict, data: dict) -> dict:
    methods, topics = run.methods, data.get("topics", [])
    return {
        "slots_prf": charts.grouped_bars(
            summary, methods, _groups("slot_precision", "slot_recall", "slot_f1", "slot_exact", "slot_judge_avg"),
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


def quality_panel(run, summary: dict, data: dict) -> dict:
    components = ("coherence", "completeness", "length", "structure", "vocabulary")
    return {
        "quality_components": charts.grouped_bars(
            data,
            run.methods,
            _groups(*components),
            _("Response quality components (0–1)"),
        ),
        "quality_overall": charts.grouped_bars(
            summary,
            run.methods,
            _groups("quality_avg"),
            _("Overall quality (weighted)"),
        ),
    }


def simulation_panel(run, summary: dict, data: dict) -> dict:
    parts = ("pas_avg", "bvs_avg", "ora_avg", "dei_avg", "crrs_avg")
    crrs = {
        m: {"mean": summary.get(m, {}).get("crrs_avg"), "ci_low": summary.get(m, {}).get("crrs_ci_low"),
            "ci_high": summary.get(m, {}).get("crrs_ci_high")}
        for m in run.methods
    }  # fmt: skip
    return {
        "simulation_parts": charts.grouped_bars(
            summary, run.methods, _groups(*parts), _("CRRS and its parts (0–1)")
        ),
        "simulation_crrs": charts.bars_with_ci(
            crrs,
            run.methods,
            _("CRRS per method (mean ± 1.96·σ/√n)"),
            metric_label("crrs"),
        ),
    }


def simulation_tables(run, data: dict) -> list[dict]:
    bands = data.get("crrs_band", {})
    band_rows = [[m, str(CRRS_BANDS.get(bands.get(m), "—"))] for m in run.methods]
    stat_rows = [
        [metric_label(s["metric"]), s["a"], s["b"], number(s["welch_t"]), number(s["welch_p"], 4),
         number(s["cohens_d"]), "*" if s.get("significant") else ""]
        for s in data.get("statistics", [])
    ]  # fmt: skip
    return [
        {
            "title": _("Interpretation of CRRS"),
            "headers": [_("Method"), _("Band")],
            "rows": band_rows,
        },
        {
            "title": _("Welch's t-test and Cohen's d between methods"),
            "headers": [_("Metric"), "A", "B", "t", "p", "d", "p < 0.05"],
            "rows": stat_rows,
        },
    ]


def style_panel(run, summary: dict, data: dict) -> dict:
    nvcs = {m: data.get(m, {}).get("nvcs", {}) for m in run.methods}
    ertd = {m: data.get(m, {}).get("ertd", {}) for m in run.methods}
    return {
        "style_nvcs": charts.bars_with_ci(
            nvcs, run.methods, _("NVCS: style similarity to the sample dialogues (higher is closer)"),
            metric_label("nvcs"),
        ),
        "style_ertd": charts.bars_with_ci(
            ertd, run.methods, _("ERTD: readability gap to the sample dialogues (lower is closer)"),
            metric_label("ertd"),
        ),
    }  # fmt: skip


def roleplay_panel(run, summary: dict, data: dict) -> dict:
    scales = [
        (s, metric_label(f"jera_{s}"))
        for s in ("immersivity", "consistency", "creativity")
    ]
    almp = {m: (data.get("ci", {}).get(m, {}).get("almp") or {}) for m in run.methods}
    return {
        "roleplay_jera": charts.grouped_bars(
            data.get("jera", {}), run.methods, scales, _("JERA by sub-score (10–100 each)"),
            stacked=True,
        ),
        "roleplay_almp": charts.bars_with_ci(
            almp, run.methods, _("ALMP: share of the attribute list observed"), metric_label("almp")
        ),
    }  # fmt: skip


def roleplay_tables(run, data: dict) -> list[dict]:
    rows = []
    for method in run.methods:
        for entry in data.get("almp", {}).get(method, []):
            matched = ", ".join(
                f"{m['attribute']} ≈ {m['observed']} ({m['reason']})"
                for m in entry["matched"]
            )
            rows.append(
                [
                    method,
                    entry["session_id"],
                    matched or "—",
                    ", ".join(entry["missed"]) or "—",
                ]
            )
    headers = [
        _("Method"),
        _("Session"),
        _("Matched attributes"),
        _("Missed attributes"),
    ]
    return (
        [{"title": _("ALMP per session"), "headers": headers, "rows": rows}]
        if rows
        else []
    )


BUILDERS = {
    "quality": quality_panel,
    "style": style_panel,
    "roleplay": roleplay_panel,
    "simulation": simulation_panel,
    "slots": slots_panel,
}
TABLES = {"simulation": simulation_tables, "roleplay": roleplay_tables}


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
        tables = TABLES[suite](run, stored[suite]) if suite in TABLES else []
        sections.append({"suite": suite, "figures": figures, "tables": tables})
    return sections
