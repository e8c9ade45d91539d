"""A summary value as a statistic of sessions, so its difference between two
methods gets a confidence interval on the value's own basis (issue 26).

A comparison table shows each method's value (AL average is the mean over
rounds k of AL(k); the keep-chatting rate pools every verdict; slot F1 is a
micro-average) and beside it Δ, the difference of the two values shown.
Its 95% interval resamples *sessions* (the independent unit), the same
resample for both methods (paired), and recomputes both values from their
**parts**: per method, session and stratum a numerator and a denominator,
the value being the mean over strata of Σ numerator / Σ denominator:

* a mean over sessions: one stratum, (session value, 1);
* a pooled share or a micro-average: one stratum, (hits, trials);
* AL average: stratum k, (Σ AL of the session at round k, their count).

Sums run in a fixed order in numpy (no BLAS), so the interval is the same
bit for bit whatever the thread count.

>>> a = {"s1": {None: (1.0, 1.0)}, "s2": {None: (3.0, 1.0)}}
>>> value(a)
2.0
>>> value({"s1": {1: (50.0, 1.0), 2: (70.0, 1.0)}, "s2": {1: (30.0, 1.0)}})
55.0
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from metrics.stats import BOOTSTRAP_PART, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED

# session -> stratum (a round, or None) -> (numerator, denominator)
Parts = Mapping[str, Mapping[object, tuple[float, float]]]


def of_session_values(values: Mapping[str, float]) -> dict:
    """Parts of a mean over sessions.

    >>> value(of_session_values({"s1": 0.25, "s2": 0.75}))
    0.5
    """
    return {session: {None: (v, 1.0)} for session, v in values.items()}


def value(parts: Parts) -> float | None:
    """The statistic the parts stand for (None without any denominator)."""
    totals: dict[object, list[float]] = {}
    for strata in parts.values():
        for stratum, (num, den) in strata.items():
            total = totals.setdefault(stratum, [0.0, 0.0])
            total[0] += num
            total[1] += den
    ratios = [num / den for num, den in totals.values() if den > 0]
    return math.fsum(ratios) / len(ratios) if ratios else None


def delta_ci(a: Parts, b: Parts, level: float = 0.95) -> tuple[float, float] | None:
    """Percentile interval of value(a) − value(b) over paired resamples of
    the sessions either method has (None under two sessions)."""
    import numpy as np

    sessions = list(dict.fromkeys([*a, *b]))
    if len(sessions) < 2:
        return None
    strata = list(
        dict.fromkeys(s for parts in (a, b) for v in parts.values() for s in v)
    )
    arrays = [_matrix(parts, sessions, strata) for parts in (a, b)]
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    n = len(sessions)
    rows = max(1, BOOTSTRAP_PART // (n * len(strata)))
    found = []
    for done in range(0, BOOTSTRAP_RESAMPLES, rows):
        index = rng.integers(0, n, size=(min(rows, BOOTSTRAP_RESAMPLES - done), n))
        found.append(_resampled(arrays[0], index) - _resampled(arrays[1], index))
    diffs = np.concatenate(found)
    diffs = diffs[~np.isnan(diffs)]
    if len(diffs) == 0:
        return None
    tail = (1 - level) / 2
    low, high = np.quantile(diffs, [tail, 1 - tail])
    return float(low), float(high)


def _matrix(parts: Parts, sessions: list[str], strata: list):
    """(numerators, denominators), sessions x strata, zero where absent."""
    import numpy as np

    num = np.zeros((len(sessions), len(strata)))
    den = np.zeros((len(sessions), len(strata)))
    column = {s: j for j, s in enumerate(strata)}
    for i, session in enumerate(sessions):
        for stratum, (x, d) in parts.get(session, {}).items():
            num[i, column[stratum]], den[i, column[stratum]] = x, d
    return num, den


def _resampled(matrix, index):
    """The statistic on each resample (a row of ``index``); NaN where no
    stratum has a denominator."""
    import numpy as np

    num, den = (m[index].sum(axis=1) for m in matrix)  # resamples x strata
    with np.errstate(invalid="ignore", divide="ignore"):
        ratios = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
    present = (~np.isnan(ratios)).sum(axis=1)
    totals = np.where(np.isnan(ratios), 0.0, ratios).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(present > 0, totals / np.maximum(present, 1), np.nan)


def add_value_deltas(
    comparisons: list[dict],
    summary: Mapping[str, Mapping],
    session_values: Mapping[str, Mapping],
    value_parts: Mapping[str, Mapping],
) -> None:
    """Give each comparison whose session metric a table column compares
    (``Metric.compare``) the column's ``value_metric``, ``delta`` (value of
    ``a`` − value of ``b``: the difference of the values a table shows)
    and ``delta_ci_low``/``delta_ci_high`` (sessions resampled, both values
    recomputed from their parts). Columns without their own parts
    (``value_parts``) are means over sessions of the session values."""
    from metrics import registry

    columns = {
        m.compare: m for suite in registry.suites() for m in suite.summary_metrics()
        if m.compare and m.in_table
    }  # fmt: skip
    for comparison in comparisons:
        column = columns.get(comparison["metric"])
        if column is None:
            continue
        a, b = comparison["a"], comparison["b"]
        value_a, value_b = ((summary.get(m) or {}).get(column.id) for m in (a, b))
        delta, ci = None, None
        if value_a is not None and value_b is not None:
            delta = value_a - value_b
            own = value_parts.get(column.id) or {}
            sessions = session_values.get(comparison["metric"]) or {}
            part_a, part_b = (
                own.get(m) or of_session_values(sessions.get(m) or {}) for m in (a, b)
            )
            ci = delta_ci(part_a, part_b)
        comparison.update(
            value_metric=column.id,
            delta=delta,
            delta_ci_low=ci[0] if ci else None,
            delta_ci_high=ci[1] if ci else None,
        )
