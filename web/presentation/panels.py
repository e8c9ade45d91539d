"""Turns each suite's declarative panel (``Suite.panel``) into Plotly figures
and tables, from the aggregates a run stored when it finished (no row scans).

Nothing here knows a particular suite: a chart says where its values are
(``summary``, ``curves.<metric>``, ``panel`` or ``panel.<key>``) and which
series it draws; a table gives its columns and a function that lists its rows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from flask_babel import get_locale

from core.i18n import _l, text
from core.status import FINAL_RUN
from metrics import registry
from metrics.notes import translate
from metrics.suite import Chart, Column, Suite, Table
from reports.formatting import count, number, p_value
from translations import _, metric_label
from web.presentation import cancelled, charts
from web.presentation.single_flight import SingleFlight

if TYPE_CHECKING:
    from reports import Reported
    from store.models import Run


class Sources:
    """Where a suite's chart values live in a run's stored aggregates."""

    def __init__(self, aggregates: dict[str, Any], suite: str) -> None:
        self.aggregates = aggregates
        self.panel: dict[str, Any] = (aggregates.get("panels") or {}).get(suite) or {}

    def __getitem__(self, path: str) -> Any:  # stored JSON: a dict or a list
        head, _, key = path.partition(".")
        root = self.panel if head == "panel" else self.aggregates.get(head) or {}
        return root.get(key) or {} if key else root


def _series(chart: Chart) -> list[tuple[str, str]]:
    return [(key, metric_label(label_id)) for key, label_id in chart.series]


def _y_title(chart: Chart) -> str:
    return metric_label(chart.y_metric) if chart.y_metric else text(chart.y_title)


def _ci_values(
    chart: Chart, data: Sources, methods: list[str]
) -> dict[str, dict[str, Any]]:
    """``{method: {mean, ci_low, ci_high, n}}`` of the chart's one series."""
    key = chart.series[0][0]
    if chart.source == "summary":  # <key>_avg with <key>_ci_low/_ci_high beside it
        summary = data["summary"]
        return {
            m: {
                end: summary.get(m, {}).get(f"{key}_{suffix}")
                for end, suffix in (
                    ("mean", "avg"),
                    ("ci_low", "ci_low"),
                    ("ci_high", "ci_high"),
                )
            }
            for m in methods
        }
    source = data[chart.source]
    return {m: source.get(m, {}).get(key) or {} for m in methods}


def figure(chart: Chart, data: Sources, methods: list[str]) -> dict[str, Any] | None:
    """The Plotly figure of one chart, or None when it has nothing to draw."""
    title = text(chart.title)
    if chart.kind == "curve":
        labels = {
            "title": title,
            "x": text(chart.x_title),
            "y": _y_title(chart),
            "range": list(chart.y_range) if chart.y_range else None,
            "left_out": text(LEFT_OUT),
            "x_at_points": chart.x_at_points,
        }
        # a curve's series are the methods, or the names ``columns`` lists
        names = list(data[chart.columns]) if chart.columns else methods
        return charts.curve_figure(data[chart.source], names, labels)
    if chart.kind == "radar":
        return charts.radar_figure(
            data[chart.source], methods, _series(chart), title, chart.y_range
        )
    if chart.kind in ("bars", "stacked_bars"):
        stacked = chart.kind == "stacked_bars"
        return charts.grouped_bars(
            data[chart.source], methods, _series(chart), title, stacked
        )
    if chart.kind == "bars_ci":
        return charts.bars_with_ci(
            _ci_values(chart, data, methods), methods, title, _y_title(chart)
        )
    if chart.kind == "forest":
        return charts.forest_plot(
            _ci_values(chart, data, methods), methods, title, _y_title(chart)
        )
    if chart.kind == "heatmap":
        columns = data[chart.columns] if chart.columns else []
        return charts.heatmap(data[chart.source], methods, list(columns), title)
    if chart.kind == "box":
        marks = data[chart.marks] if chart.marks else None
        return charts.box_plot(
            data[chart.source],
            methods,
            title,
            _y_title(chart),
            marks=marks,
            mark_label=text(chart.mark_label),
        )
    raise ValueError(f"unknown chart kind {chart.kind!r}")


def cell(column: Column, value: Any) -> str:
    """One table cell, formatted per its column."""
    if column.format == "flag":
        return "*" if value else ""
    if value is None:
        return "—"
    formats: dict[str, Callable[[], str]] = {
        "metric": lambda: metric_label(value),
        "score": lambda: number(value),
        "p": lambda: p_value(value),
        "count": lambda: count(value),
        "choice": lambda: text(column.choices.get(value)) or str(value),
    }
    return formats.get(column.format, lambda: str(value))()


def table(spec: Table, data: Sources, methods: list[str]) -> dict[str, Any]:
    rows = spec.rows(data.panel, methods)
    return {
        "id": spec.id,
        "title": text(spec.title),
        "headers": [text(column.label) for column in spec.columns],
        "rows": [[cell(c, row.get(c.key)) for c in spec.columns] for row in rows],
    }


