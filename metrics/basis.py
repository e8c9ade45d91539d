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

Δ's test is on the same parts (:func:`delta_permutation_p`): a paired
permutation test that swaps the two methods' parts within sessions and
recomputes both values, so a table cell's Δ, its interval and its mark rest
on one basis (issue 58, finding 1).

>>> a = {"s1": {None: (1.0, 1.0)}, "s2": {None: (3.0, 1.0)}}
>>> value(a)
2.0
>>> value({"s1": {1: (50.0, 1.0), 2: (70.0, 1.0)}, "s2": {1: (30.0, 1.0)}})
55.0
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from metrics.stats import (
    BOOTSTRAP_PART,
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    CI_NO_SPREAD,
    EXACT_BOOTSTRAP_BELOW,
    exact_resamples,
    resample_sums,
    spread_or_none,
    weighted_quantiles,
)

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import ArrayLike, NDArray

# session -> stratum (a round, or None) -> (numerator, denominator)
Parts = Mapping[str, Mapping[object, tuple[float, float]]]
# (numerators, denominators), sessions x strata
Matrix = tuple["NDArray[np.float64]", "NDArray[np.float64]"]
# a matrix's resampled statistic by its (shape, numerators' bytes,
# denominators' bytes) (_weighted)
ResampleMemo = dict[tuple[tuple[int, ...], bytes, bytes], "NDArray[np.float64]"]


