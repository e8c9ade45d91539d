"""Run planning, suite dispatch and aggregation (pure; the judge is injected).

A run is split into chunks of whole sessions (byte ranges of the upload), so
a worker reads only its own lines. Progress is counted in response units,
(session, round, method) triples, the same unit for every suite. Suites are
looked up in the registry by name; nothing here knows a particular suite.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from config import DEFAULTS
from core.status import Cancelled, RowStatus, StorageUnavailable
from metrics import (
    basis,
    columns,
    counts,
    notes,
    nothing_scored,
    panel_items,
    registry,
    replies,
    row_source,
    self_preference,
    stats,
)
from metrics.items import unjudged
from metrics.judging import Judge, Panel
from metrics.rows import ResultRow, result_row
from metrics.suite import Suite, SuiteSummary

log = logging.getLogger(__name__)


def units(rounds: int, methods: list[str]) -> int:
    return rounds * len(methods)


def plan_chunks(
    spans: list[tuple[int, int, int]], chunk_units: int = DEFAULTS["CHUNK_UNITS"]
) -> list[tuple[int, int, int]]:
    """Group consecutive session spans ``(start, end, units)`` into chunks.

    >>> plan_chunks([(0, 10, 50), (10, 20, 50), (20, 30, 50), (30, 35, 50)], 100)
    [(0, 20, 100), (20, 35, 100)]
    """
    chunks: list[tuple[int, int, int]] = []
    start: int | None = None
    end = total = 0
    for span_start, span_end, span_units in spans:
        if start is None:
            start = span_start
        end, total = span_end, total + span_units
        if total >= chunk_units:
            chunks.append((start, end, total))
            start, total = None, 0
    if start is not None:
        chunks.append((start, end, total))
    return chunks


def evaluate(
    sessions: list[dict[str, Any]],
    suites: list[str],
    methods: list[str],
    judge: Judge | Panel | None,
    options: dict[str, Any],
) -> list[ResultRow]:
    """Every suite's rows for a chunk. A bug in one suite turns that suite's
    rows into ``error`` rows; the other suites keep theirs. A cancelled run
    stops here: nothing of the chunk is stored."""
    rows: list[ResultRow] = []
    for name in suites:
        suite = registry.get(name)
        # the replies there are, by the methods that gave them (replies.py)
        batches = (
            {tuple(methods): sessions}
            if suite.reads_missing
            else replies.parts(sessions, methods)
        )
        for turn, one in enumerate(panel(judge) if suite.uses_judge else [None]):
            model = judge_name(one)
            for group, parts in batches.items():
                found = _run_suite(suite, parts, list(group), one, options)
                rows += _attributed(found, model, first=turn == 0)
        rows += replies.missing_rows(sessions, suite, methods)
    return rows


def _run_suite(
    suite: Suite,
    sessions: list[dict[str, Any]],
    methods: list[str],
    judge: Judge | None,
    options: dict[str, Any],
) -> list[ResultRow]:
    """The suite's rows; a bug in it turns them into ``error`` rows."""
    try:
        return suite.run(sessions, methods, judge, options)
    except (Cancelled, StorageUnavailable):
        raise  # not the suite's: the chunk's attempt fails (and is tried again)
    except Exception as exc:  # a bug in one suite must not lose the others
        log.exception("suite %s failed on a chunk", suite.name)
        reason = notes.note("internal_error", kind=type(exc).__name__)
        return failure_rows(sessions, suite, methods, reason)


def add_per_judge(
    summary: dict[str, Any], suite: Suite, rows: Rows, methods: list[str]
) -> None:
    """With rows of two or more judges (a panel), ``<id>@<judge>`` and its
    ``<id>_n@<judge>`` for the suite's ``per_judge`` metrics, from that
    judge's rows alone (the plain value is the panel's, from the items every
    judge of the method's panel scored: ``metrics/panel_items.py``, which
    also nulls it, with its reason, when a judge of that panel scored none).
    A judge with no row of a method (a comparison across runs judged by
    other models) is not in that method's panel: its silence there leaves
    the method's value alone (docs/metrics/README.md, "Judge panels")."""
    wanted = [m.id for m in suite.summary_metrics() if m.per_judge]
    if not wanted:
        return
    rows = row_source.readable(rows, suite.summary_details)
    judges = sorted(set(row_source.judge_names(rows)) - {""})
    if len(judges) < 2:
        return
    for judge in judges:
        own = row_source.of_judge(rows, judge)
        alone = suite.summarize(own, methods).get("summary", {})
        counts.add_counts(alone, suite, own)
        del own
        for method in methods:
            values = alone.get(method, {})
            for metric_id in wanted:
                summary.setdefault(method, {})[f"{metric_id}@{judge}"] = values.get(
                    metric_id
                )
                summary[method][counts.count_key(f"{metric_id}@{judge}")] = values.get(
                    counts.count_key(metric_id)
                )


