"""The witness's reference implementation of every published aggregate (issue 56).

A second, deliberately plain implementation of the numbers a results document
publishes, written from the documentation alone: ``docs/metrics/README.md``,
``docs/metrics/alignment.md``, ``docs/metrics/pairwise.md``, the other metric
cards and ``docs/results-format.md``. It imports nothing from the product
(``metrics/``, ``reports/``, ``pipeline/``, ``web/``, ``store/``) and none of
the libraries the product uses for statistics (scipy, sklearn, krippendorff,
numpy): every quantity is computed here from the document's tidy ``rows``.

Arithmetic is exact: each row value becomes ``Fraction(value).limit_denominator(
10**6)`` when that fraction is the float up to rounding noise (judge scores,
small-denominator means, 0/1 votes: 1 − 2/3 is 1/3 here), else the float's own
exact value (the quality heuristics take logarithms: 0.41221333509788094 is no
quotient of small integers, and snapping it to one would move it by 1e-12).
Means, differences, ranks and ties are taken on fractions, so two values equal
on paper are equal here; where values are not small quotients, the Wilcoxon
ranks compare differences at 12 significant digits, as README "Comparisons"
states (``at_resolution``). Floats appear only where the docs ask for an
irrational quantity (square roots, t and normal tails, logarithms, the
Bradley–Terry fit) and at the end.

Entry points (each returns the shape of the matching block of the document, so
a caller can compare key by key):

* ``summary(doc)``: ``{method: {id: value, id_n: int, ...}}``;
* ``curves(doc)``: ``{"al": {method: [points]}, "nal": {...}}``;
* ``comparisons(doc)``: a list of comparisons, without the bootstrap bounds;
* ``interval_checks(doc)``: every bootstrap interval (and Δ's permutation p) of the document checked
  against the exact bootstrap distribution (``bootstrap_bounds_ok``): equal
  to its quantiles, or null at width 0, from fewer than 10 sessions;
* ``counts(doc)``: ``{status: number of rows}``;
* ``judge_validity(doc)``: the quantities the docs define from rows.

Questions the docs leave open. Each is answered by the most natural reading,
named by a constant or a function below; none was settled by reading the code.

1. Which judges form a method's panel for a metric (README "Judge panels": "a
   judge is in a method's panel when it was asked about any of that method's
   items")? Read: the judges with an ``ok``/``unscored``/``error`` row of the
   method on any judged metric of the same suite (``panel_judges``): the
   alignment suite's ``al``, ``binary`` and dimensions together, the pairwise
   suite's ``pairwise@*`` together, any other metric alone. Fact rows
   (``response_chars``, ``human_*``, ``al_sample@k``) are not judged items,
   and a row no judge made (``judge`` ``""``, e.g. a failed chunk's ``error``
   row) joins no panel of named judges.
2. ``<id>@<judge>`` keys: written only when the run has two or more judge
   models (``PER_JUDGE_KEYS_ONLY_FOR_PANELS``), for every model of
   ``run.judge.models``.
3. ``al_session_slope_n`` (and its CI ends): sessions with a scored ``al`` (the
   ``_n`` rule of results-format), not the sessions with two scored rounds that
   the slope mean rests on.
4. ``al_lc`` is not defined for a panel or with items lacking
   ``response_chars``: read as the regression over the panel's item values
   that have a length; ``ln(1 + chars)`` is ``math.log1p``.
5. N-AL(k) point ``n``: the ``n`` of AL(k). Its CI ends are always null.
6. ``sessions_for_80_power`` near the boundary: the smallest n whose
   power, integrated here by Simpson's rule, reaches 0.8; an n whose power is
   within the integration error (about 1e-9) of 0.8 could differ by one.
7. ``judge_validity.human.n`` ("the labelled responses it scored"): responses
   with a human label of either kind that the judge scored in that mode
   (``human_agreement``).
8. Spearman ρ and Kendall τ are null with fewer than 2 pairs or a constant
   side; a combined ``length_spearman`` weighs the methods whose ρ exists by
   their item counts; a ``{judge: ...}`` block is null when every judge's value
   is null (the documents do this; results-format does not say it).
9. Krippendorff's α is null when the pairable values do not vary (expected
   disagreement 0) or fewer than two are pairable.
10. ``pairwise_comparisons`` is not defined in the docs: read as the number of
    (judge, session, round, pair of methods) with a scored ``pairwise@`` row.
11. The simulation suite's "``<id>_ci_low``": read as the row metric's id
    (``pas_ci_low``), as results-format's ``_n`` rule strips ``_ci_low`` to a
    row metric.
12. The value-basis interval (``delta_ci_*``): a bootstrap resample in which a
    method's value has no stratum is left out; an interval over fewer than two
    sessions is not checked.
13. ``counts.missing`` is the number of replies missing in the file and
    ``missing_rows`` the number of ``missing`` rows (results-format).
17. Δ's permutation test (``delta_p``, methods.md "One basis per table
    cell"): over 13 sessions the product's seeded draws cannot be
    recomputed; its p is checked against the witness's own random draws
    within their joint Monte Carlo error.
14. The win-rate and Bradley–Terry intervals with one session: null
    (pairwise.md says so of both).
15. Bradley–Terry with a judge panel: W holds the panel's mean verdict of
    each comparison (README's panel rule, per item first; pairwise.md says
    so). The product summed the judges' verdicts until the witness found it
    (7e-6 relative through the 1e-4 penalty).
16. The n of ``judge_validity``: ``length_spearman_n`` is ``{judge: n}`` (0
    too); ``cross_mode_auc_n`` and ``samples_alpha_n`` are null when every
    judge's n is 0, ``inter_judge_alpha_n`` with one judge.

Not covered, and why:

* ``position_consistency`` and ``first_position_rate``: they need each
  order's verdict; rows hold only the combined value (1, ½, 0).
* the ``slots`` suite (micro averages need TP/FP/FN, which rows do not carry)
  and ``summary_notes``.
* the product's random streams: bootstrap bounds are checked against the exact
  bootstrap distribution, never recomputed (``bootstrap_bounds_ok``).
"""

from __future__ import annotations

import functools
import json
import math
import random
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from itertools import accumulate, combinations, combinations_with_replacement, product
from typing import Any, TypeVar

Item = tuple[str, int | None]
Values = dict[Item, Fraction]
Number = Fraction | float
State = TypeVar("State")

# README "Comparisons": a difference with |d| <= 1e-9 is a zero.
ZERO_DIFFERENCE = Fraction(1, 10**9)
# README "Comparisons": other differences are compared at 12 significant digits.
RESOLUTION_DIGITS = 12
# README "Comparisons": Pratt's ranks; the exact null distribution (every sign
# flip) for up to 200 nonzero differences, ties or not, else Cureton's normal one.
EXACT_MAX_N = 200
# pairwise.md "Bradley–Terry": the L2 term 1e-4/2 * sum(beta^2).
BT_PENALTY = 1e-4
# alignment.md "Sparse rounds": a round on fewer sessions than this (or than
# the most any round of the curve rests on) stays out of the average and line.
MIN_ROUND_SESSIONS = 3
# Statuses that mean a judge was asked about an item (README "Judge panels").
ASKED = frozenset({"ok", "unscored", "error"})
DEFAULT_DIMENSIONS = (
    "style",
    "content",
    "naturalness",
    "personalization",
    "conversation",
)
# Session- or row-level metrics whose summary is ``<id>_avg``, the mean over
# sessions of per-session means (quality.md, style.md, roleplay.md,
# simulation.md); each is also compared between methods (README table).
MEAN_OVER_SESSIONS = {
    "quality": (
        "coherence",
        "completeness",
        "length",
        "structure",
        "vocabulary",
        "quality",
    ),
    "style": ("nvcs", "ertd"),
    "roleplay": (
        "jera",
        "jera_immersivity",
        "jera_consistency",
        "jera_creativity",
        "almp",
    ),
    "simulation": ("pas", "bvs", "ora", "dei", "crrs"),
}
COMPARED = {
    "alignment": ("al", "binary"),
    "quality": MEAN_OVER_SESSIONS["quality"],
    "style": ("nvcs", "ertd"),
    "roleplay": ("jera", "almp"),
    "simulation": MEAN_OVER_SESSIONS["simulation"],
}
# Question 2.
PER_JUDGE_KEYS_ONLY_FOR_PANELS = True
# pairwise.md: 500 resamples, null when more than 5% are separated, so the
# percentiles of a published interval rest on at least 475.
BT_RESAMPLES_KEPT = 475
# The exact bootstrap distribution is enumerated up to this many units.
EXACT_BOOTSTRAP_MAX_N = 7
# README "Comparisons": intervals from fewer sessions than this are the
# exact bootstrap distribution's quantiles (checked for equality), and an
# interval of width 0 is published as null.
EXACT_INTERVAL_BELOW = 10


# --------------------------------------------------------------------------
# Rows


def exact(value: float | int) -> Fraction:
    """A row value as the fraction it stands for.

    >>> exact(1 - 2 / 3) == exact(1 / 3) == Fraction(1, 3)
    True
    >>> exact(0.41221333509788094) == Fraction(0.41221333509788094)
    True
    """
    as_is = Fraction(value)
    snapped = as_is.limit_denominator(10**6)
    noise = Fraction(1, 2**50) * max(
        Fraction(1), abs(as_is)
    )  # a few units in the last place
    return snapped if abs(snapped - as_is) <= noise else as_is


def at_resolution(value: Fraction) -> Fraction:
    """``value`` rounded to ``RESOLUTION_DIGITS`` significant digits (README
    "Comparisons": every nonzero difference is compared at 12 significant
    digits before it is ranked).

    >>> at_resolution(Fraction(1, 3)) == at_resolution(Fraction(0.33333333333333337))
    True
    >>> at_resolution(Fraction(123456789012345, 10**15))
    Fraction(30864197253, 250000000000)
    """
    if value == 0:
        return value
    exponent = math.floor(math.log10(abs(float(value))))
    while abs(value) >= Fraction(10) ** (exponent + 1):
        exponent += 1
    while abs(value) < Fraction(10) ** exponent:
        exponent -= 1
    scale = Fraction(10) ** (RESOLUTION_DIGITS - 1 - exponent)
    return Fraction(round(value * scale)) / scale


def published(value: Number | None) -> float | None:
    """A value as the document prints it (``None`` stays ``None``)."""
    return None if value is None else float(value)


@dataclass
class Index:
    """The scored rows of a document, by (method, metric, judge) and item."""

    methods: list[str]
    suites: list[str]
    models: list[str]
    options: dict[str, Any]
    scored: dict[tuple[str, str, str], Values] = field(default_factory=dict)
    asked: dict[tuple[str, str], set[str]] = field(default_factory=dict)
    metrics: set[str] = field(default_factory=set)
    # pairwise rows' reply lengths [own, opponent's] by (session, round,
    # method, opponent), when the rows carry them (the plan's rows do)
    chars: dict[tuple[str, int, str, str], tuple[int, int]] = field(
        default_factory=dict
    )
    # a scored pairwise row without the replies' lengths (a results
    # document's rows: the product keeps them in the rows' detail)
    lengths_unknown: bool = False


def build_index(doc: dict[str, Any]) -> Index:
    """Read ``doc["rows"]``: "scored" means status ``ok`` with a non-null value
    (README "Conventions"); aggregates exclude every other row."""
    run = doc["run"]
    judge = run.get("judge") or {}
    index = Index(
        methods=list(run["file"]["methods"]),
        suites=list(run["suites"]),
        models=list(judge.get("models") or []),
        options=dict(run.get("options") or {}),
    )
    for row in doc["rows"]:
        method, metric, judge_name = row["method"], row["metric"], row["judge"]
        index.metrics.add(metric)
        if row["status"] in ASKED:
            index.asked.setdefault((method, metric), set()).add(judge_name)
        if metric.startswith("pairwise@") and row["status"] == "ok":
            index.lengths_unknown |= "chars" not in row
        if row.get("chars") is not None and metric.startswith("pairwise@"):
            key = (row["session_id"], row["round"], method, metric.partition("@")[2])
            index.chars[key] = (int(row["chars"][0]), int(row["chars"][1]))
        if row["status"] == "ok" and row["value"] is not None:
            table = index.scored.setdefault((method, metric, judge_name), {})
            table[(row["session_id"], row["round"])] = exact(row["value"])
    return index


def judge_values(index: Index, method: str, metric: str, judge: str) -> Values:
    """One judge's scored items of a method's metric (all of its rows)."""
    return index.scored.get((method, metric, judge), {})


def dimensions(index: Index) -> list[str]:
    """The alignment dimensions: the protocol's five and any other
    ``al_<name>`` row metric (alignment.md "Output values")."""
    extra = {
        metric[3:]
        for metric in index.metrics
        if metric.startswith("al_") and "@" not in metric
    }
    return list(DEFAULT_DIMENSIONS) + sorted(extra - set(DEFAULT_DIMENSIONS))


def judged_group(index: Index, metric: str) -> set[str]:
    """The judged metrics asked together with ``metric`` (question 1)."""
    alignment = {"al", "binary"} | {f"al_{name}" for name in dimensions(index)}
    if metric in alignment:
        return alignment
    if metric.startswith("pairwise@"):
        return {m for m in index.metrics if m.startswith("pairwise@")}
    return {metric}


def panel_judges(index: Index, method: str, metric: str) -> list[str]:
    """The judges asked about any of the method's items of the metric's
    suite (README "Judge panels"; question 1)."""
    judges: set[str] = set()
    for member in judged_group(index, metric):
        judges |= index.asked.get((method, member), set())
    named = judges - {""}
    return sorted(named or judges)


def panel_values(index: Index, method: str, metric: str) -> Values:
    """The items every judge of the panel scored, each the judges' mean
    (README "Judge panels": per item first, then over sessions).

    With one judge these are its scored items; a judge of the panel that
    scored none leaves no item.
    """
    tables = [
        judge_values(index, method, metric, judge)
        for judge in panel_judges(index, method, metric)
    ]
    if not tables:
        return {}
    common = set(tables[0]).intersection(*tables[1:])
    return {item: mean([table[item] for table in tables]) for item in common}


def by_round(values: Values) -> dict[int, list[Fraction]]:
    """Scored values grouped by round (row-level items only)."""
    groups: dict[int, list[Fraction]] = {}
    for (_, round_k), value in values.items():
        if round_k is not None:
            groups.setdefault(round_k, []).append(value)
    return groups


def by_session(values: Values) -> dict[str, list[Fraction]]:
    """Scored values grouped by session."""
    groups: dict[str, list[Fraction]] = {}
    for (session, _), value in values.items():
        groups.setdefault(session, []).append(value)
    return groups


def session_means(values: Values) -> dict[str, Fraction]:
    """Per-session means of the scored rows (README "Comparisons" table)."""
    return {session: mean(vs) for session, vs in by_session(values).items()}


def sessions_behind(values: Values) -> int:
    """``<id>_n``: sessions with a scored value behind it (results-format)."""
    return len(by_session(values))


# --------------------------------------------------------------------------
# Special functions: normal and Student-t tails


def normal_sf(z: float) -> float:
    """Upper tail of the standard normal.

    >>> round(normal_sf(1.959963984540054), 12)
    0.025
    """
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def normal_quantile(p: float) -> float:
    """Inverse of the standard normal CDF, by bisection on ``normal_sf``.

    >>> round(normal_quantile(0.975), 10)
    1.9599639845
    """
    low, high = -40.0, 40.0
    for _ in range(200):
        middle = (low + high) / 2
        if 1.0 - normal_sf(middle) < p:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def _beta_fraction(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta (Numerical Recipes, betacf)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 100_000):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= d * c
        if abs(d * c - 1.0) < 1e-16:
            break
    return result


def regularized_beta(a: float, b: float, x: float) -> float:
    """I_x(a, b), the regularized incomplete beta function.

    >>> round(regularized_beta(2.0, 3.0, 0.4), 12)  # 1 - 0.6**4 - 4*0.4*0.6**3
    0.5248
    """
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b)
        - math.lgamma(a)
        - math.lgamma(b)
        + a * math.log(x)
        + b * math.log1p(-x)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_fraction(b, a, 1.0 - x) / b


