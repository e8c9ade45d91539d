"""Pairwise outcomes to ranks: win rates and Bradley–Terry strengths, pure.

An outcome is ``(session, a, b, score)`` with ``score`` the share of the
comparison ``a`` won: 1, 0.5 (a tie) or 0. Bradley–Terry models
P(a beats b) = 1 / (1 + exp(−(β_a − β_b))); the strengths β are the maximum
likelihood fit (:func:`fit`, Newton's method in plain floats on the win
counts, a tie counting as half a win for each side; ``choix`` is the
reference it is tested against, too slow for a bootstrap). When some
methods won (or lost) every comparison against the rest, no finite
strength exists (:func:`metrics.suites.pairwise.bt_separation.separation`): the suite then
reports none. The baseline's strength is fixed at 0,
so a strength reads as the log-odds of beating the baseline. CIs come from a bootstrap over sessions: sessions are
resampled with replacement (fixed seed) and the model refitted.

>>> outcomes = [("s1", "A", "B", 1.0), ("s1", "A", "B", 0.0), ("s2", "A", "B", 1.0)]
>>> round(bt_strengths(outcomes, ["A", "B"], "B")["A"], 3)  # 2 wins of 3: log 2
0.693
"""

from __future__ import annotations

import math
import sys
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from metrics.stats import BOOTSTRAP_SEED, CI_NO_SPREAD, spread_or_none
from metrics.suites.pairwise.bt_separation import separation

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

BT_RESAMPLES = 500
SEPARATED_SHARE = 0.05  # of BT resamples separated, past which no CI is given
# An L2 penalty: small enough to leave a fit with wins and losses on
# every side where the likelihood puts it, large enough to keep the strengths
# finite when one method won every comparison (its CI then says so).
BT_ALPHA = 1e-4

Outcome = tuple[str, str, str, float]


def win_matrix(
    outcomes: list[Outcome], methods: list[str]
) -> dict[str, dict[str, float]]:
    """``{a: {b: share of a's comparisons with b it won}}`` (ties count half).

    >>> win_matrix([("s", "A", "B", 1.0), ("s", "A", "B", 0.5)], ["A", "B"])
    {'A': {'B': 0.75}, 'B': {'A': 0.25}}
    """
    won: dict[tuple[str, str], list[float]] = defaultdict(list)
    for _session, a, b, score in outcomes:
        won[(a, b)].append(score)
        won[(b, a)].append(1.0 - score)
    return {
        a: {b: sum(won[(a, b)]) / len(won[(a, b)]) for b in methods if won.get((a, b))}
        for a in methods
        if any(won.get((a, b)) for b in methods)
    }


def wins_tensor(
    outcomes: list[Outcome], methods: list[str]
) -> tuple[list[str], NDArray[np.float64]]:
    """(sessions, ``W``): ``W[s, i, j]`` = comparisons method i won against
    method j in session s, ties counting half for each side."""
    import numpy as np

    index = {method: i for i, method in enumerate(methods)}
    sessions = sorted({o[0] for o in outcomes})
    where = {session: i for i, session in enumerate(sessions)}
    wins = np.zeros((len(sessions), len(methods), len(methods)))
    for session, a, b, score in outcomes:
        s, i, j = where[session], index[a], index[b]
        wins[s, i, j] += score
        wins[s, j, i] += 1.0 - score
    return sessions, wins


def bt_strengths(
    outcomes: list[Outcome], methods: list[str], baseline: str
) -> dict[str, float] | None:
    """β per method with ``β[baseline] = 0``; None when the comparisons do not
    connect every method to the baseline (no common scale)."""
    if not outcomes:
        return None
    _sessions, wins = wins_tensor(outcomes, methods)
    fitted = fit(wins.sum(axis=0), methods.index(baseline))
    if fitted is None:
        return None
    return {method: float(fitted[i]) for i, method in enumerate(methods)}