def _attributed(found: list[ResultRow], model: str, first: bool) -> list[ResultRow]:
    """A judge's rows named after it; a human label's row (``HUMAN``: labels a
    person gave, the file's ``human`` field) and a recorded judge's verdict
    (``RECORDED``, the file's ``judges``) once, with no judge (a panel
    runs the suite once per judge, and each pass makes it).

    >>> rows = [{"metric": "al"}, {"metric": "human_al"}]
    >>> _attributed(rows, "x", first=True)
    [{'metric': 'al', 'judge': 'x'}, {'metric': 'human_al'}]
    >>> _attributed(rows, "y", first=False)
    [{'metric': 'al', 'judge': 'y'}]
    """
    if not model:
        return found
    return [
        row if unjudged(row["metric"]) else {**row, "judge": model}
        for row in found
        if first or not unjudged(row["metric"])
    ]


def panel(judge: Judge | Panel | None) -> list[Judge | None]:
    """The judges a judge suite runs with: a panel's, or the one (or None)."""
    return list(getattr(judge, "judges", None) or [judge])


def judge_name(judge: object) -> str:
    """The model a judge asks ("" for none, or a judge without a config)."""
    config = getattr(judge, "config", None)
    return str(getattr(config, "model", "") or "")


def failure_rows(
    sessions: list[dict[str, Any]], suite: Suite, methods: list[str], note: notes.Note
) -> list[ResultRow]:
    """One ``error`` row per (session, method) on the suite's headline metric.

    >>> rows = failure_rows([{"session_id": "s"}], registry.get("quality"), ["M"],
    ...                     notes.note("internal_error", kind="KeyError"))
    >>> [(r["metric"], r["status"], r["note"]) for r in rows]
    [('coherence', 'error', 'internal error: KeyError')]
    """
    metric = suite.headline.id
    return [
        result_row(
            {"session_id": s["session_id"], "round": None, "method": m},
            metric,
            None,
            RowStatus.ERROR,
            note,
        )
        for s in sessions
        for m in methods
    ]


Rows = columns.Rows | row_source.RowSource
SuiteRows = Callable[[Suite], Rows]
# (method, metric) -> the items a panel left out and the judges that lacked them
Fewer = dict[tuple[str, str], dict[str, Any]]


def aggregate(
    rows_of: SuiteRows,
    suites: list[str],
    methods: list[str],
    max_compared: int = DEFAULTS["MAX_COMPARED_METHODS"],
    on_step: Callable[[int, int], object] | None = None,
    replies_missing: bool = False,
    families: dict[str, Any] | None = None,
    judge: str | None = None,
) -> dict[str, Any]:
    """Summary, curves, comparisons and panel data of a finished run.

    ``rows_of(suite)`` gives that suite's rows only (round None = session
    level), as dicts, as :class:`~metrics.columns.RowColumns` or as a
    :class:`~metrics.row_source.RowSource`, which suites read a few metrics
    at a time. ``on_step(done, total)`` hears each step finished (one per
    suite, one for the comparisons), so a large run's summary shows progress.
    ``replies_missing``: the file lacks replies; each comparison then counts
    the sessions it left out unpaired (``stats.compare_paired``).
    ``families``: the model families the run named (``run.families``), for
    the self-preference estimates; ``judge``: the run's one judge model (rows
    that name no judge are its).
    """
    steps = len(suites) + 1
    report = on_step or (lambda done, total: None)
    summary: dict[str, dict[str, Any]] = {method: {} for method in methods}
    curves, session_values, panels = {}, {}, {}
    validity: dict[str, Any] = {}
    summary_notes: dict[str, dict[str, Any]] = {}
    value_parts: dict[str, dict[str, Any]] = {}  # table column -> method -> basis.Parts
    for step, name in enumerate(suites, start=1):
        suite = registry.get(name)
        result, suite_summary, noted = _summarize(suite, rows_of, methods)
        for method, values in suite_summary.items():
            summary.setdefault(method, {}).update(values)
        for method, found in noted.items():
            summary_notes.setdefault(method, {}).update(found)
        curves.update(result.get("curves", {}))
        session_values.update(result.get("session_values", {}))
        if result.get("panel") is not None:
            panels[name] = result["panel"]
        validity.update(result.get("validity") or {})
        if families and name == _scores_suite():
            validity["self_preference"] = self_preference.estimates(
                rows_of(suite), families, judge
            )
        value_parts.update(result.get("value_parts") or {})
        report(step, steps)
    comparisons = stats.compare_all(
        session_values, methods, max_compared, count_unpaired=replies_missing
    )
    basis.add_value_deltas(comparisons, summary, session_values, value_parts)
    report(steps, steps)
    return {
        "summary": summary,
        "curves": curves,
        "comparisons": comparisons,
        "panels": panels,
        "judge_validity": validity,
        # why a summary value is null although its rows were scored
        "summary_notes": summary_notes,
    }


def _scores_suite() -> str | None:
    """The suite whose ``al`` scores self-preference is measured on (the
    one measuring the judge's length bias)."""
    for suite in registry.suites():
        if any(name == "length_spearman" for name, _ in suite.validity):
            return suite.name
    return None