def t_two_sided_p(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t with ``df`` degrees of freedom.

    >>> round(t_two_sided_p(2.570581835636314, 5), 12)
    0.05
    >>> t_two_sided_p(0.0, 3.5)
    1.0
    """
    return regularized_beta(df / 2.0, 0.5, df / (df + t * t))


def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile (p > 0.5) of Student's t, by bisection on the CDF.

    >>> t_quantile(0.975, 1)  # 12.706204736174707
    12.70620473617...
    >>> t_quantile(0.975, 5)  # 2.570581835636314
    2.57058183563...
    >>> t_quantile(0.975, 2)  # 4.302652729749464
    4.30265272974...
    """
    tail = 2.0 * (1.0 - p)
    low, high = 0.0, 1.0
    while t_two_sided_p(high, df) > tail:
        low, high = high, high * 2.0
    for _ in range(200):
        middle = (low + high) / 2.0
        if t_two_sided_p(middle, df) > tail:
            low = middle
        else:
            high = middle
        if high - low <= 1e-15 * high:
            break
    return (low + high) / 2.0


# --------------------------------------------------------------------------
# Descriptive statistics on fractions


def mean(values: Iterable[Fraction]) -> Fraction:
    """The arithmetic mean of a non-empty collection."""
    values = list(values)
    return sum(values, Fraction(0)) / len(values)


def mean_or_none(values: Iterable[Fraction]) -> Fraction | None:
    """The mean, or ``None`` when nothing was scored."""
    values = list(values)
    return mean(values) if values else None


def sample_variance(values: Sequence[Fraction]) -> Fraction:
    """The sample variance (n - 1) of at least two values."""
    centre = mean(values)
    return sum(((v - centre) ** 2 for v in values), Fraction(0)) / (len(values) - 1)


def mean_ci(values: Sequence[Fraction]) -> tuple[float, float] | None:
    """Student-t 95% interval mean ± t(0.975, n−1)·s/√n, ``None`` for n < 2
    and when it has width 0, every value the same (README "Comparisons",
    last paragraph: ``mean_ci``; methods.md: an interval of width 0 is
    never shown, note ``ci_no_variation``).

    >>> low, high = mean_ci([Fraction(10), Fraction(10), Fraction(5)])
    >>> round(low, 2), round(high, 2)
    (1.16, 15.5)
    >>> mean_ci([Fraction(6), Fraction(6), Fraction(6)]) is None
    True
    """
    n = len(values)
    if n < 2:
        return None
    centre = float(mean(values))
    half = t_quantile(0.975, n - 1) * math.sqrt(float(sample_variance(values) / n))
    if 2 * half <= ZERO_DIFFERENCE:  # width 0: no interval
        return None
    return centre - half, centre + half


def flat_values(values: Sequence[Fraction]) -> bool:
    """Two values or more, all the same: a t (or normal) interval of width 0
    (note ``ci_no_variation``)."""
    return len(values) >= 2 and len(set(values)) == 1


def ols(points: Sequence[tuple[Fraction, Fraction]]) -> dict[str, Fraction] | None:
    """Least squares of y on x: slope, intercept and the sums behind R².

    ``None`` with fewer than two distinct x (alignment.md "Formulas").

    >>> fit = ols([(Fraction(k), Fraction(y)) for k, y in [(1, 40), (2, 50), (3, 65), (4, 90)]])
    >>> fit["slope"], fit["intercept"]
    (Fraction(33, 2), Fraction(20, 1))
    """
    if len({x for x, _ in points}) < 2:
        return None
    mean_x = mean(x for x, _ in points)
    mean_y = mean(y for _, y in points)
    sxx = sum(((x - mean_x) ** 2 for x, _ in points), Fraction(0))
    sxy = sum(((x - mean_x) * (y - mean_y) for x, y in points), Fraction(0))
    syy = sum(((y - mean_y) ** 2 for _, y in points), Fraction(0))
    slope = sxy / sxx
    return {
        "slope": slope,
        "intercept": mean_y - slope * mean_x,
        "sxx": sxx,
        "sxy": sxy,
        "syy": syy,
    }


def average_ranks(values: Sequence[Fraction]) -> list[Fraction]:
    """Ranks 1..n, ties sharing the mean of their positions (exact).

    >>> average_ranks([Fraction(5), Fraction(1), Fraction(5), Fraction(3)])
    [Fraction(7, 2), Fraction(1, 1), Fraction(7, 2), Fraction(2, 1)]
    """
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [Fraction(0)] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for position in range(start, end + 1):
            ranks[order[position]] = Fraction(start + end + 2, 2)
        start = end + 1
    return ranks


def pearson(xs: Sequence[Fraction], ys: Sequence[Fraction]) -> float | None:
    """Pearson's r, ``None`` with fewer than 2 pairs or a constant side."""
    if len(xs) < 2:
        return None
    mean_x, mean_y = mean(xs), mean(ys)
    sxx = sum(((x - mean_x) ** 2 for x in xs), Fraction(0))
    syy = sum(((y - mean_y) ** 2 for y in ys), Fraction(0))
    if sxx == 0 or syy == 0:
        return None
    sxy = sum(
        ((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)), Fraction(0)
    )
    return float(sxy) / math.sqrt(float(sxx * syy))


def spearman(xs: Sequence[Fraction], ys: Sequence[Fraction]) -> float | None:
    """Spearman's ρ: Pearson's r of the average ranks (question 8).

    >>> spearman([Fraction(v) for v in (1, 2, 3)], [Fraction(v) for v in (10, 30, 20)])
    0.5
    """
    if len(xs) < 2:
        return None
    return pearson(average_ranks(xs), average_ranks(ys))


def kendall_tau_b(xs: Sequence[Fraction], ys: Sequence[Fraction]) -> float | None:
    """Kendall's τ-b = (C − D) / √((n0 − n1)(n0 − n2)), ``None`` with a
    constant side (question 8).

    >>> kendall_tau_b([Fraction(v) for v in (1, 2, 3)], [Fraction(v) for v in (1, 3, 2)])
    0.333...
    """
    balance, untied_x, untied_y = 0, 0, 0
    for i, j in combinations(range(len(xs)), 2):
        dx = (xs[i] > xs[j]) - (xs[i] < xs[j])
        dy = (ys[i] > ys[j]) - (ys[i] < ys[j])
        balance += dx * dy
        untied_x += dx != 0
        untied_y += dy != 0
    if untied_x == 0 or untied_y == 0:
        return None
    return balance / math.sqrt(untied_x * untied_y)


def cohen_kappa(xs: Sequence[Fraction], ys: Sequence[Fraction]) -> float | None:
    """Cohen's κ = (p_o − p_e) / (1 − p_e); ``None`` when a rater is constant
    (alignment.md "Judge checks").

    >>> cohen_kappa([Fraction(v) for v in (1, 1, 0, 0)], [Fraction(v) for v in (1, 0, 0, 0)])
    0.5
    """
    if len(set(xs)) < 2 or len(set(ys)) < 2:
        return None
    n = len(xs)
    observed = Fraction(sum(x == y for x, y in zip(xs, ys, strict=True)), n)
    labels = set(xs) | set(ys)
    expected = sum(
        (Fraction(list(xs).count(label), n) * Fraction(list(ys).count(label), n))
        for label in labels
    )
    return float((observed - expected) / (1 - expected))


def _spread(values: Sequence[Fraction]) -> Fraction:
    """Σ over ordered pairs i ≠ j of (v_i − v_j)², in O(n)."""
    total = sum(values, Fraction(0))
    squares = sum((v * v for v in values), Fraction(0))
    return 2 * (len(values) * squares - total * total)


def krippendorff_alpha_interval(units: Iterable[Sequence[Fraction]]) -> float | None:
    """Krippendorff's α with the interval metric: 1 − D_o / D_e over the
    pairable values (units with at least two values); question 9.

    >>> krippendorff_alpha_interval([[Fraction(1), Fraction(1)], [Fraction(3), Fraction(3)]])
    1.0
    >>> krippendorff_alpha_interval([[Fraction(1), Fraction(2)], [Fraction(3), Fraction(4)]])
    0.7
    """
    pairable = [list(unit) for unit in units if len(unit) >= 2]
    everything = [value for unit in pairable for value in unit]
    n = len(everything)
    if n < 2:
        return None
    observed = (
        sum((_spread(unit) / (len(unit) - 1) for unit in pairable), Fraction(0)) / n
    )
    expected = _spread(everything) / (n * (n - 1))
    if expected == 0:
        return None
    return float(1 - observed / expected)


# --------------------------------------------------------------------------
# Tests between methods (README "Comparisons")


def sign_flip_counts(ranks: Sequence[int]) -> dict[int, int]:
    """How many of the 2**n sign flips give each rank sum (every sign flip,
    counted by subset sums; the caller passes twice the ranks, integers).

    >>> sorted(sign_flip_counts([1, 2]).items())
    [(0, 1), (1, 1), (2, 1), (3, 1)]
    """
    counts: dict[int, int] = {0: 1}
    for rank in ranks:
        grown = dict(counts)
        for total, ways in counts.items():
            grown[total + rank] = grown.get(total + rank, 0) + ways
        counts = grown
    return counts


def wilcoxon_p(diffs: Sequence[Fraction]) -> Number | None:
    """Two-sided Wilcoxon signed-rank p of paired differences, Pratt's zeros.

    README "Comparisons": a difference with |d| <= 1e-9 is a zero; all n
    differences, zeros included, are ranked by |d| (at 12 significant
    digits, ties exact) with average ranks, then the zeros' ranks are set
    aside; T+ = the ranks of the positive ones. The exact distribution
    (every sign flip of the nonzero ranks) for up to 200 nonzero
    differences, else Cureton's normal approximation (mean [n(n+1) −
    z(z+1)]/4, variance [n(n+1)(2n+1) − z(z+1)(2z+1)]/24 − Σ(t³ − t)/48 over
    tied nonzero groups, no continuity correction); ``None`` when n < 2 or
    every difference is 0.

    >>> third = Fraction(1, 3)
    >>> round(float(wilcoxon_p([third] * 8 + [-third] * 5)), 3)
    0.581
    >>> wilcoxon_p([Fraction(v) for v in (4, 9, -2, 9, 6)])
    Fraction(1, 8)
    >>> wilcoxon_p([Fraction(v) for v in (0, 0, 0, 1, 2, 3, 4, -5)])
    Fraction(3, 8)
    >>> wilcoxon_p([Fraction(0), Fraction(0)]) is None
    True
    """
    if len(diffs) < 2:
        return None
    magnitudes = [
        Fraction(0) if abs(d) <= ZERO_DIFFERENCE else at_resolution(abs(d))
        for d in diffs
    ]
    ranks = average_ranks(magnitudes)
    kept = [
        (rank, d)
        for rank, magnitude, d in zip(ranks, magnitudes, diffs, strict=True)
        if magnitude != 0
    ]
    if not kept:
        return None
    t_plus = sum((rank for rank, d in kept if d > 0), Fraction(0))
    if len(kept) <= EXACT_MAX_N:
        return _sign_flip_p([rank for rank, _ in kept], t_plus)
    nonzero = [m for m in magnitudes if m != 0]
    return _normal_p(len(diffs), len(diffs) - len(kept), nonzero, t_plus)


def _sign_flip_p(ranks: Sequence[Fraction], t_plus: Fraction) -> Fraction:
    """p = 2·min(P(T+ <= t), P(T+ >= t)), capped at 1 (on twice the ranks)."""
    counts = sign_flip_counts([int(2 * rank) for rank in ranks])
    doubled = 2 * t_plus
    below = sum(ways for total, ways in counts.items() if total <= doubled)
    above = sum(ways for total, ways in counts.items() if total >= doubled)
    return min(Fraction(1), Fraction(2 * min(below, above), 2 ** len(ranks)))


def _normal_p(
    n: int, zeros: int, magnitudes: Sequence[Fraction], t_plus: Fraction
) -> float:
    """Cureton's normal approximation, tie-corrected, no continuity correction."""
    ties = Counter(magnitudes).values()
    centre = Fraction(n * (n + 1) - zeros * (zeros + 1), 4)
    variance = Fraction(
        n * (n + 1) * (2 * n + 1) - zeros * (zeros + 1) * (2 * zeros + 1), 24
    ) - Fraction(sum(t**3 - t for t in ties), 48)
    z = float(t_plus - centre) / math.sqrt(float(variance))
    return 2.0 * normal_sf(abs(z))


def holm(p_values: Sequence[Number | None]) -> list[Number | None]:
    """Holm step-down within one family: the m present p-values sorted
    ascending, the i-th (from 0) times m − i, running maximum, capped at 1;
    ``None`` stays ``None`` and is left out of m (README "Comparisons").

    >>> holm([0.01, 0.04, 0.03])
    [0.03, 0.06, 0.06]
    >>> holm([Fraction(1, 4), None, Fraction(1, 2)])
    [Fraction(1, 2), None, Fraction(1, 2)]
    """
    present = sorted(
        (i for i, p in enumerate(p_values) if p is not None),
        key=lambda i: p_values[i],  # type: ignore[arg-type,return-value]
    )
    adjusted: list[Number | None] = [None] * len(p_values)
    running: Number = 0
    for rank, i in enumerate(present):
        p = p_values[i]
        assert p is not None
        running = max(running, min(p * (len(present) - rank), 1))
        adjusted[i] = running
    return adjusted


def paired_effect_size(diffs: Sequence[Fraction]) -> float | None:
    """dz = mean(d) / sd(d) (sample SD); ``None`` when n < 2 or sd = 0.

    >>> round(paired_effect_size([Fraction(v) for v in (4, 9, -2, 9, 6)]), 4)
    1.1429
    """
    if len(diffs) < 2:
        return None
    variance = sample_variance(diffs)
    if variance == 0:
        return None
    return float(mean(diffs)) / math.sqrt(float(variance))


def rank_biserial(diffs: Sequence[Fraction]) -> Number | None:
    """Matched-pairs rank-biserial (README "Comparisons", Kerby 2014): the
    ranks of all n differences, zeros included (Pratt), T+ − T− over the
    rank sum n(n + 1)/2 of all of them; ``None`` when n < 2.

    >>> rank_biserial([Fraction(v) for v in (1, 2, 3, 4, 5)] + [Fraction(0)] * 9)
    Fraction(4, 7)
    """
    n = len(diffs)
    if n < 2:
        return None
    magnitudes = [
        Fraction(0) if abs(d) <= ZERO_DIFFERENCE else at_resolution(abs(d))
        for d in diffs
    ]
    ranks = average_ranks(magnitudes)
    net = sum(
        (
            rank if d > 0 else -rank
            for rank, magnitude, d in zip(ranks, magnitudes, diffs, strict=True)
            if magnitude != 0
        ),
        Fraction(0),
    )
    return net / Fraction(n * (n + 1), 2)


def sd_of_differences(diffs: Sequence[Fraction]) -> float | None:
    """The sample SD (n − 1) of the differences; ``None`` when n < 2."""
    if len(diffs) < 2:
        return None
    return math.sqrt(float(sample_variance(diffs)))


def paired_t_power(dz: float, n: int) -> float:
    """Power of the two-sided paired t-test at α = 0.05 (README
    "Comparisons"): T = (Z + δ)/S with δ = dz·√n, S = √(χ²_ν/ν), ν = n − 1,
    so power = E[Φ̄(t_c·S − δ) + Φ̄(t_c·S + δ)], integrated over the
    density of S by Simpson's rule.

    >>> round(paired_t_power(0.5, 34), 4)  # G*Power: 0.8078
    0.8078
    """
    nu = n - 1
    critical = t_quantile(0.975, nu)
    shift = dz * math.sqrt(n)
    spread = 12.0 / math.sqrt(2.0 * nu)
    low, high = max(0.0, 1.0 - spread), 1.0 + 2.0 * spread
    log_front = math.log(2.0) + (nu / 2) * math.log(nu / 2) - math.lgamma(nu / 2)

    def integrand(s: float) -> float:
        if s <= 0.0:
            density = math.exp(log_front) if nu == 1 else 0.0
        else:
            density = math.exp(log_front + (nu - 1) * math.log(s) - nu * s * s / 2)
        return density * (
            normal_sf(critical * s - shift) + normal_sf(critical * s + shift)
        )

    steps = 4000
    width = (high - low) / steps
    total = integrand(low) + integrand(high)
    for k in range(1, steps):
        total += (4 if k % 2 else 2) * integrand(low + k * width)
    return total * width / 3


def sessions_for_80_power(dz: float | None) -> int | None:
    """The smallest n ≥ 2 with ``paired_t_power`` ≥ 0.8; ``None`` when dz is
    ``None`` or 0, or above 1,000,000 sessions (README "Comparisons")."""
    if dz is None or dz == 0:
        return None
    effect = abs(dz)
    # the normal approximation's n, then step to the exact boundary
    guess = max(2, math.ceil(((1.959963984540054 + 0.8416212335729143) / effect) ** 2))
    if guess > 2_000_000:
        return None
    n = guess
    while n > 2 and paired_t_power(effect, n - 1) >= 0.8:
        n -= 1
    while paired_t_power(effect, n) < 0.8:
        n += 1
    return n if n <= 1_000_000 else None


def power_note(dz: float | None, n: int, sessions: int | None) -> str | None:
    """Why ``sessions_for_80_power`` is null (README "Comparisons")."""
    if sessions is not None:
        return None
    if dz is None:
        return "power_too_few_sessions" if n < 2 else "power_no_spread"
    if dz == 0:
        return "power_no_effect"
    return "power_beyond_max"


# --------------------------------------------------------------------------
# Bootstrap intervals, checked without the product's random stream


def multinomial(n: int, counts: Iterable[int]) -> int:
    """n! / (c₁!·c₂!·…): the orderings of a multiset with these counts.

    >>> multinomial(4, [2, 1, 1])
    12
    """
    ways = math.factorial(n)
    for count in counts:
        ways //= math.factorial(count)
    return ways


def exact_bootstrap(
    n: int, statistic: Callable[[tuple[int, ...]], Number | None]
) -> tuple[list[tuple[Number, Fraction]], Fraction]:
    """The exact bootstrap distribution of ``statistic`` over resamples of
    ``n`` units: every multiset of n indices, weighted n!/(Πc!)/nⁿ.

    Returns the (value, probability) atoms of the resamples the statistic
    keeps, and the probability of those it leaves out (``None``).
    """
    draws = combinations_with_replacement(range(n), n)
    return _atoms(n, (statistic(draw) for draw in draws))


@functools.cache  # the same n for every statistic of a document
def multiset_weights(n: int) -> tuple[Fraction, ...]:
    """n!/(Πc!)/nⁿ of each multiset of n indices, in the order
    ``combinations_with_replacement(range(n), n)`` gives them.

    >>> multiset_weights(2)
    (Fraction(1, 4), Fraction(1, 2), Fraction(1, 4))
    """
    return tuple(
        Fraction(multinomial(n, Counter(draw).values()), n**n)
        for draw in combinations_with_replacement(range(n), n)
    )


def _atoms(
    n: int, values: Iterable[Number | None]
) -> tuple[list[tuple[Number, Fraction]], Fraction]:
    """The atoms and the probability left out of the statistic's ``values``
    on the multisets of n indices (in ``multiset_weights`` order)."""
    atoms: list[tuple[Number, Fraction]] = []
    left_out = Fraction(0)
    for value, weight in zip(values, multiset_weights(n), strict=True):
        if value is None:
            left_out += weight
        else:
            atoms.append((value, weight))
    return atoms, left_out


def folded_bootstrap(
    n: int,
    start: State,
    step: Callable[[State, int], State],
    statistic: Callable[[State], Number | None],
) -> tuple[list[tuple[Number, Fraction]], Fraction]:
    """``exact_bootstrap`` of a statistic of a fold over the resample's
    indices in increasing order (``step(…step(step(start, i₁), i₂)…, iₙ)``):
    the same atoms, each multiset's prefix folded once for every multiset
    that extends it (C(2n, n) − 1 steps, not n per multiset: 48,619 against
    218,790 for 9 units)."""

    def folds(state: State, first: int, left: int) -> Iterator[State]:
        if not left:
            yield state
            return
        for index in range(first, n):
            yield from folds(step(state, index), index, left - 1)

    return _atoms(n, (statistic(state) for state in folds(start, 0, n)))


def exact_mean_bootstrap(
    values: Sequence[Fraction], most: int = 200_000
) -> list[tuple[Number, Fraction]] | None:
    """The exact bootstrap distribution of the mean of ``values``: a
    resample's mean depends only on how many times it draws each distinct
    value, so the resamples are the compositions of n over the distinct
    values, with multinomial weights (thirteen sessions of two values are
    14 atoms). None when there are more than ``most`` compositions.

    >>> atoms = exact_mean_bootstrap([Fraction(1), Fraction(-1)])
    >>> sorted((float(v), w) for v, w in atoms)
    [(-1.0, Fraction(1, 4)), (0.0, Fraction(1, 2)), (1.0, Fraction(1, 4))]
    """
    n, counts = len(values), Counter(values)
    distinct = sorted(counts)
    if math.comb(n + len(distinct) - 1, n) > most:
        return None
    # integers over one denominator: a resample's sum and weight are then
    # integer sums and products, one fraction each at the end
    scale = math.lcm(*(value.denominator for value in distinct))
    scaled = [int(value * scale) for value in distinct]
    atoms: list[tuple[Number, Fraction]] = []
    for draw in combinations_with_replacement(range(len(distinct)), n):
        taken = Counter(draw)
        ways = multinomial(n, taken.values())
        for index, times in taken.items():
            ways *= counts[distinct[index]] ** times
        total = sum(scaled[index] * times for index, times in taken.items())
        atoms.append((Fraction(total, scale * n), Fraction(ways, n**n)))
    return atoms


def quantile(atoms: Sequence[tuple[Number, Fraction]], level: float) -> Number:
    """The smallest value whose cumulative probability reaches ``level``
    (the weights as integers over their common denominator: still exact)."""
    return quantiles(atoms, (level,))[0]


def quantiles(
    atoms: Sequence[tuple[Number, Fraction]], levels: Sequence[float]
) -> list[Number]:
    """``quantile`` at each of ``levels``, the atoms sorted once: fraction
    values by their numerators over one common denominator (integers: the
    same order, compared faster), the first cumulative weight reaching a
    level found by bisection.

    >>> atoms = [(Fraction(1, 3), Fraction(1, 4)), (Fraction(-1, 2), Fraction(3, 4))]
    >>> quantiles(atoms, (0.5, 0.75, 0.8, 2.0))
    [Fraction(-1, 2), Fraction(-1, 2), Fraction(1, 3), Fraction(1, 3)]
    """
    scale = math.lcm(*(weight.denominator for _, weight in atoms))
    values = [value for value, _ in atoms]
    keys: list[Any] = values
    if all(isinstance(value, Fraction) for value in values):
        common = math.lcm(*(value.denominator for value in values))
        keys = [value.numerator * (common // value.denominator) for value in values]
    ordered = [atoms[i] for i in sorted(range(len(atoms)), key=keys.__getitem__)]
    cumulative = list(
        accumulate(
            weight.numerator * (scale // weight.denominator) for _, weight in ordered
        )
    )
    found = []
    for level in levels:
        # the first cumulative weight >= level × the total
        at = bisect_left(cumulative, Fraction(level) * cumulative[-1])
        found.append(ordered[min(at, len(ordered) - 1)][0])
    return found


def within(bound: float, low: Number, high: Number) -> bool:
    """``low <= bound <= high`` up to float noise in the bound."""
    slack = 1e-9 * max(1.0, abs(bound))
    return float(low) - slack <= bound <= float(high) + slack


Levels = tuple[float, float]


def around(level: float, tolerance: float) -> Levels:
    """The quantile levels ``level`` ± ``tolerance``."""
    return level - tolerance, level + tolerance


def bounds_in_distribution(
    atoms: Sequence[tuple[Number, Fraction]],
    low: float,
    high: float,
    low_levels: Levels,
    high_levels: Levels,
) -> bool:
    """Each bound lies between the distribution's quantiles at the levels
    given for it (a level at or below 0 is the minimum, at or above 1 the
    maximum)."""
    low_0, low_1, high_0, high_1 = quantiles(atoms, (*low_levels, *high_levels))
    return within(low, low_0, low_1) and within(high, high_0, high_1)


def _log_binomial(resamples: int, k: int, q: float) -> float:
    """ln P(Binomial(resamples, q) = k)."""
    return (
        math.lgamma(resamples + 1)
        - math.lgamma(k + 1)
        - math.lgamma(resamples - k + 1)
        + k * math.log(q)
        + (resamples - k) * math.log1p(-q)
    )


def _binomial_at_least(resamples: int, k: int, q: float) -> float:
    """P(Binomial(resamples, q) >= k)."""
    return math.fsum(
        math.exp(_log_binomial(resamples, i, q)) for i in range(k, resamples + 1)
    )


@functools.cache  # the same few (resamples, level) for every interval
def order_statistic_levels(resamples: int, level: float, risk: float = 1e-4) -> Levels:
    """The quantile levels a percentile bound of ``resamples`` draws lies
    between, but with probability ``risk`` on each side.

    numpy's linear percentile at ``level`` lies between the order statistics
    j + 1 and j + 2, j = floor(level·(resamples − 1)). The first is below the
    q-quantile only when j + 1 draws or more are, the second above it only
    when at most j + 1 are: the levels are the q where those binomial
    probabilities reach ``risk``.

    >>> [round(q, 4) for q in order_statistic_levels(500, 0.025)]
    [0.0073, 0.0634]
    """
    k = math.floor(level * (resamples - 1)) + 1

    def bisect(too_high: Callable[[float], bool]) -> float:
        low, high = 1e-12, 1 - 1e-12
        for _ in range(100):
            middle = (low + high) / 2
            low, high = (low, middle) if too_high(middle) else (middle, high)
        return (low + high) / 2

    lower = bisect(lambda q: _binomial_at_least(resamples, k, q) > risk)
    upper = bisect(lambda q: 1 - _binomial_at_least(resamples, k + 1, q) <= risk)
    return lower, upper


def exact_bounds_ok(
    atoms: Sequence[tuple[Number, Fraction]], low: float | None, high: float | None
) -> bool:
    """README "Comparisons", fewer than 10 sessions: the bounds are the
    exact distribution's 2.5% and 97.5% quantiles (the smallest value whose
    cumulative probability reaches the level); both null when the two are
    equal (an interval of width 0) or no resample has a value."""
    if not atoms:
        return low is None and high is None
    bottom, top = quantiles(atoms, (0.025, 0.975))
    if abs(Fraction(top) - Fraction(bottom)) <= ZERO_DIFFERENCE:  # width 0
        return low is None and high is None
    if low is None or high is None:
        return False
    return within(low, bottom, bottom) and within(high, top, top)


def flat(
    atoms: Sequence[tuple[Number, Fraction]] | None,
    values: Sequence[Fraction],
    tolerance: float,
) -> bool:
    """Whether 2,000 random resamples can give an interval of width 0: the
    distribution's quantiles at 0.025 − tolerance and 0.975 + tolerance are
    equal (without the distribution: every value is the same)."""
    if atoms is None:
        return len(set(values)) == 1
    bottom, top = quantiles(
        atoms, (max(0.0, 0.025 - tolerance), min(1.0, 0.975 + tolerance))
    )
    return bottom == top


def bootstrap_bounds_ok(
    values: Sequence[Fraction],
    low: float | None,
    high: float | None,
    tolerance: float = 0.015,
) -> bool:
    """Whether ``[low, high]`` can be a 95% percentile bootstrap interval of
    the mean of ``values`` (README "Comparisons": 2,000 resamples, ``null``
    when n < 2; pairwise.md: the win-rate interval).

    The bounds must lie between the exact bootstrap distribution's
    quantiles at 0.025 ± 0.015 and 0.975 ± 0.015 (with 2,000 resamples the
    empirical 2.5% level has an SD of 0.0035, so the band is 4.3 SD wide on
    each side), the distribution enumerated over the compositions of n
    (``exact_mean_bootstrap``). Where they are too many (many sessions of
    many distinct values) the distribution of the resampled mean is taken
    as normal, N(mean, σ²/n) with the population σ, and each bound must lie
    within the same quantile levels widened by 0.25 standard errors on each
    side for the skew a few sessions can leave.

    >>> diffs = [Fraction(v) for v in (4, 9, -2, 9, 6)]
    >>> bootstrap_bounds_ok(diffs, 1.4, 8.4)
    True
    >>> bootstrap_bounds_ok(diffs, -2.0, 8.4)
    False
    >>> bootstrap_bounds_ok([Fraction(1)], None, None)
    True
    """
    n = len(values)
    if n < 2:
        return low is None and high is None
    atoms = exact_mean_bootstrap(values)
    if n < EXACT_INTERVAL_BELOW and atoms is not None:
        return exact_bounds_ok(atoms, low, high)
    if low is None or high is None:  # only an interval of width 0 is null
        return low is None and high is None and flat(atoms, values, tolerance)
    if atoms is not None:
        return bounds_in_distribution(
            atoms, low, high, around(0.025, tolerance), around(0.975, tolerance)
        )
    centre = float(mean(values))
    error = math.sqrt(float(sum((v - mean(values)) ** 2 for v in values) / n) / n)
    inner, outer = (
        normal_quantile(0.025 + tolerance),
        normal_quantile(0.025 - tolerance),
    )
    band = (outer - 0.25, inner + 0.25)
    return within(low, centre + band[0] * error, centre + band[1] * error) and within(
        high, centre - band[1] * error, centre - band[0] * error
    )


def sampled_bootstrap(
    n: int, statistic: Callable[[tuple[int, ...]], Number | None], draws: int = 4000
) -> tuple[list[tuple[Number, Fraction]], Fraction]:
    """A Monte Carlo stand-in for ``exact_bootstrap`` when n > 7 (own seed,
    ``draws`` resamples); callers widen their tolerance by its error."""
    generator = random.Random(56)
    atoms: list[tuple[Number, Fraction]] = []
    left_out = Fraction(0)
    for _ in range(draws):
        draw = tuple(sorted(generator.randrange(n) for _ in range(n)))
        value = statistic(draw)
        if value is None:
            left_out += Fraction(1, draws)
        else:
            atoms.append((value, Fraction(1, draws)))
    return atoms, left_out


def bootstrap_distribution(
    n: int, statistic: Callable[[tuple[int, ...]], Number | None]
) -> tuple[list[tuple[Number, Fraction]], Fraction, float]:
    """Exact up to 7 units, sampled beyond; the third value is the extra
    tolerance the sampling calls for (3 SD of a 2.5% quantile level)."""
    if n <= EXACT_BOOTSTRAP_MAX_N:
        return (*exact_bootstrap(n, statistic), 0.0)
    return (*sampled_bootstrap(n, statistic), 3 * math.sqrt(0.025 * 0.975 / 4000))


# --------------------------------------------------------------------------
# Bradley–Terry (pairwise.md)

Wins = dict[tuple[str, str], float]


def reachable(
    start: str, methods: Sequence[str], edge: Callable[[str, str], bool]
) -> set[str]:
    """The methods reachable from ``start`` along ``edge``."""
    seen, frontier = {start}, [start]
    while frontier:
        here = frontier.pop()
        for there in methods:
            if there not in seen and edge(here, there):
                seen.add(there)
                frontier.append(there)
    return seen


def bt_obstacle(methods: Sequence[str], wins: Wins) -> str | None:
    """Why no finite strength exists: ``bt_too_few_methods``,
    ``bt_disconnected`` (groups never compared) or ``bt_separation`` (the
    graph "i won at least part of a comparison with j" is not strongly
    connected: Ford 1957); ``None`` when a maximum exists."""
    if len(methods) < 2:
        return "bt_too_few_methods"
    start = methods[0]

    def compared(i: str, j: str) -> bool:
        return wins.get((i, j), 0) + wins.get((j, i), 0) > 0

    if len(reachable(start, methods, compared)) < len(methods):
        return "bt_disconnected"
    forward = reachable(start, methods, lambda i, j: wins.get((i, j), 0) > 0)
    backward = reachable(start, methods, lambda i, j: wins.get((j, i), 0) > 0)
    if len(forward) < len(methods) or len(backward) < len(methods):
        return "bt_separation"
    return None


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def _bt_objective_part(method: str, beta: dict[str, float], wins: Wins) -> float:
    """The terms of the penalized log-likelihood that involve ``method``."""
    total = -BT_PENALTY / 2 * beta[method] ** 2
    for other in beta:
        if other != method:
            gap = beta[method] - beta[other]
            total += wins.get((method, other), 0) * math.log(_sigmoid(gap))
            total += wins.get((other, method), 0) * math.log(_sigmoid(-gap))
    return total


def _bt_coordinate_step(method: str, beta: dict[str, float], wins: Wins) -> float:
    """One damped Newton step on ``method``'s strength, the others fixed."""
    gradient, curvature = -BT_PENALTY * beta[method], BT_PENALTY
    for other in beta:
        if other != method:
            games = wins.get((method, other), 0) + wins.get((other, method), 0)
            chance = _sigmoid(beta[method] - beta[other])
            gradient += wins.get((method, other), 0) - games * chance
            curvature += games * chance * (1 - chance)
    step, before, start = (
        gradient / curvature,
        _bt_objective_part(method, beta, wins),
        beta[method],
    )
    if (
        abs(step) < 1e-3
    ):  # Newton is safe this close; the objective no longer resolves it
        beta[method] = start + step
        return step
    while abs(step) > 1e-300:
        beta[method] = start + step
        if _bt_objective_part(method, beta, wins) >= before:
            return step
        step /= 2
    beta[method] = start
    return 0.0


def bradley_terry(
    methods: Sequence[str],
    wins: Wins,
    baseline: str,
    start: dict[str, float] | None = None,
) -> dict[str, float] | None:
    """Strengths maximizing Σ W_ij log σ(β_i − β_j) − 10⁻⁴/2 Σ β² with
    β_baseline = 0 (pairwise.md "Bradley–Terry"), by cyclic coordinate-wise
    Newton steps (not the product's joint Newton); ``None`` when
    ``bt_obstacle`` finds no finite maximum. ``start`` only speeds it up.

    >>> fit = bradley_terry(["A", "B"], {("A", "B"): 5.0, ("B", "A"): 1.0}, "A")
    >>> round(fit["B"], 3)  # about -ln 5 = -1.609, the penalty pulls it in
    -1.609
    """
    if bt_obstacle(methods, wins) is not None:
        return None
    beta = dict.fromkeys(methods, 0.0)
    if start:
        beta.update({m: start[m] for m in methods if m != baseline and m in start})
    for _ in range(100_000):
        largest = 0.0
        for method in methods:
            if method != baseline:
                largest = max(largest, abs(_bt_coordinate_step(method, beta, wins)))
        if largest < 1e-14:
            break
    return beta


# --------------------------------------------------------------------------
# Summary (docs/metrics/*.md "Output values"; results-format "summary")


def sparse(values: Values) -> set[int]:
    """Rounds with n below min(MIN_ROUND_SESSIONS, max_k n) (alignment.md
    "Sparse rounds")."""
    sizes = {k: len(vs) for k, vs in by_round(values).items()}
    if not sizes:
        return set()
    bar = min(MIN_ROUND_SESSIONS, max(sizes.values()))
    return {k for k, n in sizes.items() if n < bar}


def mean_over_rounds(values: Values, every_round: bool = False) -> Fraction | None:
    """Mean over rounds k of the per-round mean: ``al_avg`` and the
    dimension averages (alignment.md "Formulas"), sparse rounds left out
    unless ``every_round`` (``al_avg_all_rounds``)."""
    left_out = set() if every_round else sparse(values)
    groups = by_round(values)
    return mean_or_none(mean(vs) for k, vs in groups.items() if k not in left_out)


def round_means(values: Values) -> list[tuple[int, Fraction, int]]:
    """AL(k) with its n, rounds ascending (alignment.md "Formulas")."""
    groups = by_round(values)
    return [(k, mean(groups[k]), len(groups[k])) for k in sorted(groups)]


def al_line(values: Values) -> dict[str, Fraction | None]:
    """``al_slope``, ``al_intercept``, ``al_r2``: OLS on the points (k, AL(k))
    of the rounds that are not sparse, R² = Sxy²/(Sxx·Syy), null with exactly
    two rounds or a flat curve; ``al_slope_all_rounds`` on every round."""
    left_out = sparse(values)
    every = [(Fraction(k), al) for k, al, _ in round_means(values)]
    points = [(k, al) for k, al in every if k not in left_out]
    every_fit = ols(every)
    out: dict[str, Fraction | None] = {
        "al_slope_all_rounds": every_fit["slope"] if every_fit else None
    }
    fit = ols(points)
    if fit is None:
        return {**out, "al_slope": None, "al_intercept": None, "al_r2": None}
    r2 = None
    if len(points) != 2 and fit["syy"] != 0:
        r2 = fit["sxy"] ** 2 / (fit["sxx"] * fit["syy"])
    line = {"al_slope": fit["slope"], "al_intercept": fit["intercept"], "al_r2": r2}
    return {**out, **line}


def session_slopes(values: Values) -> list[Fraction]:
    """The OLS slope of s(i, k) on k of each session with two scored rounds."""
    slopes = []
    for session, _ in sorted(by_session(values).items()):
        points = [
            (Fraction(k), v)
            for (s, k), v in values.items()
            if s == session and k is not None
        ]
        fit = ols(points)
        if fit is not None:
            slopes.append(fit["slope"])
    return slopes


def session_slope_summary(values: Values) -> dict[str, Number | None]:
    """``al_session_slope`` and its Student-t 95% CI."""
    slopes = session_slopes(values)
    interval = mean_ci(slopes)
    return {
        "al_session_slope": mean_or_none(slopes),
        "al_session_slope_ci_low": interval[0] if interval else None,
        "al_session_slope_ci_high": interval[1] if interval else None,
    }


def alignment_summary(
    index: Index, method: str
) -> tuple[dict[str, Any], dict[str, Values]]:
    """The alignment suite's summary values of a method, and the values each
    rests on (for ``_n``). Panel values come from common items only."""
    al = panel_values(index, method, "al")
    binary = panel_values(index, method, "binary")
    out: dict[str, Any] = {"al_avg": mean_over_rounds(al), **al_line(al)}
    out["al_avg_all_rounds"] = mean_over_rounds(al, every_round=True)
    out.update(session_slope_summary(al))
    sources = dict.fromkeys(out, al)
    out["binary_rate"] = mean_or_none(binary.values())
    sources["binary_rate"] = binary
    for name in dimensions(index):
        dimension = panel_values(index, method, f"al_{name}")
        out[f"al_{name}_avg"] = mean_over_rounds(dimension)
        sources[f"al_{name}_avg"] = dimension
    return out, sources


def per_judge_summary(index: Index, method: str) -> dict[str, Any]:
    """``al_avg@<judge>`` and ``binary_rate@<judge>`` with their ``_n``: each
    judge's own rows (README "Judge panels"; question 2)."""
    out: dict[str, Any] = {}
    if PER_JUDGE_KEYS_ONLY_FOR_PANELS and len(index.models) < 2:
        return out
    for judge in index.models:
        al = judge_values(index, method, "al", judge)
        binary = judge_values(index, method, "binary", judge)
        out[f"al_avg@{judge}"] = mean_over_rounds(al)
        out[f"al_avg_n@{judge}"] = sessions_behind(al)
        out[f"binary_rate@{judge}"] = mean_or_none(binary.values())
        out[f"binary_rate_n@{judge}"] = sessions_behind(binary)
    return out


def fact_items(index: Index, method: str, metric: str) -> dict[Item, Fraction]:
    """A fact no judge gives (``response_chars``, ``human_al``,
    ``human_binary``) of a method's items, whichever judge's row holds it."""
    facts: dict[Item, Fraction] = {}
    for (row_method, row_metric, _), values in index.scored.items():
        if row_method == method and row_metric == metric:
            facts.update(values)
    return facts


def length_items(index: Index, method: str) -> dict[Item, Fraction]:
    """``response_chars`` of a method's items."""
    return fact_items(index, method, "response_chars")


def fact_table(index: Index, metric: str) -> dict[tuple[str, Item], Fraction]:
    """A fact of every method's items."""
    return {
        (method, item): value
        for method in index.methods
        for item, value in fact_items(index, method, metric).items()
    }


def solve_exact(
    matrix: list[list[Fraction]], rhs: list[Fraction]
) -> list[Fraction] | None:
    """Gaussian elimination on fractions; ``None`` when singular."""
    size = len(rhs)
    rows = [[*row, value] for row, value in zip(matrix, rhs, strict=True)]
    for col in range(size):
        pivot = next((r for r in range(col, size) if rows[r][col] != 0), None)
        if pivot is None:
            return None
        rows[col], rows[pivot] = rows[pivot], rows[col]
        for r in range(size):
            if r != col and rows[r][col] != 0:
                factor = rows[r][col] / rows[col][col]
                rows[r] = [
                    a - factor * b for a, b in zip(rows[r], rows[col], strict=True)
                ]
    return [rows[i][size] / rows[i][i] for i in range(size)]


def length_controlled(index: Index) -> dict[str, Fraction | None]:
    """``al_lc``: OLS over every scored item of al = b0 + Σ b_m·[method = m] +
    c·ln(1 + chars), the first method the reference, evaluated per method at
    the mean ln(1 + chars); null when the design is singular (alignment.md
    "Judge checks and length control"; question 4)."""
    data: list[tuple[str, Fraction, Fraction]] = []
    for method in index.methods:
        chars = length_items(index, method)
        for item, value in panel_values(index, method, "al").items():
            if item in chars:
                data.append((method, Fraction(math.log1p(float(chars[item]))), value))
    present = [m for m in index.methods if any(m == d[0] for d in data)]
    if len(data) < len(present) + 2:  # alignment.md: a residual degree of freedom
        return dict.fromkeys(index.methods)
    design = [
        [Fraction(1)] + [Fraction(m == d[0]) for m in present[1:]] + [d[1]]
        for d in data
    ]
    normal = [
        [sum((r[i] * r[j] for r in design), Fraction(0)) for j in range(len(design[0]))]
        for i in range(len(design[0]))
    ]
    moment = [
        sum((r[i] * d[2] for r, d in zip(design, data, strict=True)), Fraction(0))
        for i in range(len(design[0]))
    ]
    beta = solve_exact(normal, moment)
    result: dict[str, Fraction | None] = dict.fromkeys(index.methods)
    if beta is None:
        return result
    centre = mean(d[1] for d in data)
    for position, method in enumerate(present):
        shift = beta[position] if position else Fraction(0)
        result[method] = beta[0] + shift + beta[-1] * centre
    return result


def pairwise_items(index: Index, method: str) -> dict[str, list[Fraction]]:
    """Per session, the method's scored comparisons (1, ½, 0), every opponent."""
    shares: dict[str, list[Fraction]] = {}
    for opponent in index.methods:
        if opponent != method:
            values = panel_values(index, method, f"pairwise@{opponent}")
            for session, vs in by_session(values).items():
                shares.setdefault(session, []).extend(vs)
    return shares


def pairwise_wins(index: Index, sessions: Sequence[str] | None = None) -> Wins:
    """W_ij: i's scored results against j (a tie is half a win for each
    side), summed over the given sessions with their multiplicity."""
    wins: Wins = {}
    for i in index.methods:
        for j in index.methods:
            values = panel_values(index, i, f"pairwise@{j}") if i != j else {}
            per_session = by_session(values)
            chosen = sessions if sessions is not None else list(per_session)
            total = sum(
                (sum(per_session.get(s, []), Fraction(0)) for s in chosen), Fraction(0)
            )
            if total:
                wins[(i, j)] = float(total)
    return wins


def bt_methods(index: Index) -> list[str]:
    """The methods with a pairwise row (run order)."""
    return [
        m
        for m in index.methods
        if any(k[0] == m and k[1].startswith("pairwise@") for k in index.asked)
    ]


def every_method_compared(index: Index) -> bool:
    """Whether each method of the run took part in a scored comparison
    (pairwise.md: else no method has a strength on the baseline's scale)."""
    scored = {
        name
        for (method, metric, _), values in index.scored.items()
        if metric.startswith("pairwise@") and values
        for name in (method, metric.partition("@")[2])
    }
    return len(index.methods) >= 2 and set(index.methods) <= scored


def bt_baseline(index: Index) -> str:
    """``pairwise_baseline`` when set, else the first method (pairwise.md)."""
    return index.options.get("pairwise_baseline") or index.methods[0]


# Length-controlled pairwise (pairwise.md "Length-controlled win rate")

Comparison = tuple[str, str, str, float, int, int]


def length_comparisons(index: Index) -> list[Comparison] | None:
    """Each scored comparison once (the panel's mean verdict), as (session,
    i, j, share i won, i's length, j's length) with i before j in the run's
    order; None when one lacks its replies' lengths."""
    found: list[Comparison] = []
    for a, i in enumerate(index.methods):
        for j in index.methods[a + 1 :]:
            values = panel_values(index, i, f"pairwise@{j}")
            for (session, k), value in sorted(values.items(), key=str):
                chars = index.chars.get((session, k, i, j))
                if chars is None:
                    return None
                found.append((session, i, j, float(value), *chars))
    return found


def _lc_objective(comps, beta, gamma, scale) -> float:
    total = -BT_PENALTY / 2 * (sum(b * b for b in beta.values()) + gamma * gamma)
    for _s, i, j, y, ci, cj in comps:
        eta = beta[i] - beta[j] + gamma * math.tanh((ci - cj) / scale)
        # log σ(η) and log σ(−η), written to stay finite
        log_p = -math.log1p(math.exp(-eta)) if eta > -30 else eta
        log_q = -math.log1p(math.exp(eta)) if eta < 30 else -eta
        total += y * log_p + (1 - y) * log_q
    return total


def _gauss(matrix: list[list[float]], vector: list[float]) -> list[float]:
    size = len(vector)
    rows = [[*matrix[r], vector[r]] for r in range(size)]
    for c in range(size):
        best = max(range(c, size), key=lambda r: abs(rows[r][c]))
        rows[c], rows[best] = rows[best], rows[c]
        for r in range(size):
            if r != c:
                f = rows[r][c] / rows[c][c]
                rows[r] = [x - f * y for x, y in zip(rows[r], rows[c], strict=True)]
    return [rows[r][size] / rows[r][r] for r in range(size)]


def length_fit(comps, methods, baseline, scale):
    """(β, γ) maximising the penalised likelihood of pairwise.md's model by
    Newton's method with step halving (Gauss–Jordan; plain floats)."""
    free = [m for m in methods if m != baseline]
    beta, gamma = dict.fromkeys(methods, 0.0), 0.0
    value = _lc_objective(comps, beta, gamma, scale)
    for _ in range(500):
        size = len(free) + 1
        grad = [0.0] * size
        hess = [[0.0] * size for _ in range(size)]
        for a, m in enumerate(free):
            grad[a] -= BT_PENALTY * beta[m]
            hess[a][a] += BT_PENALTY
        grad[-1] -= BT_PENALTY * gamma
        hess[-1][-1] += BT_PENALTY
        for _s, i, j, y, ci, cj in comps:
            t = math.tanh((ci - cj) / scale)
            p = _sigmoid(beta[i] - beta[j] + gamma * t)
            x = [(m == i) - (m == j) for m in free] + [t]
            for a in range(size):
                grad[a] += (y - p) * x[a]
                for b in range(size):
                    hess[a][b] += p * (1 - p) * x[a] * x[b]
        step = _gauss(hess, grad)
        scale_step = 1.0
        while True:
            trial = dict(beta)
            for a, m in enumerate(free):
                trial[m] += scale_step * step[a]
            trial_gamma = gamma + scale_step * step[-1]
            found = _lc_objective(comps, trial, trial_gamma, scale)
            if found >= value - 1e-12 * max(1.0, abs(value)) or scale_step < 1e-9:
                break
            scale_step /= 2
        beta, gamma, value = trial, trial_gamma, found
        if max(abs(scale_step * d) for d in step) < 1e-13:
            break
    return beta, gamma


def length_controlled_pairwise(index: Index) -> dict[str, dict[str, Any]]:
    """``pairwise_winrate_lc``, ``bt_lc_score`` and
    ``pairwise_longer_wins_rate`` per method (pairwise.md)."""
    methods = index.methods
    nothing = {m: dict.fromkeys(LC_KEYS) for m in methods}
    comps = length_comparisons(index)
    if not comps:
        return nothing
    out: dict[str, dict[str, Any]] = {}
    for m in methods:
        per_session: dict[str, list[float]] = {}
        for s, i, j, _y, ci, cj in comps:
            if m in (i, j):
                own, other = (ci, cj) if m == i else (cj, ci)
                won = 1.0 if own > other else 0.0 if own < other else 0.5
                per_session.setdefault(s, []).append(won)
        rates = [sum(v) / len(v) for v in per_session.values()]
        out[m] = {
            "pairwise_winrate_lc": None,
            "bt_lc_score": None,
            "pairwise_longer_wins_rate": sum(rates) / len(rates) if rates else None,
        }
    wins: Wins = {}
    for _s, i, j, y, _ci, _cj in comps:
        wins[(i, j)] = wins.get((i, j), 0.0) + y
        wins[(j, i)] = wins.get((j, i), 0.0) + 1 - y
    wins = {k: v for k, v in wins.items() if v}
    baseline = bt_baseline(index)
    if not every_method_compared(index) or bt_obstacle(methods, wins) is not None:
        return out
    unequal = [c for c in comps if c[4] != c[5]]
    longer_won = {c[3] if c[4] > c[5] else 1 - c[3] for c in unequal}
    beta: dict[str, float] | None
    if not unequal:  # nothing to control: Bradley–Terry's strengths
        beta = bradley_terry(methods, wins, baseline)
    elif longer_won in ({1.0}, {0.0}):  # the length separates: γ → ±∞
        level: Wins = {}
        for _s, i, j, y, ci, cj in comps:
            if ci == cj:
                level[(i, j)] = level.get((i, j), 0.0) + y
                level[(j, i)] = level.get((j, i), 0.0) + 1 - y
        level = {k: v for k, v in level.items() if v}
        beta = bradley_terry(methods, level, baseline) if level else None
    else:
        scale = math.sqrt(sum((c[4] - c[5]) ** 2 for c in comps) / len(comps))
        beta, _gamma = length_fit(comps, methods, baseline, scale)
    if beta is None:
        return out
    for m in methods:
        per_session = {}
        for s, i, j, _y, _ci, _cj in comps:
            if m in (i, j):
                other = j if m == i else i
                chance = _sigmoid(beta[m] - beta[other])
                per_session.setdefault(s, []).append(chance)
        rates = [sum(v) / len(v) for v in per_session.values()]
        out[m]["pairwise_winrate_lc"] = sum(rates) / len(rates)
        out[m]["bt_lc_score"] = beta[m]
    return out


LC_KEYS = ("pairwise_winrate_lc", "bt_lc_score", "pairwise_longer_wins_rate")
LC_CI = ("pairwise_winrate_lc", "bt_lc", "pairwise_longer_wins_rate")


def pairwise_summary(index: Index) -> dict[str, dict[str, Any]]:
    """``pairwise_winrate`` (mean over sessions of the per-session share won)
    and ``bt_score``, with ``_n`` = sessions with a scored comparison. The
    interval ends are random (checked by ``interval_checks``), not given."""
    methods = bt_methods(index)
    strengths = bradley_terry(methods, pairwise_wins(index), bt_baseline(index))
    if not every_method_compared(index):  # pairwise.md: no strength on one scale
        strengths = None
    # the length-controlled values need the replies' lengths, which the
    # plan's rows carry and a results document's rows do not (pairwise.md:
    # they are in the rows' detail): without them, not computed here
    lengths = not index.lengths_unknown
    controlled = length_controlled_pairwise(index) if lengths else {}
    lc_keys = (
        (*LC_KEYS, *(f"{key}_ci_{end}" for key in LC_CI for end in ("low", "high")))
        if lengths
        else ()
    )
    out: dict[str, dict[str, Any]] = {}
    for method in index.methods:
        shares = pairwise_items(index, method)
        n = len(shares)
        out[method] = {
            "pairwise_winrate": mean_or_none(mean(vs) for vs in shares.values()),
            "bt_score": strengths.get(method) if strengths else None,
            **controlled.get(method, {}),
        }
        for key in (
            "pairwise_winrate",
            "pairwise_winrate_ci_low",
            "pairwise_winrate_ci_high",
            "bt_score",
            "bt_ci_low",
            "bt_ci_high",
            *lc_keys,
            "bt_resamples_left_out",
        ):
            out[method][f"{key}_n"] = n
    return out


def mean_over_sessions_summary(index: Index, suite: str, method: str) -> dict[str, Any]:
    """``<id>_avg`` = mean over sessions of the per-session means of the
    scored rows, ``<id>_avg_n`` the sessions (quality.md, style.md,
    roleplay.md); the simulation suite adds mean ± 1.96·s/√n (README, the
    simulation seed's statistics; question 11)."""
    out: dict[str, Any] = {}
    for metric in MEAN_OVER_SESSIONS[suite]:
        means = list(session_means(panel_values(index, method, metric)).values())
        out[f"{metric}_avg"] = mean_or_none(means)
        out[f"{metric}_avg_n"] = len(means)
        if suite == "simulation":
            half = (
                1.96 * math.sqrt(float(sample_variance(means) / len(means)))
                if len(means) > 1
                else None
            )
            if half is not None and 2 * half <= ZERO_DIFFERENCE:
                half = None  # width 0 (every session the same): no interval
            centre = published(mean_or_none(means))
            out[f"{metric}_ci_low"] = (
                None if half is None or centre is None else centre - half
            )
            out[f"{metric}_ci_high"] = (
                None if half is None or centre is None else centre + half
            )
            out[f"{metric}_ci_low_n"] = out[f"{metric}_ci_high_n"] = len(means)
    return out


def summary(doc: dict[str, Any]) -> dict[str, dict[str, float | int | None]]:
    """The ``summary`` block: ``{method: {id: value, id_n: sessions}}``.

    Alignment (alignment.md), pairwise winrate and Bradley–Terry strength
    (pairwise.md), and every ``<id>_avg`` of the suites in
    ``MEAN_OVER_SESSIONS``. Worked example of alignment.md ("Summary of one
    method over three sessions"):

    >>> table = {"a": [60, 70, 80, 90], "b": [20, 30], "c": [40, 50, 50, None]}
    >>> rows = [row(s, k + 1, "M", "al", v) for s, vs in table.items() for k, v in enumerate(vs)]
    >>> votes = {"a": [1, 1, 0, 1], "b": [0, 1], "c": [1, 0, 1]}
    >>> rows += [row(s, k + 1, "M", "binary", v) for s, vs in votes.items() for k, v in enumerate(vs)]
    >>> values = summary(tiny_doc(rows, ["M"]))["M"]
    >>> values["al_avg"], values["al_slope"], values["al_intercept"], values["al_r2"]
    (45.0, 10.0, 30.0, None)
    >>> values["al_avg_all_rounds"], values["al_slope_all_rounds"]
    (61.25, 16.5)
    >>> round(values["al_session_slope"], 2), round(values["al_session_slope_ci_low"], 2)
    (8.33, 1.16)
    >>> round(values["binary_rate"], 3), values["al_avg_n"], values["al_style_avg"]
    (0.667, 3, None)
    """
    found = remembered(_SUMMARIES, doc, _summary)
    # a copy: callers fill in values of their own
    return {method: dict(values) for method, values in found.items()}


# The summaries and comparisons of the last documents, by their JSON: a
# generated run's or pair's checks ask for the same summary up to five
# times (comparisons, the downloads, the dashes), each fitting
# Bradley–Terry again, and for its comparisons twice (the comparisons
# block, the downloads' tables against the baseline).
_SUMMARIES: dict[str, Any] = {}
_COMPARISONS: dict[str, Any] = {}


def remembered(
    cache: dict[str, Any], doc: dict[str, Any], compute: Callable[[dict[str, Any]], Any]
) -> Any:
    """``compute(doc)``, kept in ``cache`` for the last 16 documents."""
    key = json.dumps(doc, sort_keys=True, default=repr)
    if key not in cache:
        if len(cache) >= 16:
            cache.pop(next(iter(cache)))
        cache[key] = compute(doc)
    return cache[key]


def _summary(doc: dict[str, Any]) -> dict[str, dict[str, float | int | None]]:
    index = build_index(doc)
    out: dict[str, dict[str, Any]] = {method: {} for method in index.methods}
    if "alignment" in index.suites:
        lengths = length_controlled(index)
        for method in index.methods:
            values, sources = alignment_summary(index, method)
            values["al_lc"], sources["al_lc"] = lengths[method], sources["al_avg"]
            out[method].update(values)
            out[method].update(
                {f"{key}_n": sessions_behind(v) for key, v in sources.items()}
            )
            out[method].update(per_judge_summary(index, method))
    if "pairwise" in index.suites:
        for method, values in pairwise_summary(index).items():
            out[method].update(values)
    for suite in MEAN_OVER_SESSIONS:
        if suite in index.suites:
            for method in index.methods:
                out[method].update(mean_over_sessions_summary(index, suite, method))
    return {
        method: {
            key: v if isinstance(v, int) and not isinstance(v, bool) else published(v)
            for key, v in values.items()
        }
        for method, values in out.items()
    }


# --------------------------------------------------------------------------
# Curves (alignment.md "Output values": AL(k) and N-AL(k))


def curves(doc: dict[str, Any]) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """``{"al": {method: [{k, mean, n, ci_low, ci_high}]}, "nal": {...}}``.

    AL(k) with a Student-t 95% CI (null for n < 2) and ``in_average`` (false
    at a sparse round); N-AL(k) = (AL(k) − min) / (max − min), CI ends null,
    ``in_average`` that of AL(k), the whole curve empty when max = min.

    >>> rows = [row("a", 1, "M", "al", 60), row("a", 2, "M", "al", 70),
    ...         row("b", 1, "M", "al", 20), row("b", 2, "M", "al", 30)]
    >>> drawn = curves(tiny_doc(rows, ["M"]))
    >>> [(p["k"], p["mean"], p["n"]) for p in drawn["al"]["M"]]
    [(1, 40.0, 2), (2, 50.0, 2)]
    >>> round(drawn["al"]["M"][0]["ci_low"], 4)  # 40 - t(0.975, 1) * (20 * sqrt(2)) / sqrt(2)
    -214.1241
    >>> [(p["k"], p["mean"], p["ci_low"]) for p in drawn["nal"]["M"]]
    [(1, 0.0, None), (2, 1.0, None)]
    """
    index = build_index(doc)
    if "alignment" not in index.suites:
        return {}
    al_curves, nal_curves = {}, {}
    for method in index.methods:
        values = panel_values(index, method, "al")
        groups = by_round(values)
        points = round_means(values)
        left_out = sparse(values)
        al_curves[method] = [
            {
                "k": k,
                "mean": float(al),
                "n": n,
                **interval_of(groups[k]),
                "in_average": k not in left_out,
            }
            for k, al, n in points
        ]
        nal_curves[method] = [
            {**point, "in_average": point["k"] not in left_out}
            for point in normalized(points)
        ]
    return {"al": al_curves, "nal": nal_curves}


def interval_of(values: Sequence[Fraction]) -> dict[str, float | None]:
    """``ci_low``/``ci_high`` of ``mean_ci``."""
    interval = mean_ci(values)
    return {
        "ci_low": interval[0] if interval else None,
        "ci_high": interval[1] if interval else None,
    }


def normalized(points: Sequence[tuple[int, Fraction, int]]) -> list[dict[str, Any]]:
    """N-AL(k) points (question 5); empty when max AL = min AL."""
    if not points:
        return []
    low = min(al for _, al, _ in points)
    high = max(al for _, al, _ in points)
    if high == low:
        return []
    return [
        {
            "k": k,
            "mean": float((al - low) / (high - low)),
            "n": n,
            "ci_low": None,
            "ci_high": None,
        }
        for k, al, n in points
    ]


# --------------------------------------------------------------------------
# Comparisons (README "Comparisons")


def value_metric(metric: str) -> str:
    """The summary value a session metric's comparison stands beside."""
    return {"al": "al_avg", "binary": "binary_rate"}.get(metric, f"{metric}_avg")


def compared_metrics(index: Index) -> list[str]:
    """The session metrics compared, in the order of the run's suites."""
    return [metric for suite in index.suites for metric in COMPARED.get(suite, ())]


def compare_pair(
    a_means: dict[str, Fraction], b_means: dict[str, Fraction]
) -> dict[str, Any]:
    """One comparison over the sessions both methods scored."""
    paired = sorted(set(a_means) & set(b_means))
    diffs = [a_means[s] - b_means[s] for s in paired]
    dz = paired_effect_size(diffs)
    sessions = sessions_for_80_power(dz)
    return {
        "n": len(paired),
        "diff": mean_or_none(diffs),
        "p_value": wilcoxon_p(diffs),
        "n_zero": sum(1 for d in diffs if abs(d) <= ZERO_DIFFERENCE),
        "effect_size": dz,
        "effect_size_name": "dz",
        "rank_biserial": rank_biserial(diffs),
        "sd_diff": sd_of_differences(diffs),
        "sessions_for_80_power": sessions,
        "sessions_for_80_power_note": power_note(dz, len(paired), sessions),
        "test": "wilcoxon",
    }


def method_pairs(index: Index) -> list[tuple[str, str]]:
    """Every pair of methods, a before b in the run's method order."""
    return list(combinations(index.methods, 2))


def comparisons(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Every pair of methods on every compared session metric: ``n``,
    ``diff`` (mean of a − b), Wilcoxon ``p_value``, ``p_holm`` within the
    metric's family, ``effect_size`` dz, ``rank_biserial``, ``sd_diff``,
    ``sessions_for_80_power`` (and its note), and ``value_metric``/``delta`` (the difference of the two
    summary values: README "One basis per table"). The bootstrap bounds are
    checked by ``interval_checks``.

    >>> rows = [row(s, 1, "Ours", "al", v) for s, v in zip("12345", (62, 70, 55, 80, 66), strict=True)]
    >>> rows += [row(s, 1, "Base", "al", v) for s, v in zip("123456", (58, 61, 57, 71, 60, 90), strict=True)]
    >>> [found] = [c for c in comparisons(tiny_doc(rows, ["Ours", "Base"])) if c["metric"] == "al"]
    >>> found["n"], round(found["diff"], 4), found["p_value"], round(found["effect_size"], 4)
    (5, 5.2, 0.125, 1.1429)
    """
    # copies: callers may fill in values of their own
    return [dict(c) for c in remembered(_COMPARISONS, doc, _comparisons)]


def _comparisons(doc: dict[str, Any]) -> list[dict[str, Any]]:
    index = build_index(doc)
    values = summary(doc)
    found: list[dict[str, Any]] = []
    for metric in compared_metrics(index):
        family = []
        for a, b in method_pairs(index):
            result = compare_pair(
                session_means(panel_values(index, a, metric)),
                session_means(panel_values(index, b, metric)),
            )
            family.append(
                {"metric": metric, "family": metric, "a": a, "b": b, **result}
            )
        for comparison, adjusted in zip(
            family, holm([c["p_value"] for c in family]), strict=True
        ):
            comparison["p_holm"] = adjusted
            comparison.update(
                value_delta(values, metric, comparison["a"], comparison["b"])
            )
        found.extend(family)
    return [
        {key: published(v) if isinstance(v, Fraction) else v for key, v in c.items()}
        for c in found
    ]


def value_delta(
    values: dict[str, dict[str, Any]], metric: str, a: str, b: str
) -> dict[str, Any]:
    """``value_metric`` and ``delta`` = a's value − b's value."""
    name = value_metric(metric)
    value_a, value_b = values[a].get(name), values[b].get(name)
    delta = None
    if value_a is not None and value_b is not None:
        delta = value_a - value_b
    return {"value_metric": name, "delta": delta}


# --------------------------------------------------------------------------
# Bootstrap intervals of a document

# methods.md "One basis per table cell": every keep/swap assignment up to 13
# sessions, else 9,999 draws and p = (b + 1)/(m + 1)
PERMUTATION_EXACT_UP_TO = 13
PERMUTATION_DRAWS = 9_999
WITNESS_DRAWS = 4_000


def paired_diffs(index: Index, metric: str, a: str, b: str) -> list[Fraction]:
    """a − b of the per-session means over the sessions both scored."""
    a_means = session_means(panel_values(index, a, metric))
    b_means = session_means(panel_values(index, b, metric))
    return [a_means[s] - b_means[s] for s in sorted(set(a_means) & set(b_means))]


Parts = dict[Any, tuple[Fraction, Fraction]]


def value_parts(index: Index, metric: str, method: str) -> dict[str, Parts]:
    """Per session and stratum (numerator, denominator) of a table value
    (README "One basis per table"): ``al_avg`` by round k, ``binary_rate``
    (yes votes, verdicts), a mean over sessions (session value, 1)."""
    values = panel_values(index, method, metric)
    parts: dict[str, Parts] = {}
    left_out = sparse(values) if metric == "al" else set()
    for (session, k), value in values.items():
        if k in left_out:
            continue  # alignment.md "Sparse rounds": not in al_avg's parts
        stratum: Any = k if metric == "al" else None
        numerator, denominator = parts.setdefault(session, {}).get(
            stratum, (Fraction(0), Fraction(0))
        )
        parts[session][stratum] = (numerator + value, denominator + 1)
    if metric not in ("al", "binary"):
        means = session_means(values)
        parts = {s: {None: (means[s], Fraction(1))} for s in means}
    return parts


FloatTotals = dict[Any, tuple[float, float]]
TotalsOfTwo = tuple[FloatTotals, FloatTotals]  # method a's and b's


def float_parts(parts: dict[str, Parts]) -> dict[str, dict[Any, tuple[float, float]]]:
    """Each session's (numerator, denominator) as floats, for ``value_from_parts``."""
    return {
        session: {k: (float(n), float(d)) for k, (n, d) in strata.items()}
        for session, strata in parts.items()
    }


def value_from_parts(
    parts: Sequence[Parts] | Sequence[dict[Any, tuple[float, float]]],
) -> float | None:
    """The mean over strata of Σ numerator / Σ denominator (question 12), in
    floats: it only places a bootstrap bound, within a band."""
    totals: dict[Any, list[float]] = {}
    for session in parts:
        for stratum, (numerator, denominator) in session.items():
            total = totals.setdefault(stratum, [0.0, 0.0])
            total[0] += float(numerator)
            total[1] += float(denominator)
    return mean_of_ratios(totals)


def with_parts(
    totals: FloatTotals, session: Parts | dict[Any, tuple[float, float]]
) -> FloatTotals:
    """``totals`` (per stratum Σ numerator, Σ denominator, in the order the
    strata first came) with a session's parts added, as a new dict."""
    added = dict(totals)
    for stratum, (numerator, denominator) in session.items():
        total_n, total_d = added.get(stratum, (0.0, 0.0))
        added[stratum] = (total_n + float(numerator), total_d + float(denominator))
    return added


def mean_of_ratios(
    totals: FloatTotals | dict[Any, list[float]],
) -> float | None:
    """The mean over strata of Σ numerator / Σ denominator."""
    ratios = [n / d for n, d in totals.values() if d]
    return sum(ratios) / len(ratios) if ratios else None


def exact_value(parts: Sequence[Parts]) -> Fraction | None:
    """The mean over strata of Σ numerator / Σ denominator, exactly."""
    totals: dict[Any, list[Fraction]] = {}
    for session in parts:
        for stratum, (numerator, denominator) in session.items():
            total = totals.setdefault(stratum, [Fraction(0), Fraction(0)])
            total[0] += numerator
            total[1] += denominator
    ratios = [n / d for n, d in totals.values() if d]
    return sum(ratios, Fraction(0)) / len(ratios) if ratios else None


def compared_size(value: Fraction) -> Fraction:
    """|Δ| as the test compares it: 0 within 1e-9, else at 12 digits."""
    size = abs(value)
    return Fraction(0) if size <= ZERO_DIFFERENCE else at_resolution(size)


def permutation_test(
    index: Index, metric: str, a: str, b: str
) -> tuple[str, Fraction | None, int]:
    """``(kind, p, assignments)`` of Δ's paired permutation test (methods.md
    "One basis per table cell"): the sessions either method has, each
    session's parts kept or swapped between a and b, both values
    recomputed exactly, p = the share of assignments whose |Δ*| reaches
    |Δ| (both at 12 significant digits). ``exact`` up to 13 sessions;
    beyond, ``sampled``: the witness's own 4,000 draws, p = (b + 1)/(m + 1).

    The parts are scaled to integers by one common denominator (sums of
    integers, a fraction per stratum only at the end), and an assignment
    and its complement give Δ* and −Δ*, so half the assignments are
    counted twice."""
    parts_a, parts_b = value_parts(index, metric, a), value_parts(index, metric, b)
    sessions = sorted(set(parts_a) | set(parts_b))
    if len(sessions) < 2:
        return "none", None, 0
    strata = sorted(
        {k for parts in (parts_a, parts_b) for v in parts.values() for k in v},
        key=lambda k: (k is not None, k or 0),
    )
    scale = math.lcm(
        *(
            x.denominator
            for parts in (parts_a, parts_b)
            for v in parts.values()
            for pair in v.values()
            for x in pair
        )
    )

    def scaled(parts: dict[str, Parts], session: str) -> list[tuple[int, int]]:
        found = parts.get(session, {})
        zero = (Fraction(0), Fraction(0))
        return [
            (int(found.get(k, zero)[0] * scale), int(found.get(k, zero)[1] * scale))
            for k in strata
        ]

    mine = [scaled(parts_a, s) for s in sessions]
    theirs = [scaled(parts_b, s) for s in sessions]

    def value(totals: list[list[int]]) -> Fraction | None:
        ratios = [Fraction(n, d) for n, d in totals if d]
        return sum(ratios, Fraction(0)) / len(ratios) if ratios else None

    def delta(swaps: Sequence[int]) -> Fraction | None:
        total_a = [[0, 0] for _ in strata]
        total_b = [[0, 0] for _ in strata]
        for i, swapped in enumerate(swaps):
            first, second = (theirs[i], mine[i]) if swapped else (mine[i], theirs[i])
            for k in range(len(strata)):
                total_a[k][0] += first[k][0]
                total_a[k][1] += first[k][1]
                total_b[k][0] += second[k][0]
                total_b[k][1] += second[k][1]
        value_a, value_b = value(total_a), value(total_b)
        return None if value_a is None or value_b is None else abs(value_a - value_b)

    observed = delta([0] * len(sessions))
    if observed is None:
        return "none", None, 0
    bar = compared_size(observed)

    def reaches(size: Fraction) -> bool:
        # rounding is monotone: an exact ≥ reaches; else compare as rounded
        return size >= observed or compared_size(size) >= bar

    if len(sessions) <= PERMUTATION_EXACT_UP_TO:
        # the first session kept; its swapped half mirrors this one
        found = [
            delta((0, *rest)) for rest in product((0, 1), repeat=len(sessions) - 1)
        ]
        kept = [d for d in found if d is not None]
        return (
            "exact",
            Fraction(sum(reaches(d) for d in kept), len(kept)),
            2 ** len(sessions),
        )
    draw = random.Random(58)
    found = [
        delta([draw.randint(0, 1) for _ in sessions]) for _ in range(WITNESS_DRAWS)
    ]
    kept = [d for d in found if d is not None]
    hits = sum(reaches(d) for d in kept)
    return "sampled", Fraction(hits + 1, len(kept) + 1), PERMUTATION_DRAWS


def delta_p_ok(
    index: Index, metric: str, a: str, b: str, published_p: float | None
) -> bool:
    """The published ``delta_p``: the exact p, or within the Monte Carlo
    error of both samples (4 standard errors, plus one draw's step) of the
    witness's own draws (question 17)."""
    kind, p, _ = permutation_test(index, metric, a, b)
    if p is None or published_p is None:
        return p is None and published_p is None
    if kind == "exact":
        return math.isclose(float(p), published_p, rel_tol=1e-12, abs_tol=1e-15)
    q = max(float(p), 1 / WITNESS_DRAWS)
    spread = math.sqrt(q * (1 - q) * (1 / PERMUTATION_DRAWS + 1 / WITNESS_DRAWS))
    return abs(published_p - float(p)) <= 4 * spread + 1 / WITNESS_DRAWS


def delta_bounds_ok(
    index: Index, metric: str, a: str, b: str, low: float | None, high: float | None
) -> bool:
    """The value-basis interval: sessions (the union of both methods') are
    resampled together and both values recomputed from their parts."""
    parts_a, parts_b = value_parts(index, metric, a), value_parts(index, metric, b)
    sessions = sorted(set(parts_a) | set(parts_b))
    if len(sessions) < 2:
        return low is None and high is None
    # in floats once (value_from_parts adds them as floats): the same sums
    parts_a, parts_b = float_parts(parts_a), float_parts(parts_b)

    def delta(draw: tuple[int, ...]) -> float | None:
        value_a = value_from_parts([parts_a.get(sessions[i], {}) for i in draw])
        value_b = value_from_parts([parts_b.get(sessions[i], {}) for i in draw])
        return None if value_a is None or value_b is None else value_a - value_b

    if len(sessions) < EXACT_INTERVAL_BELOW:  # README: exact, null at width 0
        # each resample's sums folded session by session: delta's sums, in
        # delta's order, a shared prefix added once
        empty: dict[Any, tuple[float, float]] = {}

        def step(totals: TotalsOfTwo, i: int) -> TotalsOfTwo:
            return (
                with_parts(totals[0], parts_a.get(sessions[i], empty)),
                with_parts(totals[1], parts_b.get(sessions[i], empty)),
            )

        def difference(totals: TotalsOfTwo) -> float | None:
            value_a, value_b = mean_of_ratios(totals[0]), mean_of_ratios(totals[1])
            return None if value_a is None or value_b is None else value_a - value_b

        atoms, _ = folded_bootstrap(len(sessions), ({}, {}), step, difference)
        return exact_bounds_ok(atoms, low, high)
    if low is None or high is None:
        return True  # a width-0 or value-less interval of many sessions
    atoms, _, extra = bootstrap_distribution(len(sessions), delta)
    return bounds_in_distribution(
        atoms, low, high, around(0.025, 0.015 + extra), around(0.975, 0.015 + extra)
    )


Resampler = tuple[int, Callable[[tuple[int, ...]], dict[str, float] | None]]


def bt_resampler(index: Index) -> Resampler:
    """The number of sessions and the Bradley–Terry fit of a resample of
    them (their win counts summed with multiplicity; ``None`` when the
    resample is separated), memoized across methods."""
    baseline, methods = bt_baseline(index), bt_methods(index)
    sessions = sorted({s for m in methods for s in pairwise_items(index, m)})
    per_session = {s: pairwise_wins(index, [s]) for s in sessions}
    whole = bradley_terry(methods, pairwise_wins(index), baseline)
    fits: dict[tuple[int, ...], dict[str, float] | None] = {}
    if whole is None or not every_method_compared(index):
        return len(sessions), lambda draw: None  # no strength, no interval

    def fit(draw: tuple[int, ...]) -> dict[str, float] | None:
        if draw not in fits:
            wins: Wins = {}
            for i in draw:
                for key, value in per_session[sessions[i]].items():
                    wins[key] = wins.get(key, 0.0) + value
            fits[draw] = bradley_terry(methods, wins, baseline, whole)
        return fits[draw]

    return len(sessions), fit


def bt_bounds_ok(
    resampler: Resampler, method: str, low: float | None, high: float | None
) -> bool:
    """Bradley–Terry interval (pairwise.md): 500 resamples of sessions, the
    separated ones left out, null when more than 5% are. The exact
    probability q of a separated resample decides: q <= 0.02 needs an
    interval, q >= 0.09 needs null (a Binomial(500, q) count beyond 25 is then
    3 SD away); in between either. Bounds: between the quantile levels
    ``order_statistic_levels`` gives for the percentiles of the at least 475
    resamples kept ([0.0073, 0.0634] for 0.025 with 500), widened by the
    sampling error when the distribution is sampled. The baseline's strength
    is 0 in every resample kept, so its ends are 0 or null."""
    n, fit = resampler
    if n < 2:  # pairwise.md: no interval from fewer than two sessions
        return low is None and high is None

    def strength(draw: tuple[int, ...]) -> float | None:
        fitted = fit(draw)
        return None if fitted is None else fitted.get(method)

    atoms, separated, extra = bootstrap_distribution(n, strength)
    low_levels = order_statistic_levels(BT_RESAMPLES_KEPT, 0.025)
    high_levels = order_statistic_levels(BT_RESAMPLES_KEPT, 0.975)
    # methods.md: an interval of width 0 (the baseline's) is null
    ends = (max(0.0, low_levels[0] - extra), min(1.0, high_levels[1] + extra))
    flat_bt = False
    if atoms:
        bottom, top = quantiles(atoms, ends)
        flat_bt = bottom == top
    if low is None or high is None:
        return separated >= Fraction(2, 100) or not atoms or flat_bt
    if abs(Fraction(high) - Fraction(low)) <= ZERO_DIFFERENCE:
        return False  # an interval of width 0 is never published
    return separated <= Fraction(9, 100) and bounds_in_distribution(
        atoms,
        low,
        high,
        (low_levels[0] - extra, low_levels[1] + extra),
        (high_levels[0] - extra, high_levels[1] + extra),
    )


def winrate_bounds_ok(
    shares: Sequence[Fraction], low: float | None, high: float | None
) -> bool:
    """The win-rate interval (pairwise.md): a bootstrap of the per-session
    shares; null from fewer than two sessions (pairwise.md)."""
    if len(shares) < 2:  # pairwise.md: no interval from fewer than two sessions
        return low is None and high is None
    return bootstrap_bounds_ok(shares, low, high)


def interval_checks(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Every bootstrap interval of the document checked against the exact
    bootstrap distribution: each comparison's ``ci_low``/``ci_high`` and
    ``delta_ci_low``/``delta_ci_high`` (and Δ's permutation ``delta_p``:
    ``delta_p_ok``), each method's
    ``pairwise_winrate_ci_*`` and ``bt_ci_*``. Each entry: ``what``,
    ``where``, ``low``, ``high``, ``ok``."""
    index = build_index(doc)
    checks = []
    for c in doc.get("comparisons", []):
        where = f"{c['metric']} {c['a']} vs {c['b']}"
        diffs = paired_diffs(index, c["metric"], c["a"], c["b"])
        checks.append(
            {
                "what": "ci",
                "where": where,
                "low": c["ci_low"],
                "high": c["ci_high"],
                "ok": bootstrap_bounds_ok(diffs, c["ci_low"], c["ci_high"]),
            }
        )
        if "delta_ci_low" in c and (
            c.get("delta") is not None or c["delta_ci_low"] is not None
        ):  # no Δ (a value missing): no interval either
            ok = delta_bounds_ok(
                index,
                c["metric"],
                c["a"],
                c["b"],
                c["delta_ci_low"],
                c["delta_ci_high"],
            )
            checks.append(
                {
                    "what": "delta_ci",
                    "where": where,
                    "low": c["delta_ci_low"],
                    "high": c["delta_ci_high"],
                    "ok": ok,
                }
            )
        if "delta_p" in c and (c.get("delta") is not None or c["delta_p"] is not None):
            checks.append(
                {
                    "what": "delta_p",
                    "where": where,
                    "low": c["delta_p"],
                    "high": c["delta_p"],
                    "ok": delta_p_ok(index, c["metric"], c["a"], c["b"], c["delta_p"]),
                }
            )
    if "pairwise" in index.suites:
        resampler = bt_resampler(index)
        for method in index.methods:
            published_values = doc["summary"].get(method, {})
            shares = [
                mean(vs) for _, vs in sorted(pairwise_items(index, method).items())
            ]
            low, high = (
                published_values.get("pairwise_winrate_ci_low"),
                published_values.get("pairwise_winrate_ci_high"),
            )
            checks.append(
                {
                    "what": "pairwise_winrate_ci",
                    "where": method,
                    "low": low,
                    "high": high,
                    "ok": winrate_bounds_ok(shares, low, high),
                }
            )
            low, high = (
                published_values.get("bt_ci_low"),
                published_values.get("bt_ci_high"),
            )
            checks.append(
                {
                    "what": "bt_ci",
                    "where": method,
                    "low": low,
                    "high": high,
                    "ok": bt_bounds_ok(resampler, method, low, high),
                }
            )
    return checks


# --------------------------------------------------------------------------
# Counts and judge validity


def counts(doc: dict[str, Any]) -> dict[str, int]:
    """``{status: number of rows}`` (results-format "Row statuses")."""
    return dict(Counter(row["status"] for row in doc["rows"]))


def item_table(
    index: Index, metric: str, judge: str
) -> dict[tuple[str, Item], Fraction]:
    """A judge's scored items of a metric over every method."""
    return {
        (method, item): value
        for method in index.methods
        for item, value in judge_values(index, method, metric, judge).items()
    }


def human_agreement(index: Index, judge: str) -> dict[str, Any]:
    """Spearman ρ and Kendall τ-b of the judge's ``al`` against ``human_al``,
    Cohen κ of its ``binary`` against ``human_binary``, ``n`` the labelled
    responses it scored (question 7), ``n_al``, ``n_binary``."""
    al, binary = item_table(index, "al", judge), item_table(index, "binary", judge)
    human_al = fact_table(index, "human_al")
    human_binary = fact_table(index, "human_binary")
    al_keys = sorted(set(al) & set(human_al), key=str)
    binary_keys = sorted(set(binary) & set(human_binary), key=str)
    judged_al, labels_al = [al[k] for k in al_keys], [human_al[k] for k in al_keys]
    return {
        "al_spearman": spearman(judged_al, labels_al),
        "al_kendall": kendall_tau_b(judged_al, labels_al) if len(al_keys) > 1 else None,
        "binary_kappa": cohen_kappa(
            [binary[k] for k in binary_keys], [human_binary[k] for k in binary_keys]
        ),
        "n": len(set(al_keys) | set(binary_keys)),
        "n_al": len(al_keys),
        "n_binary": len(binary_keys),
        "binary_base_rate": base_rate([human_binary[k] for k in binary_keys]),
    }


def human_scores(index: Index, judge: str) -> tuple[dict[str, Any], int]:
    """Per criterion and scale (rows ``human_score@<criterion>:<low>-<high>``,
    alignment.md "Judge checks" and "Agreement per criterion"; input-format
    "Human scores"): the judge's own score of the criterion on its scale
    (rows ``judge_score@<criterion>:<low>-<high>``, source ``criterion``,
    with κw as both are on the scale) when it has one, else its ``al``
    (source ``al``: ranks); the scale and n; and the responses with a score
    the judge scored (the entry's ``n`` when the file has no AL or binary
    label)."""
    al = item_table(index, "al", judge)
    found: dict[str, Any] = {}
    scored: set = set()
    for metric in sorted(m for m in index.metrics if m.startswith("human_score@")):
        labels = fact_table(index, metric)
        key = metric.removeprefix("human_score@")
        criterion, _, scale = key.rpartition(":")
        low, _, high = scale.partition("-")
        bounds = [int(low), int(high)]
        own = item_table(index, f"judge_score@{key}", judge)
        values, same, source = (own, bounds, "criterion") if own else (al, None, "al")
        keys = sorted(set(values) & set(labels), key=str)
        if not keys:
            continue
        judged, given = [values[k] for k in keys], [labels[k] for k in keys]
        found[key] = {
            "criterion": criterion,
            "scale": bounds,
            "source": source,
            **criterion_stats(judged, given, same),
        }
        scored |= set(keys)
    return found, len(scored)


def human_entry(index: Index, judge: str) -> dict[str, Any]:
    """A judge's ``judge_validity.human`` entry: the AL and binary agreement
    when the file has such labels, ``scores`` when it has human scores (with
    no AL or binary label, ``{n, scores}``)."""
    scores, n = human_scores(index, judge)
    if any(m in index.metrics for m in ("human_al", "human_binary")):
        entry = human_agreement(index, judge)
        return {**entry, "scores": scores} if scores else entry
    return {"n": n, "scores": scores}


def criterion_stats(
    judged: Sequence[Fraction], given: Sequence[Fraction], same: list[int] | None = None
) -> dict[str, Any]:
    """alignment.md "Agreement per criterion": r, ρ, τ-b with n and each a
    95% Fisher-z interval (SE 1/√(n−3) for r, √((1+ρ²/2)/(n−3)) for ρ
    (Bonett–Wright), √(0.437/(n−4)) for τ-b (Fieller et al.); none below
    n 4, 4, 5, at ±1 or without a value); a recorded judge (``same``: both
    on that scale, at most 5 points) also quadratic-weighted κ."""
    n = len(judged)
    found: dict[str, Any] = {
        "pearson": pearson(judged, given),
        "spearman": spearman(judged, given),
        "kendall": kendall_tau_b(judged, given) if n > 1 else None,
        "n": n,
    }
    for name, least, se in (
        ("pearson", 4, lambda v: 1 / math.sqrt(n - 3)),
        ("spearman", 4, lambda v: math.sqrt((1 + v * v / 2) / (n - 3))),
        ("kendall", 5, lambda v: math.sqrt(0.437 / (n - 4))),
    ):
        value = found[name]
        found[f"{name}_ci"] = (
            None
            if value is None or n < least or abs(value) >= 1
            else [
                math.tanh(math.atanh(value) - 1.959963984540054 * se(value)),
                math.tanh(math.atanh(value) + 1.959963984540054 * se(value)),
            ]
        )
    if same is not None:
        found["weighted_kappa"] = quadratic_kappa(judged, given, same)
    return found


def quadratic_kappa(
    a: Sequence[Fraction], b: Sequence[Fraction], scale: list[int]
) -> float | None:
    """κ_w = 1 − Σ w·observed / Σ w·expected, w = (i − j)², over the
    scale's points (at most 5); none off the points or with a constant side.

    >>> quadratic_kappa([Fraction(v) for v in (1, 2, 3, 3)],
    ...                 [Fraction(v) for v in (1, 2, 3, 2)], [1, 3])
    0.8
    """
    points = range(scale[0], scale[1] + 1)
    if len(points) > 5 or len(a) < 2 or len(set(a)) < 2 or len(set(b)) < 2:
        return None
    if any(v.denominator != 1 or v not in points for v in (*a, *b)):
        return None
    n = len(a)
    observed = sum((x - y) ** 2 for x, y in zip(a, b, strict=True)) / Fraction(n)
    expected = sum((x - y) ** 2 for x in a for y in b) / Fraction(n * n)
    return float(1 - observed / expected)


def recorded_entries(index: Index) -> dict[str, Any]:
    """input-format "Recorded judges", alignment.md "Judge checks": each
    recorded judge's verdicts (rows ``recorded@<judge>@<criterion>:<low>-<high>``)
    against the human scores of the same criterion and scale, per item:
    ``{judge: {recorded: true, n, scores}}``, a criterion's entry as a live
    judge's (criterion, scale, ρ, τ-b, n); ``n`` the items with both."""
    found: dict[str, Any] = {}
    for metric in sorted(m for m in index.metrics if m.startswith("recorded@")):
        judge, _, key = metric.removeprefix("recorded@").rpartition("@")
        if f"human_score@{key}" not in index.metrics:
            continue
        mine = fact_table(index, metric)
        labels = fact_table(index, f"human_score@{key}")
        keys = sorted(set(mine) & set(labels), key=str)
        if not keys:
            continue
        criterion, _, scale = key.rpartition(":")
        low, _, high = scale.partition("-")
        judged, given = [mine[k] for k in keys], [labels[k] for k in keys]
        entry = found.setdefault(
            judge, {"recorded": True, "items": set(), "scores": {}}
        )
        scale = [int(low), int(high)]
        entry["scores"][key] = {
            "criterion": criterion,
            "scale": scale,
            **criterion_stats(judged, given, scale),
        }
        if alphas := alpha_with_live(index, mine, key, scale):
            entry["scores"][key]["alpha_with"] = alphas
        entry["items"] |= set(keys)
    return {
        judge: {"recorded": True, "n": len(entry.pop("items")), **entry}
        for judge, entry in found.items()
    }


def alpha_with_live(
    index: Index, recorded: dict, key: str, scale: list[int]
) -> dict[str, Any]:
    """alignment.md "Agreement per criterion", ``alpha_with``: for each
    judge of the run with ``judge_score@<key>`` rows, Krippendorff's α of
    the recorded verdicts and its scores on the items both have (units the
    items, the two judges the coders), ordinal when every value of both is
    a point of the scale, else interval; with n and the level."""
    found: dict[str, Any] = {}
    points = range(scale[0], scale[1] + 1)
    for judge in index.models:
        live = item_table(index, f"judge_score@{key}", judge)
        if not live:
            continue
        keys = sorted(set(live) & set(recorded), key=str)
        units = [[recorded[k], live[k]] for k in keys]
        whole = bool(units) and all(
            v.denominator == 1 and v in points for unit in units for v in unit
        )
        level = "ordinal" if whole else "interval"
        alpha = (
            krippendorff_alpha_ordinal(units)
            if whole
            else krippendorff_alpha_interval(units)
        )
        found[judge] = {"alpha": alpha, "n": len(keys), "level": level}
    return found


def krippendorff_alpha_ordinal(units: Iterable[Sequence[Fraction]]) -> float | None:
    """Krippendorff's α with the ordinal metric (Krippendorff, 2004): the
    distance of values c ≤ k is (Σ_{c≤g≤k} n_g − (n_c + n_k)/2)², n_g the
    pairable values equal to g; 1 − D_o / D_e as for the interval metric.

    >>> krippendorff_alpha_ordinal([[Fraction(1), Fraction(1)], [Fraction(3), Fraction(3)]])
    1.0
    """
    pairable = [list(unit) for unit in units if len(unit) >= 2]
    everything = [value for unit in pairable for value in unit]
    n = len(everything)
    if n < 2:
        return None
    counts = Counter(everything)
    values = sorted(counts)
    rank = {value: index for index, value in enumerate(values)}

    def distance(a: Fraction, b: Fraction) -> Fraction:
        low, high = sorted((rank[a], rank[b]))
        between = sum(counts[values[g]] for g in range(low, high + 1))
        return (Fraction(between) - Fraction(counts[a] + counts[b], 2)) ** 2

    def pairs(unit: Sequence[Fraction]) -> Fraction:
        return sum(
            (
                distance(a, b)
                for i, a in enumerate(unit)
                for j, b in enumerate(unit)
                if i != j and a != b
            ),
            Fraction(0),
        )

    observed = sum((pairs(u) / (len(u) - 1) for u in pairable), Fraction(0)) / n
    expected = pairs(everything) / (n * (n - 1))
    if expected == 0:
        return None
    return float(1 - observed / expected)


def base_rate(labels: Sequence[Fraction]) -> float | None:
    """The commoner class's share of the human binary labels κ rests on
    (results-format ``binary_base_rate``).

    >>> base_rate([Fraction(1), Fraction(0), Fraction(1), Fraction(1)])
    0.75
    """
    if not labels:
        return None
    ones = Fraction(sum(1 for label in labels if label == 1), len(labels))
    return float(max(ones, 1 - ones))


@dataclass
class LengthBias:
    """``length_spearman`` of one judge: combined ρ, ρ by method, and their n."""

    combined: float | None
    by_method: dict[str, float | None]
    n: int
    n_by_method: dict[str, int]


def length_spearman(index: Index, judge: str) -> LengthBias:
    """ρ(length, al) within each method, combined as the mean weighted by
    the methods' scored items; n = responses with a length and an AL, of the
    methods with a ρ (alignment.md "Judge checks"; results-format; question
    8)."""
    found = LengthBias(None, {}, 0, {})
    weighted = 0.0
    for method in index.methods:
        chars = length_items(index, method)
        al = judge_values(index, method, "al", judge)
        keys = sorted(set(al) & set(chars), key=str)
        rho = spearman([chars[k] for k in keys], [al[k] for k in keys])
        found.by_method[method], found.n_by_method[method] = rho, len(keys)
        if rho is not None:
            weighted, found.n = weighted + rho * len(keys), found.n + len(keys)
    found.combined = weighted / found.n if found.n else None
    return found


def cross_mode_items(
    index: Index, judge: str
) -> dict[tuple[str, Item], tuple[Fraction, Fraction]]:
    """The judge's (al, binary) of the responses it gave both."""
    al, binary = item_table(index, "al", judge), item_table(index, "binary", judge)
    return {key: (al[key], binary[key]) for key in set(al) & set(binary)}


def cross_mode_auc(index: Index, judge: str) -> float | None:
    """ROC AUC of the judge's ``al`` separating its own ``binary`` 1 from 0
    on the same items (ties count half); null with one class.

    >>> rows = [row("s", k, "M", "al", a) for k, a in ((1, 80), (2, 40), (3, 60))]
    >>> rows += [row("s", k, "M", "binary", b) for k, b in ((1, 1), (2, 0), (3, 0))]
    >>> cross_mode_auc(build_index(tiny_doc(rows, ["M"])), "j")
    1.0
    """
    pairs = cross_mode_items(index, judge).values()
    yes = [al for al, vote in pairs if vote == 1]
    no = [al for al, vote in pairs if vote == 0]
    if not yes or not no:
        return None
    wins = sum(
        (Fraction(int(y > n)) + Fraction(int(y == n), 2) for y in yes for n in no),
        Fraction(0),
    )
    return float(wins / (len(yes) * len(no)))


def sample_units(index: Index, judge: str) -> list[list[Fraction]]:
    """The judge's ``al_sample@k`` values of each item."""
    units: dict[tuple[str, Item], list[Fraction]] = {}
    for metric in sorted(index.metrics):
        if metric.startswith("al_sample@"):
            for key, value in item_table(index, metric, judge).items():
                units.setdefault(key, []).append(value)
    return list(units.values())


def samples_alpha(index: Index, judge: str) -> float | None:
    """Krippendorff's α (interval) of the ``al_sample@k`` rows: items as
    units, samples as coders (alignment.md "Judge checks")."""
    units = sample_units(index, judge)
    return krippendorff_alpha_interval(units) if units else None


def judge_units(index: Index) -> list[list[Fraction]]:
    """Every judge's ``al`` of each item."""
    units: dict[tuple[str, Item], list[Fraction]] = {}
    for judge in index.models:
        for key, value in item_table(index, "al", judge).items():
            units.setdefault(key, []).append(value)
    return list(units.values())


def inter_judge_alpha(index: Index) -> float | None:
    """Krippendorff's α (interval) of the judges' ``al``, items as units and
    judges as coders (results-format "Judge panels"); null with one judge."""
    if len(index.models) < 2:
        return None
    return krippendorff_alpha_interval(judge_units(index))


def judge_offsets(index: Index) -> dict[str, Any] | None:
    """alignment.md "Judge checks", ``judge_offsets``: per judge, d(i) = its
    ``al`` − the mean of the other judges' on each item it and another judge
    scored; mean d with a Student-t 95% interval and n; the spread ratio
    (its SD over the mean of the others' SDs on those items); the note
    ``judge_scale`` (ratio outside [1/2, 2]), else ``judge_offset``
    (interval excludes 0). Null with fewer than two judges that scored AL."""
    tables = {judge: item_table(index, "al", judge) for judge in index.models}
    tables = {judge: table for judge, table in tables.items() if table}
    if len(tables) < 2:  # fewer than two judges scored any AL
        return None
    found: dict[str, Any] = {}
    for judge, mine in tables.items():
        others = {j: t for j, t in tables.items() if j != judge}
        shared = [k for k in mine if any(k in t for t in others.values())]
        diffs = [
            mine[k] - mean([t[k] for t in others.values() if k in t]) for k in shared
        ]
        interval = mean_ci(diffs)
        spreads = []
        for table in others.values():
            theirs = [table[k] for k in shared if k in table]
            if len(theirs) >= 2:
                spreads.append(math.sqrt(float(sample_variance(theirs))))
        ratio = None
        if len(shared) >= 2 and spreads and sum(spreads) > 0:
            own = math.sqrt(float(sample_variance([mine[k] for k in shared])))
            ratio = own / (sum(spreads) / len(spreads))
        entry: dict[str, Any] = {
            "offset": mean_or_none(diffs),
            "n": len(diffs),
            "ci_low": interval[0] if interval else None,
            "ci_high": interval[1] if interval else None,
            "spread_ratio": ratio,
            "note": None,
        }
        if flat_values(diffs):  # the same d on every item: width 0
            entry["ci_note"] = "ci_no_variation"
        if ratio is not None and not 0.5 <= ratio <= 2.0:
            params = {"judge": judge, "ratio": f"{ratio:.2f}"}
            entry["note"] = {"code": "judge_scale", "params": params}
        elif flat_values(diffs) and diffs[0] != 0:
            params = {"judge": judge, "offset": f"{float(diffs[0]):+.2f}"}
            entry["note"] = {"code": "judge_offset_constant", "params": params}
        elif interval and (interval[0] > 0 or interval[1] < 0):
            params = {
                "judge": judge,
                "offset": f"{float(entry['offset']):+.2f}",
                "ci_low": f"{interval[0]:.2f}",
                "ci_high": f"{interval[1]:.2f}",
            }
            entry["note"] = {"code": "judge_offset", "params": params}
        found[judge] = entry
    return found


def pairable(units: Sequence[Sequence[Fraction]]) -> int:
    """Units with two values or more (results-format: "items sampled twice
    or more", "items two judges scored")."""
    return sum(len(unit) >= 2 for unit in units)


def pairwise_comparisons(index: Index) -> int | None:
    """Scored (judge, session, round, pair) comparisons (question 10)."""
    if "pairwise" not in index.suites:
        return None
    seen: set[tuple[str, Item, tuple[str, ...]]] = set()
    for (method, metric, judge), values in index.scored.items():
        if metric.startswith("pairwise@"):
            pair = tuple(sorted((method, metric.split("@", 1)[1])))
            seen.update((judge, item, pair) for item in values)
    return len(seen)


def per_judge(
    index: Index, compute: Callable[[Index, str], Any], counted: bool = False
) -> dict[str, Any] | None:
    """``{judge: value}``, or ``None`` when every judge's value is null, or
    (``counted``: the values are counts) every count 0 (question 8). An AUC
    of 0.0 is a value."""
    values = {judge: compute(index, judge) for judge in index.models}
    nothing = (None, 0) if counted else (None,)
    return values if any(v not in nothing for v in values.values()) else None


VALIDITY = (
    "length_spearman",
    "length_spearman_by_method",
    "cross_mode_auc",
    "human",
    "samples_alpha",
    "inter_judge_alpha",
    "length_spearman_n",
    "length_spearman_by_method_n",
    "cross_mode_auc_n",
    "samples_alpha_n",
    "inter_judge_alpha_n",
    "judge_offsets",
)


def judge_validity(doc: dict[str, Any]) -> dict[str, Any]:
    """The ``judge_validity`` quantities defined from rows (alignment.md
    "Judge checks"; results-format): ``human``, ``length_spearman`` (and
    ``_by_method``), ``cross_mode_auc``, ``samples_alpha``,
    ``inter_judge_alpha``, ``pairwise_comparisons``, and the n each rests on.
    Not ``position_consistency``, ``first_position_rate`` and its n (see the
    module docstring). ``length_spearman_n`` is ``{judge: n}`` even when n is
    0, as ``length_spearman_by_method`` is given for every judge."""
    index = build_index(doc)
    found: dict[str, Any] = dict.fromkeys(VALIDITY)
    found["pairwise_comparisons"] = pairwise_comparisons(index)
    if "alignment" in index.suites:
        found |= alignment_validity(index)
        found["self_preference"] = self_preference(index, doc["run"].get("families"))
    return found | report_card(found, doc, index)


def alignment_validity(index: Index) -> dict[str, Any]:
    """The alignment suite's quantities of ``judge_validity``."""
    found: dict[str, Any] = {}
    bias = {judge: length_spearman(index, judge) for judge in index.models}
    has_labels = any(
        m in ("human_al", "human_binary") or m.startswith("human_score@")
        for m in index.metrics
    )
    found |= {
        "length_spearman": per_judge(index, lambda i, j: bias[j].combined),
        "length_spearman_by_method": {j: b.by_method for j, b in bias.items()},
        "length_spearman_n": {j: b.n for j, b in bias.items()},
        "length_spearman_by_method_n": {j: b.n_by_method for j, b in bias.items()},
        "cross_mode_auc": per_judge(index, cross_mode_auc),
        "cross_mode_auc_n": per_judge(
            index, lambda i, j: len(cross_mode_items(i, j)), counted=True
        ),
        "human": (
            {j: human_entry(index, j) for j in index.models} | recorded_entries(index)
        )
        or None
        if has_labels
        else None,
        "recorded_judges": sorted(
            {
                m.removeprefix("recorded@").rpartition("@")[0]
                for m in index.metrics
                if m.startswith("recorded@")
            }
        )
        or None,
        "samples_alpha": per_judge(index, samples_alpha),
        "samples_alpha_n": per_judge(
            index, lambda i, j: pairable(sample_units(i, j)), counted=True
        ),
        "inter_judge_alpha": inter_judge_alpha(index),
        "inter_judge_alpha_n": pairable(judge_units(index))
        if len(index.models) > 1
        else None,
        "judge_offsets": judge_offsets(index),
    }
    return found


# --------------------------------------------------------------------------
# The judge report card and self-preference (docs/metrics/report-card.md)

CARD = (  # criterion, rule, default threshold, in the card's order
    ("position_consistency", "at_least", 0.8),
    ("length_spearman", "at_most_abs", 0.3),
    ("length_pairwise_effect", "at_most_abs", 0.1),
    ("human_al_spearman", "at_least", 0.6),
    ("human_binary_kappa", "at_least", 0.6),
    ("inter_judge_alpha", "at_least", 0.667),
    ("samples_alpha", "at_least", 0.8),
    ("self_preference", "interval_not_above", 0.0),
)
# a recorded judge's rows, after those (report-card.md "Recorded judges")
RECORDED_CARD = (
    ("recorded_human_spearman", "at_least", 0.6),
    ("recorded_inter_judge_alpha", "at_least", 0.667),
)


def family_name(name: Any) -> str | None:
    """Families compare stripped and case folded; an empty one is none."""
    return name.strip().casefold() if isinstance(name, str) and name.strip() else None


def self_preference(index: Index, families: Any) -> list[dict[str, Any]] | None:
    """report-card.md "Self-preference": per judge J and method M of one
    family F, per session, gap(m) = J's mean AL of m minus the mean of the
    other named families' judges' means; d = gap(M) − mean gap of the
    methods of other named families; the mean of d with a t interval."""
    if not families:
        return None
    methods = {m: family_name(f) for m, f in (families.get("methods") or {}).items()}
    judges = {j: family_name(f) for j, f in (families.get("judges") or {}).items()}
    found = []
    for judge, own in judges.items():
        for method, of in methods.items():
            if own is None or of != own:
                continue
            others = [j for j, f in judges.items() if f is not None and f != own]
            rest = [m for m, f in methods.items() if f is not None and f != own]
            found.append(preference(index, judge, method, others, rest))
    return found


def preference(
    index: Index, judge: str, method: str, others: list[str], rest: list[str]
) -> dict[str, Any]:
    means = {
        (j, m): session_means(judge_values(index, m, "al", j))
        for j in [judge, *others]
        for m in [method, *rest]
    }

    def gap(m: str, session: str) -> tuple[Fraction, Fraction] | None:
        theirs = [means[(o, m)][session] for o in others if session in means[(o, m)]]
        if session not in means[(judge, m)] or not theirs:
            return None
        return means[(judge, m)][session], mean(theirs)

    diffs, own, other = [], [], []
    for session in sorted(means[(judge, method)]):
        target = gap(method, session)
        gaps = [g for m in rest if (g := gap(m, session)) is not None]
        if target is None or not gaps:
            continue
        diffs.append((target[0] - target[1]) - mean([a - b for a, b in gaps]))
        own.append(target[0])
        other.append(target[1])
    interval = mean_ci(diffs) if others and rest else None
    # over the sessions with a d; without one, every session J scored M
    scored = own or list(means[(judge, method)].values())
    # report-card.md: an interval of width 0 (every d the same) is null,
    # with ci_note ci_no_variation
    flat = bool(others and rest) and flat_values(diffs)
    found = {
        "judge": judge,
        "method": method,
        "value": float(mean(diffs)) if interval or flat else None,
        "n": len(diffs),
        "ci_low": interval[0] if interval and not flat else None,
        "ci_high": interval[1] if interval and not flat else None,
        "judge_score": float(mean(scored)) if scored else None,
        "other_families_score": float(mean(other)) if other else None,
    }
    return found | ({"ci_note": "ci_no_variation"} if flat else {})


def worst(values: dict[str, Any] | None, rule: str) -> tuple[str | None, Any]:
    """The judge furthest from passing (ties: the name sorting first)."""
    known = {j: v for j, v in sorted((values or {}).items()) if v is not None}
    if not known:
        return None, None
    if rule == "at_most_abs":
        judge = max(known, key=lambda j: abs(known[j]))
    else:
        judge = min(known, key=lambda j: known[j])
    return judge, known[judge]


def card_rows(found: dict[str, Any], doc: dict[str, Any], index: Index) -> list[dict]:
    """The card's rows, written from report-card.md's table: value, n and
    whether the criterion applies to the run."""
    validity = doc.get("judge_validity") or {}
    run = doc["run"]
    judge = run.get("judge") or {}
    samples = judge.get("samples") or 1
    aligned, paired = "alignment" in index.suites, "pairwise" in index.suites
    rows: dict[str, tuple[Any, Any, bool]] = {}
    # not from rows: checks.position_checks holds them to the plan
    rows["position_consistency"] = (
        validity.get("position_consistency") if paired else None,
        found["pairwise_comparisons"] if paired else None,
        paired,
    )
    name, value = worst(
        found.get("length_spearman") if aligned else None, "at_most_abs"
    )
    rows["length_spearman"] = (
        value,
        (found.get("length_spearman_n") or {}).get(name) if name else None,
        aligned,
    )
    effect = validity.get("length_pairwise_effect") if paired else None
    effect = effect if isinstance(effect, dict) else {}
    rows["length_pairwise_effect"] = (effect.get("value"), effect.get("n"), paired)
    human = found.get("human") or {}
    for criterion, key, rested in (
        ("human_al_spearman", "al_spearman", "n_al"),
        ("human_binary_kappa", "binary_kappa", "n_binary"),
    ):
        labelled = {j: a for j, a in human.items() if a and (a.get(rested) or 0) > 0}
        name, value = worst({j: a.get(key) for j, a in labelled.items()}, "at_least")
        picked = labelled[name or min(labelled)] if labelled else {}
        rows[criterion] = (value, picked.get(rested), bool(labelled))
    panel = aligned and len(index.models) >= 2
    rows["inter_judge_alpha"] = (
        found.get("inter_judge_alpha") if panel else None,
        found.get("inter_judge_alpha_n") if panel else None,
        panel,
    )
    sampled = aligned and samples >= 2
    name, value = worst(found.get("samples_alpha") if sampled else None, "at_least")
    rows["samples_alpha"] = (
        value,
        (found.get("samples_alpha_n") or {}).get(name) if name else None,
        sampled,
    )
    rows["self_preference"] = preference_row(found.get("self_preference"))
    out: list[dict[str, Any]] = []
    for criterion, rule, threshold in CARD:
        value, n, applies = rows[criterion]
        out.append(
            {
                "criterion": criterion,
                "value": value,
                "n": n,
                "threshold": threshold,
                "applies": applies,
                "verdict": verdict(rule, value, threshold, criterion, found),
            }
        )
    return out + recorded_card_rows(found.get("human") or {}, validity)


def recorded_card_rows(
    human: dict[str, Any], validity: dict[str, Any]
) -> list[dict[str, Any]]:
    """report-card.md "Recorded judges": per recorded judge, in name order,
    its lowest ρ with the human scores over the criteria (n: that
    criterion's); and, where the document gives its α with the run's judges
    (``alpha_with``, not recomputed here), the lowest α. Each marked
    recorded: no part of the overall verdict."""
    out = []
    published = validity.get("human") or {}
    for judge in sorted(j for j, e in human.items() if e and e.get("recorded")):
        scores = list((human[judge].get("scores") or {}).values())
        known = [e for e in scores if e.get("spearman") is not None]
        if known:
            worst = min(known, key=lambda e: e["spearman"])
            value, n = worst["spearman"], worst["n"]
        else:
            value, n = None, (scores[0]["n"] if scores else None)
        out.append(recorded_row("recorded_human_spearman", value, n, judge))
        given = ((published.get(judge) or {}).get("scores") or {}).values()
        alphas = [
            found
            for entry in given
            for found in (entry.get("alpha_with") or {}).values()
        ]
        if alphas:
            measured = [a for a in alphas if a.get("alpha") is not None]
            picked = min(measured, key=lambda a: a["alpha"]) if measured else alphas[0]
            out.append(
                recorded_row(
                    "recorded_inter_judge_alpha",
                    picked.get("alpha"),
                    picked.get("n"),
                    judge,
                )
            )
    return out


def recorded_row(criterion: str, value: Any, n: Any, judge: str) -> dict[str, Any]:
    threshold = dict((c, t) for c, _r, t in RECORDED_CARD)[criterion]
    return {
        "criterion": criterion,
        "value": value,
        "n": n,
        "threshold": threshold,
        "applies": True,
        "judge": judge,
        "recorded": True,
        "verdict": "not_measured"
        if value is None
        else ("pass" if value >= threshold else "fail"),
    }


def low_end(estimate: dict[str, Any]) -> float:
    """The interval's low end; without an interval for lack of spread, the
    value (every session's d)."""
    if estimate["ci_low"] is None and estimate.get("ci_note") == "ci_no_variation":
        return estimate["value"]
    return estimate["ci_low"]


def preference_row(estimates: list[dict[str, Any]] | None) -> tuple[Any, Any, bool]:
    if not estimates:
        return None, None, False
    measured = [e for e in estimates if e["value"] is not None]
    failing = [e for e in measured if low_end(e) > 0]
    if not measured:
        return None, None, True
    shown = max(failing or measured, key=lambda e: e["value"])
    return shown["value"], shown["n"], True


def verdict(
    rule: str, value: Any, threshold: float, criterion: str, found: dict[str, Any]
) -> str:
    if criterion == "self_preference":
        estimates = found.get("self_preference") or []
        if any(e["value"] is not None and low_end(e) > threshold for e in estimates):
            return "fail"
        if not estimates or any(e["value"] is None for e in estimates):
            return "not_measured"
        return "pass"
    if value is None:
        return "not_measured"
    if rule == "at_least":
        return "pass" if value >= threshold else "fail"
    return "pass" if abs(value) <= threshold else "fail"


def report_card(
    found: dict[str, Any], doc: dict[str, Any], index: Index
) -> dict[str, Any]:
    """``report_card`` and the overall verdict (report-card.md "The overall
    verdict"), with the default thresholds (the witness's protocols set none)."""
    rows = card_rows(found, doc, index)
    own = [r for r in rows if not r.get("recorded")]  # the run's own judges
    failing = [r["criterion"] for r in own if r["verdict"] == "fail"]
    missing = [
        r["criterion"] for r in own if r["verdict"] == "not_measured" and r["applies"]
    ]
    if failing:
        overall = "not_fit"
    elif missing or not any(r["verdict"] == "pass" for r in own):
        overall = "not_enough_evidence"
    else:
        overall = "fit"
    return {
        "report_card": rows,
        "report_card_verdict": overall,
        "report_card_failing": failing,
        "report_card_unmeasured": missing,
    }


# --------------------------------------------------------------------------
# Building small documents (doctests and tests)


def row(
    session: str,
    round_k: int | None,
    method: str,
    metric: str,
    value: float | None,
    judge: str = "j",
) -> dict[str, Any]:
    """A tidy row: ``ok`` with a value, ``unscored`` without."""
    return {
        "session_id": session,
        "round": round_k,
        "method": method,
        "metric": metric,
        "value": value,
        "status": "ok" if value is not None else "unscored",
        "note_code": None if value is not None else "unparseable",
        "judge": judge,
    }


def tiny_doc(
    rows: list[dict[str, Any]],
    methods: list[str],
    suites: Sequence[str] = ("alignment",),
    models: Sequence[str] = ("j",),
) -> dict[str, Any]:
    """A minimal results document around ``rows``."""
    return {
        "run": {
            "file": {"methods": list(methods)},
            "suites": list(suites),
            "options": {},
            "judge": {"models": list(models)},
        },
        "rows": rows,
    }
