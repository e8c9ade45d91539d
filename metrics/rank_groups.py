"""Rank groups: methods whose 95% intervals overlap share a rank (issue 58,
item 5b; ``docs/methods.md`` "Rank groups").

A method's rank on a summary value is 1 + the number of methods whose
interval lies entirely on the better side of its own: for a value where
higher is better, methods whose lower bound is above this method's upper
bound (the rule of the LMSYS Chatbot Arena leaderboard, Chiang et al. 2024).
The bounds are compared at the comparisons' resolution
(:func:`metrics.stats.at_resolution`), so float noise never separates two
intervals that touch. The rule needs no order of the methods and is not
transitive on purpose: A may overlap B and B overlap C while A is above C;
then A and B rank 1 and C ranks 2 (one method, A, is clearly above C), where
chaining overlaps would put all three in one group and say less than the
intervals do.

A method without a value, or without an interval (fewer than two sessions,
an interval of width 0: ``ci_no_spread``, ``ci_no_variation``), has no rank (null, with a note
saying why) and does not count against the others: it is never placed by
a guess.

>>> ranked = rank_groups({"A": (0.6, 0.8), "B": (0.5, 0.7), "C": (0.3, 0.55), "D": None})
>>> ranked
{'A': 1, 'B': 1, 'C': 2, 'D': None}
>>> rank_groups({"fast": (1.0, 2.0), "slow": (3.0, 4.0)}, higher_is_better=False)
{'fast': 1, 'slow': 2}
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from metrics import registry
from metrics.stats import ZERO_WIDTH_NOTES, at_resolution
from metrics.suite import Metric, Suite

RANK_NO_VALUE = "rank_no_value"
RANK_NO_INTERVAL = "rank_no_interval"
RANK_CI_NO_SPREAD = "rank_ci_no_spread"

Interval = tuple[float, float]


def rank_groups(
    intervals: Mapping[str, Interval | None], higher_is_better: bool = True
) -> dict[str, int | None]:
    """Each method's rank from its interval ``(low, high)`` (None: no rank).

    >>> rank_groups({"A": (1.0, 2.0), "B": (2.0, 3.0)})  # touching: overlap
    {'A': 1, 'B': 1}
    >>> rank_groups({"A": (0.0, 1 / 3), "B": (1 - 2 / 3, 1.0)})  # at resolution
    {'A': 1, 'B': 1}
    """
    known = {m: i for m, i in intervals.items() if i is not None}

    def above(other: Interval, mine: Interval) -> bool:
        """``other`` lies entirely on the better side of ``mine``."""
        gap = other[0] - mine[1] if higher_is_better else mine[0] - other[1]
        return at_resolution(gap) > 0

    return {
        method: None
        if interval is None
        else 1
        + sum(above(other, interval) for o, other in known.items() if o != method)
        for method, interval in intervals.items()
    }


def panel_statistic(
    panel: object, method: str, metric_id: str, value: float | None
) -> dict[str, Any] | None:
    """A ``{"mean", "ci_low", "ci_high"}`` entry of a suite's panel data,
    under ``panel[method]`` or ``panel[<key>][method]``, named after the metric
    (``nvcs_avg`` -> ``nvcs``) and whose mean is ``value`` (the style and
    roleplay suites keep their values' intervals there).

    >>> panel = {"ci": {"M": {"jera": {"mean": 7.0, "n": 3, "ci_low": 6, "ci_high": 8}}}}
    >>> panel_statistic(panel, "M", "jera_avg", 7.0)["n"]
    3
    >>> panel_statistic(panel, "M", "jera_avg", 6.5) is None
    True
    """
    if not isinstance(panel, dict) or value is None:
        return None
    base = metric_id.removesuffix("_avg")
    places = [panel, *(v for v in panel.values() if isinstance(v, dict))]
    for place in places:
        found = place.get(method)
        found = found.get(base) if isinstance(found, dict) else None
        if isinstance(found, dict) and {"mean", "ci_low", "ci_high"} <= found.keys():
            mean = found["mean"]
            if isinstance(mean, int | float) and math.isclose(mean, value):
                return found
    return None


def interval_stems(metric_id: str) -> tuple[str, ...]:
    """The names a value's own interval may have, ``<stem>_ci_low``: the id,
    the id without ``_avg``, the id without its last word (``bt_score`` ->
    ``bt``); the first present is the value's, never a shorter stem's.

    >>> interval_stems("pas_avg"), interval_stems("bt_score")
    (('pas_avg', 'pas', 'pas'), ('bt_score', 'bt_score', 'bt'))
    """
    return (metric_id, metric_id.removesuffix("_avg"), metric_id.rpartition("_")[0])


def own_interval(
    aggregates: dict[str, Any], method: str, metric_id: str
) -> Interval | None:
    """A summary value's own 95% interval: ``<stem>_ci_low``/``_ci_high``
    of the summary, else the interval of the suite's panel statistic whose
    mean is the value; None without a value or without both ends.

    >>> values = {"bt_score": 0.3, "bt_ci_low": -0.1, "bt_ci_high": 0.7}
    >>> own_interval({"summary": {"M": values}}, "M", "bt_score")
    (-0.1, 0.7)
    >>> own_interval({"summary": {"M": {"bt_score": 0.3}}}, "M", "bt_score") is None
    True
    """
    values = (aggregates.get("summary") or {}).get(method) or {}
    value = values.get(metric_id)
    if value is None:
        return None
    stems = interval_stems(metric_id)
    low = next((values[f"{s}_ci_low"] for s in stems if f"{s}_ci_low" in values), None)
    high = next(
        (values[f"{s}_ci_high"] for s in stems if f"{s}_ci_high" in values), None
    )
    if low is None or high is None:
        metric = registry.spec(metric_id)
        panels = aggregates.get("panels") or {}
        panel = panels.get(metric.suite) if metric is not None else None
        found = panel_statistic(panel, method, metric_id, value) or {}
        low, high = found.get("ci_low"), found.get("ci_high")
    if not _finite(low) or not _finite(high):
        return None
    return float(low), float(high)  # type: ignore[arg-type]  # _finite: numbers


def _finite(x: object) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def declares_interval(metric: Metric) -> bool:
    """Whether the metric's suite declares the value's own interval
    (``<stem>_ci_low`` among its summary metrics).

    >>> declares_interval(registry.spec("bt_score")), declares_interval(registry.spec("al_avg"))
    (True, False)
    """
    suite = registry.get(metric.suite) if metric.suite in registry.names() else None
    ids = {m.id for m in suite.summary_metrics()} if suite else set()
    return any(f"{stem}_ci_low" in ids for stem in interval_stems(metric.id))


def ranked_metrics(
    aggregates: dict[str, Any], methods: list[str], suites: Iterable[str]
) -> list[Metric]:
    """The summary metrics that get ranks: ranked (a best method is marked),
    not an interval end or a count, and with their own interval, declared by
    the suite or present for some method (a panel statistic's)."""
    found = []
    for name in suites:
        if name not in registry.names():
            continue
        for metric in registry.get(name).summary_metrics():
            if not metric.ranked or metric.keyed:
                continue
            if declares_interval(metric) or any(
                own_interval(aggregates, m, metric.id) for m in methods
            ):
                found.append(metric)
    return found


def ranks(
    aggregates: dict[str, Any] | None,
    methods: list[str],
    suites: Iterable[str],
    said: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(ranks, rank_notes)``: ``{method: {metric: rank | None}}`` for every
    ranked summary value with an interval, and ``{method: {metric: {code,
    params}}}`` saying why a rank is null (``rank_no_value``,
    ``rank_ci_no_spread``, ``rank_no_interval``). ``said``: the summary
    notes (``metrics.results.summary_notes``), where an interval's
    ``ci_no_spread`` or ``ci_no_variation`` is read.

    >>> summary = {"A": {"pairwise_winrate": 0.7, "pairwise_winrate_ci_low": 0.6,
    ...                  "pairwise_winrate_ci_high": 0.8},
    ...            "B": {"pairwise_winrate": 0.3}}
    >>> found, why = ranks({"summary": summary}, ["A", "B"], ["pairwise"])
    >>> found["A"]["pairwise_winrate"], found["B"]["pairwise_winrate"]
    (1, None)
    >>> why["B"]["pairwise_winrate"]
    {'code': 'rank_no_interval', 'params': None}
    """
    aggregates = aggregates or {}
    summary = aggregates.get("summary") or {}
    said = said or {}
    found: dict[str, dict[str, Any]] = {m: {} for m in methods}
    notes: dict[str, dict[str, Any]] = {}
    for metric in ranked_metrics(aggregates, methods, suites):
        intervals = {m: own_interval(aggregates, m, metric.id) for m in methods}
        for method, rank in rank_groups(intervals, metric.higher_is_better).items():
            found[method][metric.id] = rank
            if rank is not None:
                continue
            value = (summary.get(method) or {}).get(metric.id)
            code = RANK_NO_VALUE if value is None else RANK_NO_INTERVAL
            if value is not None and _no_spread(said.get(method) or {}, metric.id):
                code = RANK_CI_NO_SPREAD
            notes.setdefault(method, {})[metric.id] = {"code": code, "params": None}
    return found, notes


def _no_spread(noted: dict[str, Any], metric_id: str) -> bool:
    """Whether the value's interval was left out for having no width."""
    return any(
        (noted.get(f"{stem}_ci_{end}") or {}).get("code") in ZERO_WIDTH_NOTES
        for stem in interval_stems(metric_id)
        for end in ("low", "high")
    )


def rank_metric(suite: Suite, ranked: dict[str, Any]) -> str | None:
    """The column a suite's comparison table ranks its methods by: the
    suite's lead metric when it is ranked, else its first table column
    that is; None when no column has ranks (no Rank column).

    >>> rank_metric(registry.get("pairwise"), {"A": {"bt_score": 1,
    ...     "pairwise_winrate": 1}})
    'pairwise_winrate'
    >>> rank_metric(registry.get("quality"), {"A": {}}) is None
    True
    """
    present = {key for values in ranked.values() for key in values}
    columns = [m.id for m in suite.summary_metrics() if m.in_table and m.id in present]
    lead = suite.lead_metric.id
    return lead if lead in columns else next(iter(columns), None)