def fit(wins: NDArray[np.float64], baseline: int) -> list[float] | None:
    """Maximum likelihood of Bradley–Terry on a wins matrix (``W[i, j]``: i
    over j), maximising Σ W_ij log σ(β_i − β_j) − ``BT_ALPHA``/2 Σ β² with
    β_baseline = 0, by Newton's method with step halving, in plain Python
    floats in a fixed order (``math.fsum``, Gaussian elimination): no BLAS,
    so the same input gives the same bits whatever the thread count, the
    CPU's BLAS kernel or where arrays sit in memory. The penalty makes the
    objective strictly concave (one maximum, reached from any start). None
    when the comparisons leave a method unconnected."""
    if not _connected(wins):
        return None
    size = len(wins)
    won = [[float(wins[i][j]) for j in range(size)] for i in range(size)]
    free = [i for i in range(size) if i != baseline]
    beta = [0.0] * size
    value = _objective(won, beta)
    for _ in range(NEWTON_STEPS):
        gradient, hessian = _derivatives(won, beta, free)
        step = _solve(hessian, gradient)
        scale = 1.0
        while scale > 1e-12:  # step halving: never a worse fit
            trial = list(beta)
            for index, i in enumerate(free):
                trial[i] = beta[i] + scale * step[index]
            found = _objective(won, trial)
            # near the optimum the objective moves by less than its own
            # rounding (a step of 1e-8 changes it by ~1e-16): a step within
            # that noise is taken, else Newton stopped 1e-8 short of the
            # optimum (the witness, issue 56: -2.56439714530 for -2.56439715647)
            if found >= value - FLAT * max(1.0, abs(value)):
                break
            scale /= 2
        else:
            break
        moved = max((abs(scale * d) for d in step), default=0.0)
        beta, value = trial, found
        if moved < NEWTON_TOLERANCE:
            break
    return beta if all(math.isfinite(b) for b in beta) else None


NEWTON_STEPS, NEWTON_TOLERANCE = 200, 1e-12
FLAT = 4 * sys.float_info.epsilon  # an objective change below its rounding


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    small = math.exp(x)
    return small / (1.0 + small)


def _log_sigmoid(x: float) -> float:
    return -math.log1p(math.exp(-x)) if x >= 0 else x - math.log1p(math.exp(x))


def _objective(won: list[list[float]], beta: list[float]) -> float:
    size = len(won)
    terms = [
        won[i][j] * _log_sigmoid(beta[i] - beta[j])
        for i in range(size)
        for j in range(size)
        if won[i][j]
    ]
    return math.fsum(terms) - BT_ALPHA / 2 * math.fsum(b * b for b in beta)


def _derivatives(
    won: list[list[float]], beta: list[float], free: list[int]
) -> tuple[list[float], list[list[float]]]:
    """The penalized objective's gradient and its negated Hessian, over the
    free strengths."""
    size = len(won)
    weight = [[0.0] * size for _ in range(size)]  # n_ij p_ij (1 − p_ij)
    gradient: list[float] = []
    for i in free:
        parts: list[float] = []
        for j in range(size):
            games = won[i][j] + won[j][i]
            if j == i or not games:
                continue
            p = _sigmoid(beta[i] - beta[j])
            parts.append(won[i][j] - games * p)
            weight[i][j] = games * p * (1.0 - p)
        gradient.append(math.fsum(parts) - BT_ALPHA * beta[i])
    hessian = [
        [(math.fsum(weight[i]) + BT_ALPHA) if i == j else -weight[i][j] for j in free]
        for i in free
    ]
    return gradient, hessian


def _solve(matrix: list[list[float]], vector: list[float]) -> list[float]:
    """``matrix x = vector`` by Gaussian elimination with partial pivoting
    (the matrix is symmetric positive definite: the penalty sees to it)."""
    size = len(vector)
    rows = [[*matrix[i], vector[i]] for i in range(size)]
    for col in range(size):
        pivot = max(range(col, size), key=lambda r: abs(rows[r][col]))
        rows[col], rows[pivot] = rows[pivot], rows[col]
        for r in range(col + 1, size):
            factor = rows[r][col] / rows[col][col]
            if factor:
                rows[r] = [
                    a - factor * b for a, b in zip(rows[r], rows[col], strict=True)
                ]
    solution = [0.0] * size
    for r in range(size - 1, -1, -1):
        known = math.fsum(rows[r][c] * solution[c] for c in range(r + 1, size))
        solution[r] = (rows[r][size] - known) / rows[r][r]
    return solution