def _summarize(
    suite: Suite, rows_of: SuiteRows, methods: list[str]
) -> tuple[SuiteSummary, dict[str, Any], dict[str, Any]]:
    """One suite's summary with its session counts and per-judge values;
    its rows are freed on return."""
    rows = row_source.readable(rows_of(suite), suite.summary_details)
    pooled, fewer = _panel_rows(suite, rows)
    result = suite.summarize(pooled, methods)
    own_validity = suite.summarize(rows, methods).get("validity") if fewer else None
    if own_validity is not None:
        # the judge audit is each judge's own (its AUC, length bias, human
        # agreement), like <id>@<judge>: from all of its rows, not only the
        # items the other judges scored too
        result["validity"] = own_validity
    suite_summary = result.get("summary", {})
    counts.add_counts(suite_summary, suite, pooled)
    del pooled
    noted = _fewer_notes(suite, fewer, suite_summary, methods)
    _say_why_charts_are_empty(suite, result, fewer)
    add_per_judge(suite_summary, suite, rows, methods)
    own = (result.get("panel") or {}).get("notes") or {}  # the suite's reasons
    for method, found in nothing_scored.notes(
        suite, rows, suite_summary, methods, [noted, own]
    ).items():  # a value with nothing scored behind it: why, from its rows
        noted.setdefault(method, {}).update(found)
    return result, suite_summary, noted


def not_scored(
    causes: Iterable[tuple[str, str, str, int, dict[str, Any]]], suites: list[str]
) -> dict[str, list[dict[str, Any]]]:
    """Per suite and metric, why its rows have no value, most rows first:
    ``{"metric", "status", "code", "rows", "params"}`` (``causes``:
    ``(metric, status, note code, rows, one row's note parameters)``).

    >>> found = not_scored([("nvcs", "unscored", "empty_response", 2, {}),
    ...     ("ertd", "not_applicable", "response_not_english", 9, {})], ["style"])
    >>> [(c["code"], c["rows"]) for c in found["style"]]
    [('response_not_english', 9), ('empty_response', 2)]
    """
    owner = {
        metric.id: name
        for name in suites
        if name in registry.names()
        for metric in registry.get(name).metrics
    }
    found: dict[str, dict[tuple[str, str, str], dict[str, Any]]] = {}
    for metric, status, code, rows, params in causes:
        suite = owner.get(metric.partition("@")[0])
        if suite is None:
            continue
        head = metric.partition("@")[0]
        cause = found.setdefault(suite, {}).setdefault(
            (status, code, head),
            {
                "metric": head,
                "status": status,
                "code": code,
                "rows": 0,
                "params": params,
            },
        )
        cause["rows"] += rows
    return {
        suite: sorted(tally.values(), key=lambda cause: -cause["rows"])
        for suite, tally in found.items()
    }


def _panel_rows(suite: Suite, rows: Rows) -> tuple[Rows, Fewer]:
    """A panel suite's rows kept to the items every judge scored, and what
    was left out (``metrics/panel_items.py``); other suites' rows as they are."""
    if not any(m.per_judge for m in suite.summary_metrics()):
        return rows, {}
    if len(set(row_source.judge_names(rows)) - {""}) < 2:
        return rows, {}
    return panel_items.common_items(rows, suite.summary_details)


def _say_why_charts_are_empty(suite: Suite, result: SuiteSummary, fewer: Fewer) -> None:
    """A panel whose items no judge pair scored in common draws nothing:
    its charts say so (else the suite's "needs a configured judge")."""
    if not fewer or any(
        points
        for curve in result.get("curves", {}).values()
        for points in curve.values()
    ):
        return
    judges = sorted({judge for left in fewer.values() for judge in left["judges"]})
    reason = {"code": "panel_no_common_items", "params": {"judges": ", ".join(judges)}}
    reasons = result.setdefault("panel", {}).setdefault("reasons", {})
    for chart in suite.panel.charts:
        reasons.setdefault(chart.id, reason)


def _fewer_notes(
    suite: Suite, fewer: Fewer, summary: dict[str, Any], methods: list[str]
) -> dict[str, Any]:
    """``{method: {panel metric: note}}`` where the panel left rows out
    (``metrics/panel_items.py``): a value null because no item was scored by
    every judge (``panel_no_common_items``: a judge failed every call, and
    what is left would be the other judges' value under the panel's name),
    and the panel's own values (``per_judge``) kept to the items every judge
    scored (``panel_common_items``). Both name the judges that scored fewer."""
    found: dict[str, dict[str, Any]] = {}
    for metric in suite.summary_metrics():
        source = suite.source_of(metric)
        for method in methods:
            left_out = fewer.get((method, source)) if source is not None else None
            if not left_out:
                continue
            judges = ", ".join(left_out["judges"])
            values = summary.get(method, {})
            if values.get(metric.id) is None and not values.get(
                counts.count_key(metric.id)
            ):  # no session left: null because of the panel, not the data
                note = {"code": "panel_no_common_items", "params": {"judges": judges}}
            elif metric.per_judge:  # the panel's headline values say it once
                params = {"judges": judges, "items": left_out["items"]}
                note = {"code": "panel_common_items", "params": params}
            else:
                continue
            found.setdefault(method, {})[metric.id] = note
    return found
