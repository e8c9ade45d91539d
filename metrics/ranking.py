"""Pairwise outcomes to ranks: win rates and Bradley–Terry strengths, pure.

An outcome is ``(session, a, b, score)`` with ``score`` the share of the
comparison ``a`` won: 1, 0.5 (a tie) or 0. Bradley–Terry models
P(a beats b) = 1 / (1 + exp(−(β_a − β_b))); the strengths β are the maximum
likelihood fit (:func:`fit`, scipy's L-BFGS on the win counts, a tie counting
as half a win for each side; ``choix`` is the reference it is tested
against, too slow for a bootstrap). The baseline's strength is fixed at 0,
so a strength reads as the log-odds of beating the baseline. CIs come from a bootstrap over sessions: sessions are
resampled with replacement (fixed seed) and the model refitted.

>>> outcomes = [("s1", "A", "B", 1.0), ("s1", "A", "B", 0.0), ("s2", "A", "B", 1.0)]
>>> round(bt_strengths(outcomes, ["A", "B"], "B")["A"], 3)  # 2 wins of 3: log 2
0.693
"""

from __future__ import annotations

from collections import defaultdict

from metrics.stats import BOOTSTRAP_SEED

BT_RESAMPLES = 500
# An L2 penalty: small enough to leave a fit with wins and losses on
# every side where the likelihood puts it, large enough to keep the strengths
# finite when one method won every comparison (its CI then says so).
BT_ALPHA = 1e-4

Outcome = tuple[str, str, str, float]


def win_matrix(outcomes: list[Outcome], methods: list[str]) -> dict[str, dict]:
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


def wins_tensor(outcomes: list[Outcome], methods: list[str]):
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


def fit(wins, baseline: int):
    """Maximum likelihood of Bradley–Terry on a wins matrix (``W[i, j]``: i
    over j), minimising −Σ W_ij log σ(β_i − β_j) + ``BT_ALPHA``/2 Σ β² with
    β_baseline = 0 (L-BFGS with the analytic gradient). None when the
    comparisons leave a method unconnected."""
    import numpy as np
    from scipy.optimize import minimize
    from scipy.special import expit, log_expit

    if not _connected(wins):
        return None
    k = len(wins)
    free = [i for i in range(k) if i != baseline]

    def loss(x):
        beta = np.zeros(k)
        beta[free] = x
        diff = beta[:, None] - beta[None, :]
        lost = wins * expit(-diff)  # W_ij (1 − σ(β_i − β_j))
        grad = lost.sum(axis=0) - lost.sum(axis=1)
        value = -(wins * log_expit(diff)).sum() + BT_ALPHA / 2 * (x @ x)
        return value, grad[free] + BT_ALPHA * x

    found = minimize(loss, np.zeros(k - 1), jac=True, method="L-BFGS-B")
    beta = np.zeros(k)
    beta[free] = found.x
    return beta if np.all(np.isfinite(beta)) else None


def _connected(wins) -> bool:
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
) -> dict[str, dict]:
    """``{method: {"mean", "ci_low", "ci_high", "n"}}``: the fit and its
    percentile bootstrap interval over sessions (n = sessions compared)."""
    import numpy as np

    if not outcomes:
        return {}
    sessions, wins = wins_tensor(outcomes, methods)
    base = methods.index(baseline)
    estimate = fit(wins.sum(axis=0), base)
    if estimate is None:
        return {}
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    draws = []
    for _ in range(BT_RESAMPLES if len(sessions) >= 2 else 0):
        picked = np.bincount(rng.integers(0, len(sessions), len(sessions)),
                             minlength=len(sessions))  # fmt: skip
        refit = fit(np.tensordot(picked, wins, axes=1), base)
        if refit is not None:  # a resample can leave a method unconnected
            draws.append(refit)
    tail = (1 - level) / 2
    low, high = np.quantile(draws, [tail, 1 - tail], axis=0) if draws else (None, None)
    counts = _sessions_per_method(outcomes)
    return {
        method: {
            "mean": float(estimate[i]),
            "ci_low": None if low is None else float(low[i]),
            "ci_high": None if high is None else float(high[i]),
            "n": counts.get(method, 0),
        }
        for i, method in enumerate(methods)
    }


def _sessions_per_method(outcomes: list[Outcome]) -> dict[str, int]:
    seen: dict[str, set[str]] = defaultdict(set)
    for session, a, b, _score in outcomes:
        seen[a].add(session)
        seen[b].add(session)
    return {method: len(sessions) for method, sessions in seen.items()}