def _connected(wins: NDArray[np.float64]) -> bool:
    linked = (wins + wins.T) > 0
    seen, todo = {0}, [0]
    while todo:
        for other in map(int, linked[todo.pop()].nonzero()[0]):
            if other not in seen:
                seen.add(other)
                todo.append(other)
    return len(seen) == len(wins)


def bt_with_ci(
    outcomes: list[Outcome], methods: list[str], baseline: str, level: float = 0.95
) -> dict[str, dict[str, Any]]:
    """``{method: {"mean", "ci_low", "ci_high", "n", "resamples_separated"}}``:
    the fit and its percentile bootstrap interval over sessions (n =
    sessions compared). A resample in which some methods won, or lost,
    every comparison has no finite strengths (``metrics/suites/pairwise/bt_separation.py``):
    it is left out and counted, and past ``SEPARATED_SHARE`` of them no
    interval is given (178 of 500 once gave [0.0, 8.82] around ln 5). An
    interval of width 0 (the baseline's: its strength is 0 in every
    resample) is not shown as one: both ends None, ``ci_note``
    ``ci_no_spread``.

    >>> lopsided = [(f"s{i}", "A", "B", 1.0) for i in range(5)] + [("s5", "A", "B", 0.0)]
    >>> found = bt_with_ci(lopsided, ["A", "B"], "B")["A"]
    >>> round(found["mean"], 3), found["resamples_separated"], found["ci_low"], found["n"]
    (1.609, 178, None, 6)
    """
    import numpy as np

    if not outcomes:
        return {}
    sessions, wins = wins_tensor(outcomes, methods)
    base = methods.index(baseline)
    estimate = fit(wins.sum(axis=0), base)
    if estimate is None:
        return {}
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    draws, separated = [], 0
    resamples = BT_RESAMPLES if len(sessions) >= 2 else 0
    # A resample's fit depends on its session counts alone: fitted once per
    # distinct counts (500 resamples of three sessions are 10 multisets);
    # None: separated
    fits: dict[bytes, tuple[list[float] | None] | None] = {}
    for _ in range(resamples):
        picked = np.bincount(
            rng.integers(0, len(sessions), len(sessions)), minlength=len(sessions)
        )
        if (key := picked.tobytes()) not in fits:
            # elementwise products and a sum along one axis: no BLAS
            # (tensordot would be), so the same bits whatever the thread count
            drawn = (picked[:, None, None] * wins).sum(axis=0)
            separated_here = separation(drawn, methods) is not None
            fits[key] = None if separated_here else (fit(drawn, base),)
        if (resampled := fits[key]) is None:
            separated += 1  # no finite strengths: its fit is the penalty's
            continue
        if resampled[0] is not None:
            draws.append(resampled[0])
    tail = (1 - level) / 2
    # past 5% separated the interval would describe the resamples that
    # happened to connect, not the data: none is given
    usable = draws and separated <= SEPARATED_SHARE * resamples
    low, high = np.quantile(draws, [tail, 1 - tail], axis=0) if usable else (None, None)
    counts = _sessions_per_method(outcomes)
    found: dict[str, dict[str, Any]] = {}
    for i, method in enumerate(methods):
        ends = None
        if low is not None and high is not None:
            ends = spread_or_none(float(low[i]), float(high[i]))
        found[method] = {
            "mean": float(estimate[i]),
            "ci_low": None if ends is None else ends[0],
            "ci_high": None if ends is None else ends[1],
            "n": counts.get(method, 0),
            "resamples_separated": separated,
        }
        if ends is None and low is not None:  # every kept resample the same
            found[method]["ci_note"] = CI_NO_SPREAD
    return found


def _sessions_per_method(outcomes: list[Outcome]) -> dict[str, int]:
    seen: dict[str, set[str]] = defaultdict(set)
    for session, a, b, _score in outcomes:
        seen[a].add(session)
        seen[b].add(session)
    return {method: len(sessions) for method, sessions in seen.items()}
