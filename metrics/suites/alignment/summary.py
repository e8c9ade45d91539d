"""The alignment suite's summary: AL(k) curves and their statistics,
(``docs/metrics/alignment.md``), computed from the rows of one or two
metrics at a time (:mod:`metrics.row_source`).

The summary is computed over AL(k), the per-round mean across sessions, and
the regression is fitted on (k, AL(k)), not on the flattened list of all
scores, which is what the original public tool got wrong:

>>> rows = [
...     {"session_id": s, "round": k, "method": "M", "metric": "al",
...      "value": v, "status": "ok"}
...     for s, start in (("a", 50), ("b", 30))
...     for k, v in zip(range(1, 6), range(start, start + 50, 10))
... ]
>>> summary = summarize(rows, ["M"])["summary"]["M"]
>>> summary["al_slope"], summary["al_intercept"], summary["al_r2"], summary["al_avg"]
(10.0, 30.0, 1.0, 60.0)
"""

from __future__ import annotations

from statistics import fmean
from typing import Any

from metrics import row_source, stats
from metrics.items import Rows
from metrics.rows import session_means
from metrics.suite import SuiteSummary
from metrics.suites.alignment import judge_checks, length_control

# the five parts of an AL verdict, 0-20 each
DIMENSIONS = ("style", "content", "naturalness", "personalization", "conversation")
# A round of a curve resting on fewer sessions than this (or than the most
# sessions any round of that curve rests on, if fewer) is drawn but left out
# of the curve's average and line (docs/metrics/alignment.md "Sparse
# rounds"). A method constant, not a setting: the same file gives the same
# AL average on every deployment, and the witness reads it from the card.
MIN_ROUND_SESSIONS = 3


def curves(
    rows: Rows, metric: str, methods: list[str]
) -> dict[str, list[dict[str, Any]]]:
    """Per method, ``metric``'s curve: the mean of its scored values over
    sessions at each round k, with CI (one round's values at a time). A
    panel's judges are pooled per item first (their mean), so n counts
    sessions (``row_source.item_groups``)."""
    points: dict[str, list[dict[str, Any]]] = {method: [] for method in methods}
    for method, k, values, _ in row_source.item_groups(rows, metric):
        if method not in points:
            continue
        if k is None:
            raise ValueError(f"a {metric} row has no round")
        points[method].append({"k": k, **stats.mean_ci(values)})
    for found in points.values():
        left_out = sparse_rounds(found)
        for point in found:
            point["in_average"] = point["k"] not in left_out
    return points


def sparse_rounds(points: list[dict[str, Any]]) -> list[int]:
    """The rounds of a curve left out of its average and line: those resting
    on fewer than ``MIN_ROUND_SESSIONS`` sessions, the bar lowered to the most
    sessions any round rests on, so a file of one or two sessions keeps an
    average.

    >>> sparse_rounds([{"k": 1, "n": 30}, {"k": 2, "n": 3}, {"k": 3, "n": 2}])
    [3]
    >>> sparse_rounds([{"k": 1, "n": 2}, {"k": 2, "n": 1}])
    [2]
    """
    if not points:
        return []
    bar = min(MIN_ROUND_SESSIONS, max(p["n"] for p in points))
    return [p["k"] for p in points if p["n"] < bar]