def of_session_values(values: Mapping[str, float]) -> dict[str, Any]:
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
    the sessions either method has: the exact bootstrap distribution under
    ``EXACT_BOOTSTRAP_BELOW`` sessions, else 2,000 seeded resamples. None
    under two sessions, when no resample has a value, or when the interval
    has no width (:func:`delta_interval` says which).

    >>> one = {"s1": {None: (1.0, 1.0)}, "s2": {None: (2.0, 1.0)}}
    >>> zero = {"s1": {None: (0.0, 1.0)}, "s2": {None: (0.0, 1.0)}}
    >>> delta_ci(one, zero)
    (1.0, 2.0)
    """
    return delta_interval(a, b, level)[0]


def delta_interval(
    a: Parts, b: Parts, level: float = 0.95, memo: ResampleMemo | None = None
) -> tuple[tuple[float, float] | None, str | None]:
    """``(interval, note)``: the note ``ci_no_spread`` when the resampled
    differences give an interval of width 0 (four sessions of one
    difference gave [0.125, 0.125]); None otherwise.

    ``memo`` (a dict the caller keeps for one set of comparisons) holds
    each method's statistic on every exact resample by its parts' bytes: a
    method compared with several others is resampled once, the same floats
    (issue 61: 15 pairs of 6 methods resampled 6 values, not 30).

    >>> same = {"s1": {None: (1.0, 1.0)}, "s2": {None: (1.0, 1.0)}}
    >>> delta_interval(same, {"s1": {None: (0.0, 1.0)}, "s2": {None: (0.0, 1.0)}})
    (None, 'ci_no_spread')
    """
    import numpy as np

    sessions = sorted({*a, *b})  # by id: resamples draw by position
    if len(sessions) < 2:
        return None, None
    strata = list(
        dict.fromkeys(s for parts in (a, b) for v in parts.values() for s in v)
    )
    arrays = [_matrix(parts, sessions, strata) for parts in (a, b)]
    n = len(sessions)
    tail = (1 - level) / 2
    if n < EXACT_BOOTSTRAP_BELOW:
        weights = exact_resamples(n)[1]
        diffs = _weighted(arrays[0], memo) - _weighted(arrays[1], memo)
        kept = ~np.isnan(diffs)
        if not kept.any():
            return None, None
        low, high = weighted_quantiles(diffs[kept], weights[kept], [tail, 1 - tail])
    else:
        rng = np.random.default_rng(BOOTSTRAP_SEED)
        rows = max(1, BOOTSTRAP_PART // (n * len(strata)))
        found = []
        for done in range(0, BOOTSTRAP_RESAMPLES, rows):
            index = rng.integers(0, n, size=(min(rows, BOOTSTRAP_RESAMPLES - done), n))
            found.append(_resampled(arrays[0], index) - _resampled(arrays[1], index))
        resampled = np.concatenate(found)
        resampled = resampled[~np.isnan(resampled)]
        if len(resampled) == 0:
            return None, None
        low, high = (float(q) for q in np.quantile(resampled, [tail, 1 - tail]))
    interval = spread_or_none(low, high)
    return interval, (CI_NO_SPREAD if interval is None else None)


# Up to this many sessions every one of the 2**n keep/swap assignments is
# counted (8,192 at 13): no more work than the sampled test's draws, and the
# smallest p an exact test can give, 2/2**n, is already under 0.001 at 11.
PERMUTATION_EXACT_UP_TO = 13
# Beyond it, this many seeded random assignments, p = (b + 1) / (m + 1)
# (Phipson & Smyth 2010: the observed assignment counts, p is never 0): its
# Monte Carlo standard error sqrt(p(1 − p)/m) is 0.0022 at p = 0.05, 0.0010 at
# 0.01 and 0.0003 at 0.001, the marks' bounds.
PERMUTATION_DRAWS = 9_999
PERMUTATION_SEED = BOOTSTRAP_SEED
PERMUTATION_EXACT = "permutation_exact"
PERMUTATION_SAMPLED = "permutation_sampled"


def delta_permutation_p(a: Parts, b: Parts) -> tuple[float | None, str | None, int]:
    """``(p, test, assignments)``: two-sided paired permutation test of
    Δ = value(a) − value(b) on the values' own basis (Good 2005, ch. 3;
    Efron & Tibshirani 1993, ch. 15). Under the null the two methods are
    exchangeable within a session, so each session's parts are kept or
    swapped between a and b, both values recomputed from their parts, and
    p is the share of assignments whose |Δ*| reaches |Δ| (both at
    :func:`metrics.stats.at_resolution`, so a tie counts as reaching it).
    The sessions are those of :func:`delta_interval` (either method's).
    Up to ``PERMUTATION_EXACT_UP_TO`` sessions every assignment is counted
    (``permutation_exact``, p = count / 2**n); beyond it
    ``PERMUTATION_DRAWS`` seeded random assignments
    (``permutation_sampled``, p = (count + 1) / (draws + 1)). An assignment
    in which a value has no denominator is left out. None under two
    sessions or without a Δ.

    With one stratum of (session value, 1) it is the permutation test of
    the mean paired difference; four sessions that all favour a give the
    smallest p four sessions can give, 2/16:

    >>> a = {s: {None: (v, 1.0)} for s, v in zip("wxyz", (3.0, 4.0, 5.0, 6.0))}
    >>> b = {s: {None: (0.0, 1.0)} for s in "wxyz"}
    >>> delta_permutation_p(a, b)
    (0.125, 'permutation_exact', 16)

    A pooled rate weighs sessions by their verdicts. Nine sessions of one
    verdict each favour a (1 of 1 against 0 of 1), a tenth of 100 verdicts
    favours b (0 against 100): the per-session means favour a (Wilcoxon
    p = 0.021), the pooled rates favour b, 9/109 against 100/109, and every
    assignment gives a |Δ*| at least as large:

    >>> a = {f"s{i}": {None: (1.0, 1.0)} for i in range(9)} | {"s9": {None: (0.0, 100.0)}}
    >>> b = {f"s{i}": {None: (0.0, 1.0)} for i in range(9)} | {"s9": {None: (100.0, 100.0)}}
    >>> delta_permutation_p(a, b)
    (1.0, 'permutation_exact', 1024)
    """
    import numpy as np

    from metrics.stats import at_resolution

    sessions = sorted({*a, *b})  # by id: resamples draw by position
    n = len(sessions)
    if n < 2:
        return None, None, 0
    strata = list(
        dict.fromkeys(s for parts in (a, b) for v in parts.values() for s in v)
    )
    (num_a, den_a), (num_b, den_b) = (_matrix(p, sessions, strata) for p in (a, b))
    observed = _swapped_deltas(np.zeros((1, n)), num_a, den_a, num_b, den_b)[0]
    if np.isnan(observed):
        return None, None, 0
    bar = at_resolution(abs(float(observed)))

    def reaching(swaps: NDArray[np.float64]) -> tuple[int, int]:
        deltas = _swapped_deltas(swaps, num_a, den_a, num_b, den_b)
        kept = np.abs(deltas[~np.isnan(deltas)])
        return reaching_count(kept, bar), len(kept)

    if n <= PERMUTATION_EXACT_UP_TO:
        every = np.arange(2**n)[:, None] >> np.arange(n)[None, :] & 1
        count, counted = reaching(every.astype(float))
        return count / counted, PERMUTATION_EXACT, 2**n
    rng = np.random.default_rng(PERMUTATION_SEED)
    rows = max(1, BOOTSTRAP_PART // (n * len(strata)))
    count, counted = 0, 0
    for done in range(0, PERMUTATION_DRAWS, rows):
        size = min(rows, PERMUTATION_DRAWS - done)
        found, kept = reaching(rng.integers(0, 2, size=(size, n)).astype(float))
        count, counted = count + found, counted + kept
    return (count + 1) / (counted + 1), PERMUTATION_SAMPLED, PERMUTATION_DRAWS


# |Δ*| this close to the bar (relatively) is rounded to find whether it
# reaches it; farther off, at_resolution (a rounding at 12 significant
# digits, relative error at most 5e-12) cannot move it across
BAR_BAND = 1e-10


def reaching_count(sizes: ArrayLike, bar: float) -> int:
    """How many of ``sizes`` (|Δ*|, no NaN) reach ``bar`` (an
    :func:`metrics.stats.at_resolution` value) at that resolution: the count
    of ``at_resolution(size) >= bar``, the same count, with only the sizes
    within ``BAR_BAND`` of the bar rounded one by one (at_resolution is
    monotone and moves a size by at most 5e-12 of it).

    >>> reaching_count([1 - 2 / 3, 1 / 3, 0.3, 0.4], 0.333333333333)
    3
    """
    import numpy as np

    from metrics.stats import at_resolution

    sizes = np.asarray(sizes, dtype=float)
    if bar <= 0.0:  # every size is at least 0
        return len(sizes)
    above = sizes > bar * (1 + BAR_BAND)
    near = ~above & (sizes >= bar * (1 - BAR_BAND))
    close = sum(at_resolution(float(size)) >= bar for size in sizes[near])
    return int(above.sum()) + close


def _swapped_deltas(
    swaps: NDArray[np.float64],
    num_a: NDArray[np.float64],
    den_a: NDArray[np.float64],
    num_b: NDArray[np.float64],
    den_b: NDArray[np.float64],
) -> NDArray[np.float64]:
    """value(a*) − value(b*) for each row of ``swaps`` (1: the session's
    parts of a and b trade places): a swap moves b − a into a's sums and
    out of b's. Sums run over sessions in einsum's own loop, in a fixed
    order (no BLAS); NaN where a value has no denominator."""
    import numpy as np

    moved_num = np.einsum("mn,nk->mk", swaps, num_b - num_a)
    moved_den = np.einsum("mn,nk->mk", swaps, den_b - den_a)
    value_a = _ratio_mean(num_a.sum(axis=0) + moved_num, den_a.sum(axis=0) + moved_den)
    value_b = _ratio_mean(num_b.sum(axis=0) - moved_num, den_b.sum(axis=0) - moved_den)
    return value_a - value_b


def _matrix(parts: Parts, sessions: list[str], strata: list[object]) -> Matrix:
    """(numerators, denominators), sessions x strata, zero where absent."""
    import numpy as np

    num = np.zeros((len(sessions), len(strata)))
    den = np.zeros((len(sessions), len(strata)))
    column = {s: j for j, s in enumerate(strata)}
    for i, session in enumerate(sessions):
        for stratum, (x, d) in parts.get(session, {}).items():
            num[i, column[stratum]], den[i, column[stratum]] = x, d
    return num, den


def _resampled(matrix: Matrix, index: NDArray[np.int64]) -> NDArray[np.float64]:
    """The statistic on each resample (a row of ``index``); NaN where no
    stratum has a denominator."""
    num, den = (m[index].sum(axis=1) for m in matrix)  # resamples x strata
    return _ratio_mean(num, den)


def _ratio_mean(
    num: NDArray[np.float64], den: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Mean over strata of num / den, strata without a denominator left out;
    NaN where none has one."""
    import numpy as np

    with np.errstate(invalid="ignore", divide="ignore"):
        ratios = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
    present = (~np.isnan(ratios)).sum(axis=1)
    totals = np.where(np.isnan(ratios), 0.0, ratios).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(present > 0, totals / np.maximum(present, 1), np.nan)


def _weighted(matrix: Matrix, memo: ResampleMemo | None = None) -> NDArray[np.float64]:
    """The statistic on each exact resample (a row of
    :func:`metrics.stats.exact_resamples`' counts: how often each session is
    drawn); NaN where no stratum has a denominator. Kept in ``memo`` by the
    matrices' bytes and shape (equal parts, equal floats)."""
    num, den = matrix
    key = (num.shape, num.tobytes(), den.tobytes())
    if memo is not None and key in memo:
        return memo[key]
    # resamples x strata, summed over sessions in a fixed order
    found = _ratio_mean(resample_sums(num), resample_sums(den))
    if memo is not None:
        memo[key] = found
    return found


def add_value_deltas(
    comparisons: list[dict[str, Any]],
    summary: Mapping[str, Mapping[str, Any]],
    session_values: Mapping[str, Mapping[str, Any]],
    value_parts: Mapping[str, Mapping[str, Any]],
) -> None:
    """Give each comparison whose session metric a table column compares
    (``Metric.compare``) the column's ``value_metric``, ``delta`` (value of
    ``a`` − value of ``b``: the difference of the values a table shows),
    ``delta_ci_low``/``delta_ci_high`` (sessions resampled, both values
    recomputed from their parts) and Δ's test on the same parts:
    ``delta_p`` (:func:`delta_permutation_p`), ``delta_test``,
    ``delta_p_assignments`` and ``delta_p_holm`` (Holm within the metric
    across its method pairs, the family of ``p_holm``). Columns without
    their own parts (``value_parts``) are means over sessions of the
    session values."""
    from metrics import registry
    from metrics.stats import holm

    columns = {
        m.compare: m
        for suite in registry.suites()
        for m in suite.summary_metrics()
        if m.compare and m.in_table
    }
    families: dict[str, list[dict[str, Any]]] = {}
    # each method's resampled values, shared by its pairs within a column
    # (compare_all lists a metric's pairs together); dropped at the next
    # column, so it holds one column's methods (24,310 floats each), not all
    memo: ResampleMemo = {}
    memo_metric = None
    for comparison in comparisons:
        column = columns.get(comparison["metric"])
        if column is None:
            continue
        if comparison["metric"] != memo_metric:
            memo.clear()
            memo_metric = comparison["metric"]
        a, b = comparison["a"], comparison["b"]
        value_a, value_b = ((summary.get(m) or {}).get(column.id) for m in (a, b))
        delta, ci, note = None, None, None
        p, test, assignments = None, None, 0
        if value_a is not None and value_b is not None:
            delta = value_a - value_b
            own = value_parts.get(column.id) or {}
            sessions = session_values.get(comparison["metric"]) or {}
            part_a, part_b = (
                own.get(m) or of_session_values(sessions.get(m) or {}) for m in (a, b)
            )
            ci, note = delta_interval(part_a, part_b, memo=memo)
            p, test, assignments = delta_permutation_p(part_a, part_b)
        comparison.update(
            value_metric=column.id,
            delta=delta,
            delta_ci_low=ci[0] if ci else None,
            delta_ci_high=ci[1] if ci else None,
            delta_ci_note=note if delta is not None else None,
            delta_p=p,
            delta_p_holm=None,
            delta_test=test,
            delta_p_assignments=assignments or None,
        )
        families.setdefault(comparison["metric"], []).append(comparison)
    for family in families.values():
        adjusted = holm([c["delta_p"] for c in family])
        for comparison, p_holm in zip(family, adjusted, strict=True):
            comparison["delta_p_holm"] = p_holm


# The Holm families a reader can ask for (``?holm=``, ``--holm``): within each
# metric (a table: each column), the default, or across every compared metric
# of a table (a claim resting on several columns at once)
HOLM_FAMILIES = ("metric", "table")


def with_holm_family(
    document: dict[str, Any], family: str = "metric"
) -> dict[str, Any]:
    """A results (or comparison) document stating its Holm family
    (``holm_family``, placed before ``comparisons``). With ``"table"``, each
    comparison's ``delta_p_holm`` is adjusted across every comparison of the
    table its column belongs to (every compared metric of the suite, every
    method pair) instead of within its metric; ``p_holm`` (the Wilcoxon
    test of the per-session values) keeps its per-metric family.

    >>> doc = {"summary": {}, "comparisons": [
    ...     {"metric": "al", "value_metric": "al_avg", "delta_p": 0.01, "delta_p_holm": 0.01},
    ...     {"metric": "binary", "value_metric": "binary_rate", "delta_p": 0.04,
    ...      "delta_p_holm": 0.04}]}
    >>> found = with_holm_family(doc, "table")
    >>> list(found), [c["delta_p_holm"] for c in found["comparisons"]]
    (['summary', 'holm_family', 'comparisons'], [0.02, 0.04])
    >>> with_holm_family(doc)["comparisons"][0]["delta_p_holm"]
    0.01
    """
    from metrics import registry
    from metrics.stats import holm

    comparisons = [dict(c) for c in document.get("comparisons") or []]
    if family == "table":
        suite_of = {
            m.id: suite.name
            for suite in registry.suites()
            for m in suite.summary_metrics()
        }
        tables: dict[str, list[dict[str, Any]]] = {}
        for comparison in comparisons:
            if "delta_p" in comparison and comparison.get("value_metric"):
                suite = suite_of.get(comparison["value_metric"], "")
                tables.setdefault(suite, []).append(comparison)
        for members in tables.values():
            adjusted = holm([c["delta_p"] for c in members])
            for comparison, p_holm in zip(members, adjusted, strict=True):
                comparison["delta_p_holm"] = p_holm
    found: dict[str, Any] = {}
    for key, value in document.items():
        if key == "comparisons":
            found["holm_family"] = family
        if key != "holm_family":
            found[key] = comparisons if key == "comparisons" else value
    found.setdefault("holm_family", family)
    return found
