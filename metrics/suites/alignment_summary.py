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

from metrics import judge_checks, length_control, row_source, stats
from metrics.columns import NO_ROUND, RowColumns
from metrics.judge_checks import Rows
from metrics.rows import session_means
from metrics.suite import SuiteSummary

# the five parts of an AL verdict, 0-20 each
DIMENSIONS = ("style", "content", "naturalness", "personalization", "conversation")


def curve(rows: RowColumns, index) -> list[dict]:
    """AL(k): mean of the scored values at ``index`` over sessions at each
    round k (values in the order the rows arrived), with CI."""
    rounds = rows.col("round")[index]
    if (rounds == NO_ROUND).any():
        raise ValueError(f"a {rows.strings('metric', index)[0]} row has no round")
    groups = rows.groups(index, ("round",), first_seen=False)
    values, ks = rows.col("value")[groups.rows], rows.col("round")[groups.rows]
    return [
        {"k": int(ks[a]), **stats.mean_ci(values[a:b].tolist())}
        for a, b in groups.bounds
    ]  # (one round's values as floats at a time)


def normalized(points: list[dict]) -> list[dict] | None:
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
        {"k": p["k"], "mean": (p["mean"] - low) / span, "n": p["n"],
         "ci_low": None, "ci_high": None}
        for p in points
    ]  # fmt: skip


def _curve_summary(points: list[dict], prefix: str) -> dict[str, float | None]:
    ks = [p["k"] for p in points]
    means = [p["mean"] for p in points]
    slope, intercept, r2 = stats.ols(ks, means)
    return {
        f"{prefix}_avg": fmean(means) if means else None,
        f"{prefix}_slope": slope,
        f"{prefix}_intercept": intercept,
        f"{prefix}_r2": r2,
    }


def _session_slopes(rows: RowColumns, index) -> list[float]:
    """Each session's OLS slope of its (round, value) points, in arrival
    order, sessions as first seen."""
    groups = rows.groups(index, ("session",))  # rounds checked by curve()
    values, ks = rows.col("value")[groups.rows], rows.col("round")[groups.rows]
    slopes = [
        stats.ols(ks[a:b].tolist(), values[a:b].tolist())[0]
        for a, b in groups.bounds
        if b - a >= 2
    ]
    return [s for s in slopes if s is not None]


def _by_method(rows: Rows, metric: str, methods: list[str]):
    """The part of the rows holding ``metric``, and its scored rows there:
    method -> positions (arrival order)."""
    table = row_source.part(rows, [metric])
    index = table.where(metric)
    method = table.col("method")[index]
    codes = table.names["method"].codes
    return table, {m: index[method == codes.get(m, -1)] for m in methods}


def _al_summary(rows: Rows, methods: list[str]) -> tuple[dict, dict]:
    """Per method: the AL(k) curve and its statistics, the session slopes."""
    found, points = {}, {}
    table, by_method = _by_method(rows, "al", methods)
    for method, index in by_method.items():
        points[method] = curve(table, index)
        slopes = stats.mean_ci(_session_slopes(table, index))
        found[method] = {
            **_curve_summary(points[method], "al"),
            "al_session_slope": slopes["mean"],
            "al_session_slope_ci_low": slopes["ci_low"],
            "al_session_slope_ci_high": slopes["ci_high"],
        }
    return found, points


def _binary_rates(rows: Rows, methods: list[str]) -> dict:
    rates = {}
    table, by_method = _by_method(rows, "binary", methods)
    for method, index in by_method.items():
        votes = table.values(index)
        rates[method] = sum(votes) / len(votes) if votes else None
    return rates


def _dimension_means(rows: Rows, methods: list[str], dimension: str) -> dict:
    """Per method: the mean over rounds of the dimension's curve."""
    means = {}
    table, by_method = _by_method(rows, f"al_{dimension}", methods)
    for method, index in by_method.items():
        points = curve(table, index)
        means[method] = fmean(p["mean"] for p in points) if points else None
    return means


def summarize(rows: Rows, methods: list[str]) -> SuiteSummary:
    """Summary metrics, curves and per-session values for comparisons. Each
    step reads its own metrics' part of the rows; steps on the same part
    run one after another (a source keeps its last part)."""
    rows = row_source.readable(rows)
    al, points = _al_summary(rows, methods)
    per_session = {"al": session_means(rows, "al", methods)}
    rates = _binary_rates(rows, methods)
    per_session["binary"] = session_means(rows, "binary", methods)
    dimensions = {d: _dimension_means(rows, methods, d) for d in DIMENSIONS}
    length_controlled = length_control.length_controlled(rows, methods)
    summary: dict[str, dict[str, float | None]] = {}
    curves: dict[str, dict[str, list[dict]]] = {"al": {}, "nal": {}}
    for method in methods:
        curves["al"][method] = points[method]
        curves["nal"][method] = normalized(points[method]) or []
        values = al[method]
        summary[method] = {
            **{k: values[k] for k in ("al_avg", "al_slope", "al_intercept", "al_r2")},
            "binary_rate": rates[method],
            **{k: v for k, v in values.items() if k.startswith("al_session_slope")},
        }
        for dimension, means in dimensions.items():
            summary[method][f"al_{dimension}_avg"] = means[method]
    for method, value in length_controlled.items():
        summary[method]["al_lc"] = value
    return {"summary": summary, "curves": curves, "session_values": per_session,
            "validity": judge_checks.validity(rows)}  # fmt: skip