def normalized(points: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """N-AL(k) = (AL(k) − min) / (max − min); undefined when max = min.

    >>> [p["mean"] for p in normalized([{"k": 1, "mean": 40.0, "n": 2},
    ...                                 {"k": 2, "mean": 60.0, "n": 2}])]
    [0.0, 1.0]
    """
    means = [p["mean"] for p in points]
    if not means or max(means) == min(means):
        return None
    low, span = min(means), max(means) - min(means)
    return [
        {
            "k": p["k"],
            "mean": (p["mean"] - low) / span,
            "n": p["n"],
            "ci_low": None,
            "ci_high": None,
            **({"in_average": p["in_average"]} if "in_average" in p else {}),
        }
        for p in points
    ]


def _curve_summary(
    points: list[dict[str, Any]], prefix: str
) -> dict[str, float | None]:
    """The mean of the curve and its least-squares line over the rounds in
    the average (``in_average``), and the mean and slope over every round
    (``<prefix>_avg_all_rounds``, ``<prefix>_slope_all_rounds``). R² is left
    undefined through two rounds: a line always fits two points, so it
    would be 1 whatever AL did (:func:`curve_notes` says so).

    >>> two = [{"k": 1, "mean": 40.0}, {"k": 2, "mean": 55.0}]
    >>> found = _curve_summary(two, "al")
    >>> found["al_slope"], found["al_r2"]
    (15.0, None)
    >>> sparse = [*two, {"k": 3, "mean": 100.0, "in_average": False}]
    >>> found = _curve_summary(sparse, "al")
    >>> found["al_avg"], found["al_avg_all_rounds"], found["al_slope_all_rounds"]
    (47.5, 65.0, 30.0)
    """
    kept = [p for p in points if p.get("in_average", True)]
    slope, intercept, r2 = stats.ols([p["k"] for p in kept], [p["mean"] for p in kept])
    every_slope = stats.ols([p["k"] for p in points], [p["mean"] for p in points])[0]
    return {
        f"{prefix}_avg": fmean(p["mean"] for p in kept) if kept else None,
        f"{prefix}_slope": slope,
        f"{prefix}_intercept": intercept,
        f"{prefix}_r2": None if len(kept) == 2 else r2,
        f"{prefix}_avg_all_rounds": fmean(p["mean"] for p in points)
        if points
        else None,
        f"{prefix}_slope_all_rounds": every_slope,
    }


def curve_notes(
    points: list[dict[str, Any]], found: dict[str, Any], prefix: str
) -> dict[str, dict[str, Any]]:
    """Why the line's values of a curve are null (summary notes): one round
    has no line, two rounds have no meaningful R², a flat curve has no
    variance for R² to explain. A curve with no point says nothing: its
    ``_n`` (0) does. With rounds left out (:func:`sparse_rounds`) the
    average and the line say which (``<prefix>_sparse_rounds``), and that is
    the reason the line gives when the rounds left in are too few for it.

    >>> curve_notes([{"k": 1, "mean": 40.0}, {"k": 2, "mean": 55.0}],
    ...             {"al_r2": None}, "al")
    {'al_r2': {'code': 'r2_two_rounds'}}
    >>> curve_notes([{"k": 1, "mean": 40.0, "n": 3},
    ...              {"k": 2, "mean": 55.0, "n": 1, "in_average": False}],
    ...             {"al_r2": None}, "al")["al_slope"]
    {'code': 'al_sparse_rounds', 'params': {'rounds': '2', 'min': 3}}
    """
    left_out = [p["k"] for p in points if not p.get("in_average", True)]
    kept = [p for p in points if p.get("in_average", True)]
    said = _line_notes(kept, found, prefix)
    if left_out:
        rounds = ", ".join(map(str, left_out))
        params = {"rounds": rounds, "min": MIN_ROUND_SESSIONS}
        sparse = {"code": f"{prefix}_sparse_rounds", "params": params}
        for part in ("avg", "slope", "intercept", "r2"):
            key = f"{prefix}_{part}"
            if (part != "avg" and len(kept) < 2) or key not in said:
                said[key] = sparse
    return said


def _line_notes(
    points: list[dict[str, Any]], found: dict[str, Any], prefix: str
) -> dict[str, dict[str, Any]]:
    """:func:`curve_notes` of the rounds in the average."""
    if len(points) == 1:
        code = {"code": "curve_one_round"}
        return {f"{prefix}_{part}": code for part in ("slope", "intercept", "r2")}
    if len(points) == 2:
        return {f"{prefix}_r2": {"code": "r2_two_rounds"}}
    flat = len({p["mean"] for p in points}) == 1
    if points and flat and found.get(f"{prefix}_r2") is None:
        return {f"{prefix}_r2": {"code": "r2_flat_curve"}}
    return {}


def _session_slopes(rows: Rows, methods: list[str]) -> dict[str, list[float]]:
    """Per method, each session's OLS slope of its (round, AL) points in
    arrival order, sessions as first seen (rounds checked by ``curves``)."""
    slopes: dict[str, list[float]] = {method: [] for method in methods}
    for method, _session, values, rounds in row_source.groups(rows, "al", "session"):
        if method in slopes and len(values) >= 2:
            slope = stats.ols(rounds, values)[0]
            if slope is not None:
                slopes[method].append(slope)
    return slopes


def _al_summary(
    rows: Rows, methods: list[str]
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Per method: the AL(k) curve and its statistics, the session slopes,
    and why a statistic of the curve is null (summary notes), the mean
    session slope too: with AL scored but no session of two scored rounds
    it has no slope to average.

    >>> rows = [{"session_id": s, "round": k, "method": "M", "metric": "al",
    ...          "value": 50.0, "status": "ok"} for s, k in (("a", 1), ("b", 2))]
    >>> found, _, said = _al_summary(rows, ["M"])
    >>> found["M"]["al_session_slope"], said["M"]["al_session_slope"]
    (None, {'code': 'session_slope_no_two_rounds'})
    """
    points, found, said = curves(rows, "al", methods), {}, {}
    for method, slopes in _session_slopes(rows, methods).items():
        ci = stats.mean_ci(slopes)
        line = _curve_summary(points[method], "al")
        found[method] = {
            **line,
            "al_session_slope": ci["mean"],
            "al_session_slope_ci_low": ci["ci_low"],
            "al_session_slope_ci_high": ci["ci_high"],
        }
        noted = curve_notes(points[method], line, "al")
        if not slopes and points[method]:  # AL scored, no session of two rounds
            noted["al_session_slope"] = {"code": "session_slope_no_two_rounds"}
        if ci.get("ci_note"):  # every session's slope the same: width 0
            said_ci = {"code": ci["ci_note"]}
            noted["al_session_slope_ci_low"] = said_ci
            noted["al_session_slope_ci_high"] = dict(said_ci)
        if noted:
            said[method] = noted
    return found, points, said


def _binary_rates(rows: Rows, methods: list[str]) -> dict[str, Any]:
    """Per method, the share of its scored verdicts that are 1."""
    totals = {method: [0.0, 0] for method in methods}
    for method, _, votes, _ in row_source.groups(rows, "binary", "round"):
        if method in totals:
            totals[method][0] += sum(votes)  # 0s and 1s: exact in any order
            totals[method][1] += len(votes)
    return {m: total / n if n else None for m, (total, n) in totals.items()}


def _value_parts(
    rows: Rows, methods: list[str], points: dict[str, Any]
) -> dict[str, Any]:
    """The parts (``metrics/basis.py``) of AL average (per round k in the
    average, the session's AL and 1) and of the keep-chatting rate (the
    session's yes share per item and its items): what their Δ intervals and
    permutation tests resample. A panel's judges are pooled per item first,
    as the curves pool them (``row_source.item_groups``), so an item weighs
    one whatever the number of judges: across two runs with one and two
    judges, an item of the second weighed two and the permutation p moved
    (witness: 3/4, printed 0.25). ``points`` are the AL curves: their
    sparse rounds are left out here as in the average."""
    found: dict[str, dict[str, Any]] = {"al_avg": {}, "binary_rate": {}}
    left_out = {
        m: {p["k"] for p in drawn if not p["in_average"]} for m, drawn in points.items()
    }
    for metric, column in (("al", "al_avg"), ("binary", "binary_rate")):
        for method, session, values, rounds in row_source.groups(
            rows, metric, "session"
        ):
            if method not in methods:
                continue
            # a panel's judges pooled per item first
            by_round: dict[int | None, list[float]] = {}
            for value, k in zip(values, rounds, strict=True):
                if column == "al_avg" and k in left_out.get(method, ()):
                    continue
                by_round.setdefault(k, []).append(value)
            strata: dict[int | None, tuple[float, float]] = {}

            for k, item in by_round.items():
                stratum = k if column == "al_avg" else None
                num, den = strata.get(stratum, (0.0, 0.0))
                strata[stratum] = (num + fmean(item), den + 1.0)
            if strata:
                found[column].setdefault(method, {})[session] = strata
    return found


def _dimension_means(rows: Rows, methods: list[str], dimension: str) -> dict[str, Any]:
    """Per method: the mean over rounds of the dimension's curve."""
    found = curves(rows, f"al_{dimension}", methods)
    return {
        m: fmean(p["mean"] for p in points if p["in_average"]) if points else None
        for m, points in found.items()
    }


def summarize(rows: Rows, methods: list[str]) -> SuiteSummary:
    """Summary metrics, curves and per-session values for comparisons. From
    a source, curves and session values stream group by group and the
    judge checks read database ranks and sums: nothing holds every item."""
    rows = row_source.readable(rows)
    al, points, said = _al_summary(rows, methods)
    per_session = {"al": session_means(rows, "al", methods)}
    rates = _binary_rates(rows, methods)
    per_session["binary"] = session_means(rows, "binary", methods)
    dimensions = {d: _dimension_means(rows, methods, d) for d in DIMENSIONS}
    length_controlled, lc_noted = length_control.fit(rows, methods)
    summary: dict[str, dict[str, float | None]] = {}
    charted: dict[str, dict[str, list[dict[str, Any]]]] = {"al": {}, "nal": {}}
    for method in methods:
        charted["al"][method] = points[method]
        charted["nal"][method] = normalized(points[method]) or []
        values = al[method]
        summary[method] = {
            **{
                k: values[k]
                for k in (
                    "al_avg",
                    "al_slope",
                    "al_intercept",
                    "al_r2",
                    "al_avg_all_rounds",
                    "al_slope_all_rounds",
                )
            },
            "binary_rate": rates[method],
            **{k: v for k, v in values.items() if k.startswith("al_session_slope")},
        }
        for dimension, means in dimensions.items():
            summary[method][f"al_{dimension}_avg"] = means[method]
    for method, value in length_controlled.items():
        summary[method]["al_lc"] = value
    for method, reason in lc_noted.items():  # why al_lc is null
        said.setdefault(method, {})["al_lc"] = reason
    return {
        "summary": summary,
        "curves": charted,
        "session_values": per_session,
        "value_parts": _value_parts(rows, methods, points),
        "validity": judge_checks.validity(rows),
        "panel": _panel(points, dimensions, said),
    }


def _panel(
    points: dict[str, Any], dimensions: dict[str, Any], said: dict[str, Any]
) -> dict[str, Any]:
    """The panel's data: why a chart is empty, and (when some is) why a
    summary value is null (``metrics.results.summary_notes``)."""
    panel: dict[str, Any] = {"reasons": _chart_reasons(points, dimensions)}
    if said:
        panel["notes"] = said
    return panel


def _chart_reasons(
    points: dict[str, Any], dimensions: dict[str, Any]
) -> dict[str, Any]:
    """Why a chart has nothing to draw although AL was scored (else the
    panel's own "needs a configured judge" is the true reason).

    >>> _chart_reasons({"M": [{"k": 1, "mean": 50.0, "n": 1}]}, {"style": {"M": None}})
    {'nal_curve': {'code': 'nal_undefined'}, 'radar': {'code': 'no_dimensions'}}
    """
    if not any(points.values()):
        return {}
    reasons = {}
    if not any(normalized(found) for found in points.values()):
        reasons["nal_curve"] = {"code": "nal_undefined"}
    if all(value is None for means in dimensions.values() for value in means.values()):
        reasons["radar"] = {"code": "no_dimensions"}
    return reasons