NOTHING_TO_DRAW = _l("No scored values to show.")
# a curve's point with ``in_average`` false (docs/results-format.md "curves")
LEFT_OUT = _l(
    "Hollow: a round resting on too few sessions, left out of the average and slope"
)


BUILT = SingleFlight(64)  # ~50 KB of figure data each


def section(suite: Suite, run: Reported) -> dict[str, Any]:
    data = Sources(run.aggregates or {}, suite.name)
    cause = true_cause(data.aggregates, suite.name)
    figures: dict[str, dict[str, Any]] = {}
    missing: list[dict[str, str]] = []
    for chart in suite.panel.charts:
        built = figure(chart, data, run.methods)
        if built:
            figures[chart.id] = built
        else:  # an empty chart says why instead of vanishing
            said = (data.panel.get("reasons") or {}).get(chart.id)
            reason = cause or text(chart.empty or suite.panel.empty or NOTHING_TO_DRAW)
            shown = (
                translate(said["code"], said.get("params"), None) if said else reason
            )
            missing.append({"title": text(chart.title), "reason": shown})
    tables = [table(spec, data, run.methods) for spec in suite.panel.tables]
    tables = [found for found in tables if found["rows"]]
    empty = not figures and not tables
    # a cancelled run: the suite's results cover the sessions it stored
    said = cancelled.suite_note(run, suite.name)
    panel = _said_of_every_chart(data.panel.get("reasons") or {}, suite)
    fallback = (
        said["empty"] or panel or cause or text(suite.panel.empty or NOTHING_TO_DRAW)
    )
    # under the panel's reason, the rows' causes that led to it
    causes = causes_shown(data.aggregates, suite.name) if not empty or panel else []
    return {
        "suite": suite.name,
        "figures": figures,
        "tables": tables,
        "missing": [] if empty else missing,
        "empty": fallback if empty else None,
        "covers": said["covers"],
        "causes": causes,
    }


def _said_of_every_chart(reasons: dict[str, Any], suite: Suite) -> str | None:
    """The one reason every chart of the suite gives, when they all give the
    same (a panel whose judges scored no item in common): the suite's true
    reason, before the rows' causes (a judge's HTTP 500s) that led to it."""
    said = [reasons[chart.id] for chart in suite.panel.charts if chart.id in reasons]
    if len(said) < len(suite.panel.charts) or len({r["code"] for r in said}) != 1:
        return None
    shown = str(translate(said[0]["code"], said[0].get("params"), None))
    return shown[:1].upper() + shown[1:]  # a note read as a sentence


# a cause the suite's own empty text already names: a judge not configured
SAID_BY_THE_SUITE = ("not_configured",)


def causes_shown(aggregates: dict[str, Any], suite: str, most: int = 3) -> list[str]:
    """The suite's commonest reasons for values it has not ("ERTD: 4 values
    not scored: …"), under its charts: a table cell without a value then
    has its reason on the page."""
    causes = (aggregates.get("not_scored") or {}).get(suite) or []
    return [
        f"{metric_label(cause['metric'])}: {_cause_text(cause)}"
        for cause in causes[:most]
        if cause["status"] not in SAID_BY_THE_SUITE and "metric" in cause
    ]


def _cause_text(cause: dict[str, Any]) -> str:
    try:
        reason = translate(cause["code"], cause.get("params"), cause["code"])
    except (KeyError, TypeError, ValueError):  # parameters of another release
        reason = cause["code"]
    return str(
        _(
            "%(rows)s values not scored: %(reason)s",
            rows=count(cause["rows"]),
            reason=reason or cause["status"],
        )
    )


def true_cause(aggregates: dict[str, Any], suite: str) -> str | None:
    """What the suite's rows say they lack, most rows first ("380 values not
    scored: the judge's reply had no readable verdict"); None when nothing
    is recorded (an earlier release) or no judge was configured, which the
    suite's own empty text says."""
    causes = (aggregates.get("not_scored") or {}).get(suite) or []
    first = causes[0] if causes else None
    if first is None or first["status"] in SAID_BY_THE_SUITE:
        return None
    return _cause_text(first)


def build(run: Reported) -> list[dict[str, Any]]:
    """``[{"suite", "figures": {id: figure}, "tables", "empty"}]`` for the
    suites of the run that have a panel (a suite removed since is skipped).

    A finished run never changes, and building its Plotly figures is most of
    a dashboard's time (0.2-0.4 s for a 300-session run): they are kept per
    (run, finish time, language) in a small per-process cache."""
    if getattr(run, "status", None) not in FINAL_RUN or not getattr(run, "id", None):
        return _build(run)  # in progress, or a comparison across runs
    family = (run.id, str(get_locale()))
    # a cancelled run's results come after its status (its summary); only a
    # Run has a status (a comparison has none)
    version = f"{cast('Run', run).finished_at}|{bool(run.aggregates)}"
    built: list[dict[str, Any]] = BUILT.get(family, version, lambda: _build(run))
    return built


def _build(run: Reported) -> list[dict[str, Any]]:
    known = set(registry.names())
    suites = [registry.get(name) for name in run.suites if name in known]
    return [
        section(suite, run)
        for suite in suites
        if suite.panel.charts or suite.panel.tables
    ]
