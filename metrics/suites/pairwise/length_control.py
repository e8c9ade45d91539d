"""Length-controlled pairwise preferences, pure (``docs/metrics/pairwise.md``,
"Length-controlled win rate"; AlpacaEval 2.0, Dubois et al. 2024, without
its instruction term).

A comparison is ``(session, a, b, y, chars_a, chars_b)``: ``y`` the share
of it ``a`` won (1, 0.5 a tie, 0; a panel's mean verdict), ``chars_*`` the
replies' lengths in characters (``len`` of the text: code points). The
model, a logistic regression of the judge's preference:

    logit P(a beats b) = β_a − β_b + γ · tanh(Δℓ / s),  Δℓ = chars_a − chars_b

with ``s`` the root mean square of Δℓ over the comparisons fitted
(√(ΣΔℓ²/N): the standard deviation of the differences counted in both
orders, whose mean is 0; fixed at the whole run's value in the bootstrap).
It is fitted as Bradley–Terry is (``ranking.fit``): a tie is half a win for
each side, the baseline's β is 0, and the same L2 penalty
(``ranking.BT_ALPHA``/2 on every β and on γ) keeps the objective strictly
concave. Read at zero length difference: ``bt_lc_score`` is β (the
log-odds of beating the baseline at equal length) and
``pairwise_winrate_lc`` is the raw win rate with each comparison's outcome
replaced by σ(β_a − β_b) (the mean over sessions of each session's share).

When the longer reply (or the shorter one) won every comparison whose
replies differ in length, and none of those was a tie, γ has no finite
estimate: the likelihood keeps rising as γ → ±∞. The strengths then have
the limit of their estimate as γ grows: the Bradley–Terry fit of the
comparisons of equal-length replies alone (none when those do not connect
every method: the length explains everything). The length effect is then
±0.5 (the limit) and γ is None.

>>> comparisons = [("s1", "A", "B", 1.0, 90, 30), ("s1", "A", "B", 1.0, 80, 20),
...                ("s2", "A", "B", 0.5, 50, 50), ("s2", "A", "B", 0.0, 10, 40)]
>>> found = estimate(comparisons, ["A", "B"], "B")
>>> found["separated"], round(found["beta"][0], 6), found["gamma"]
('length', 0.0, None)
>>> round(shift(found), 3)
0.5
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from statistics import fmean
from typing import TYPE_CHECKING, Any, cast

from metrics.stats import BOOTSTRAP_SEED, CI_NO_SPREAD, spread_or_none
from metrics.suites.pairwise import ranking
from metrics.suites.pairwise.bt_separation import separation

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

Comparison = tuple[str, str, str, float, int, int]
# (session, round, method, opponent) of one comparison
Item = tuple[str, int | None, str, str]
LEVEL = 0.95


def length_scale(comparisons: list[Comparison]) -> float:
    """``s`` = √(ΣΔℓ²/N), the root mean square length difference.

    >>> length_scale([("s", "A", "B", 1.0, 30, 10), ("s", "A", "B", 0.0, 10, 30)])
    20.0
    """
    return math.sqrt(
        math.fsum((c[4] - c[5]) ** 2 for c in comparisons) / len(comparisons)
    )


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    small = math.exp(x)
    return small / (1.0 + small)


def shift(found: dict[str, Any]) -> float | None:
    """The length effect as a change of win probability: P(win) of a reply
    longer by ``s`` against an equally strong one, minus 0.5 (σ(γ·tanh 1) −
    0.5; ±0.5 when the length separates the verdicts).

    >>> round(shift({"gamma": 1.0}), 4), shift({"separated": "length", "direction": -1})
    (0.1817, -0.5)
    """
    if found.get("separated") == "length":
        direction: int = found["direction"]
        return 0.5 * direction
    gamma = found.get("gamma")
    return None if gamma is None else _sigmoid(gamma * math.tanh(1.0)) - 0.5


def _length_direction(
    y: NDArray[np.float64], delta: NDArray[np.float64], weights: NDArray[np.float64]
) -> int:
    """+1 when the longer reply won every comparison of unequal lengths
    (none a tie), −1 when the shorter did, else 0."""
    import numpy as np

    unequal = (delta != 0) & (weights > 0)
    if not unequal.any():
        return 0
    longer_won = np.where(delta[unequal] > 0, y[unequal], 1.0 - y[unequal])
    if (longer_won == 1.0).all():
        return 1
    if (longer_won == 0.0).all():
        return -1
    return 0


def _wins(
    ia: NDArray[np.intp],
    ib: NDArray[np.intp],
    y: NDArray[np.float64],
    weights: NDArray[np.float64],
    size: int,
) -> NDArray[np.float64]:
    import numpy as np

    pair = ia * size + ib
    won = np.bincount(pair, weights=weights * y, minlength=size * size)
    lost = np.bincount(pair, weights=weights * (1.0 - y), minlength=size * size)
    wins = won.reshape(size, size) + lost.reshape(size, size).T
    # bincount with weights counts in float64 (numpy's stubs say intp)
    return cast("NDArray[np.float64]", wins)


def _objective(
    ia: NDArray[np.intp],
    ib: NDArray[np.intp],
    t: NDArray[np.float64],
    y: NDArray[np.float64],
    w: NDArray[np.float64],
    beta: NDArray[np.float64],
    gamma: float,
) -> float:
    import numpy as np

    eta = beta[ia] - beta[ib] + gamma * t
    ll = -(w * (y * np.logaddexp(0.0, -eta) + (1.0 - y) * np.logaddexp(0.0, eta))).sum()
    penalty = ranking.BT_ALPHA / 2 * (math.fsum(float(b) ** 2 for b in beta) + gamma**2)
    return float(ll) - penalty


def fit(
    ia: NDArray[np.intp],
    ib: NDArray[np.intp],
    t: NDArray[np.float64],
    y: NDArray[np.float64],
    w: NDArray[np.float64],
    size: int,
    baseline: int,
) -> tuple[list[float], float] | None:
    """(β, γ) maximising Σ w [y log σ(η) + (1 − y) log σ(−η)] − α/2 (Σβ² +
    γ²) with η = β_a − β_b + γ t and β_baseline = 0, by Newton's method with
    step halving (as ``ranking.fit``). Sums are numpy's elementwise products,
    ``bincount`` and sums along one axis (no BLAS: the same bits whatever the
    thread count); the linear system is solved in plain floats."""
    import numpy as np

    free = [i for i in range(size) if i != baseline]
    beta, gamma = np.zeros(size), 0.0
    value = _objective(ia, ib, t, y, w, beta, gamma)
    for _ in range(ranking.NEWTON_STEPS):
        eta = beta[ia] - beta[ib] + gamma * t
        p = 1.0 / (1.0 + np.exp(-eta))
        r, q = w * (y - p), w * p * (1.0 - p)
        grad_beta = (
            np.bincount(ia, r, size) - np.bincount(ib, r, size)
        ) - ranking.BT_ALPHA * beta
        grad_gamma = float((r * t).sum()) - ranking.BT_ALPHA * gamma
        pair = np.bincount(ia * size + ib, q, size * size).reshape(size, size)
        diag = np.bincount(ia, q, size) + np.bincount(ib, q, size)
        cross = np.bincount(ia, q * t, size) - np.bincount(ib, q * t, size)
        hessian = [
            [
                *(
                    float(diag[i]) + ranking.BT_ALPHA
                    if i == j
                    else -float(pair[i, j] + pair[j, i])
                    for j in free
                ),
                float(cross[i]),
            ]
            for i in free
        ]
        hessian.append(
            [
                *(float(cross[j]) for j in free),
                float((q * t * t).sum()) + ranking.BT_ALPHA,
            ]
        )
        gradient = [*(float(grad_beta[i]) for i in free), grad_gamma]
        step = ranking._solve(hessian, gradient)
        scale = 1.0
        while scale > 1e-12:
            trial = beta.copy()
            for index, i in enumerate(free):
                trial[i] = beta[i] + scale * step[index]
            trial_gamma = gamma + scale * step[-1]
            found = _objective(ia, ib, t, y, w, trial, trial_gamma)
            if found >= value - ranking.FLAT * max(1.0, abs(value)):
                break
            scale /= 2
        else:
            break
        moved = max(abs(scale * d) for d in step)
        beta, gamma, value = trial, trial_gamma, found
        if moved < ranking.NEWTON_TOLERANCE:
            break
    if not (np.isfinite(beta).all() and math.isfinite(gamma)):
        return None
    return [float(b) for b in beta], gamma


class _Data:
    """The comparisons as arrays over the methods' indices."""

    def __init__(self, comparisons: list[Comparison], methods: list[str], scale: float):
        import numpy as np

        index = {m: i for i, m in enumerate(methods)}
        self.sessions = sorted({c[0] for c in comparisons})
        where = {s: i for i, s in enumerate(self.sessions)}
        self.session = np.array([where[c[0]] for c in comparisons], dtype=np.intp)
        self.ia = np.array([index[c[1]] for c in comparisons], dtype=np.intp)
        self.ib = np.array([index[c[2]] for c in comparisons], dtype=np.intp)
        self.y = np.array([float(c[3]) for c in comparisons])
        self.delta = np.array([float(c[4] - c[5]) for c in comparisons])
        self.t = np.tanh(self.delta / scale)
        self.size = len(methods)


def _estimate(
    data: _Data, weights: NDArray[np.float64], baseline: int
) -> dict[str, Any]:
    """The fit with these comparison weights (a bootstrap's session counts):
    ``{"beta", "gamma", "separated", "direction"}``; ``separated`` is
    ``"bt"`` when some methods won or lost everything (no finite strengths
    at all), ``"length"`` when the length decided every comparison of
    unequal lengths (module docstring), ``"equal"`` when no two replies
    compared differ in length (γ is not identified: the strengths are
    Bradley–Terry's)."""
    import numpy as np

    size, names = data.size, [str(i) for i in range(data.size)]
    wins = _wins(data.ia, data.ib, data.y, weights, size)
    if separation(wins, names) is not None:
        return {"beta": None, "gamma": None, "separated": "bt", "direction": 0}
    if not ((data.delta != 0) & (weights > 0)).any():  # nothing to control
        beta = ranking.fit(wins, baseline)
        return {"beta": beta, "gamma": None, "separated": "equal", "direction": 0}
    direction = _length_direction(data.y, data.delta, weights)
    if direction:
        equal = np.where(data.delta == 0, weights, 0.0)
        level = _wins(data.ia, data.ib, data.y, equal, size)
        beta = None
        if separation(level, names) is None and equal.any():
            beta = ranking.fit(level, baseline)
        return {
            "beta": beta,
            "gamma": None,
            "separated": "length",
            "direction": direction,
        }
    found = fit(data.ia, data.ib, data.t, data.y, weights, size, baseline)
    beta, gamma = found if found is not None else (None, None)
    return {"beta": beta, "gamma": gamma, "separated": None, "direction": 0}


def estimate(
    comparisons: list[Comparison], methods: list[str], baseline: str
) -> dict[str, Any]:
    """The fit on every comparison (see :func:`_estimate`), with ``scale``."""
    import numpy as np

    scale = length_scale(comparisons)
    data = _Data(comparisons, methods, scale or 1.0)
    found = _estimate(data, np.ones(len(comparisons)), methods.index(baseline))
    return {**found, "scale": scale}


def _session_shares(
    data: _Data, beta: Sequence[float], weights: NDArray[np.float64]
) -> list[float | None]:
    """Per method, the mean over sessions (each counted ``weights`` times)
    of the session's mean of σ(β_m − β_o) over the method's comparisons."""
    import numpy as np

    size = data.size
    prob = 1.0 / (
        1.0 + np.exp(-(np.asarray(beta)[:, None] - np.asarray(beta)[None, :]))
    )
    shares: list[float | None] = []
    sessions = len(data.sessions)
    for m in range(size):
        own_a, own_b = data.ia == m, data.ib == m
        mine = own_a | own_b
        value = np.where(own_a, prob[m, data.ib], prob[m, data.ia])
        total = np.bincount(data.session[mine], value[mine], sessions)
        counted = np.bincount(data.session[mine], minlength=sessions).astype(float)
        present = counted > 0
        session_w = weights[present]
        if not present.any() or session_w.sum() == 0:
            shares.append(None)
            continue
        per_session = total[present] / counted[present]
        shares.append(float((session_w * per_session).sum() / session_w.sum()))
    return shares


def longer_wins_rate(comparisons: list[Comparison], method: str) -> list[float]:
    """Per session (by session id), the share of the method's
    comparisons a judge that always picks the longer reply would give it
    (equal lengths a tie): the "longer reply wins" baseline of its win rate.

    >>> longer_wins_rate([("s", "A", "B", 0.0, 9, 3), ("s", "C", "A", 1.0, 3, 3)], "A")
    [0.75]
    """
    by_session: dict[str, list[float]] = defaultdict(list)
    for session, a, b, _y, chars_a, chars_b in comparisons:
        if method not in (a, b):
            continue
        own, other = (chars_a, chars_b) if method == a else (chars_b, chars_a)
        by_session[session].append(1.0 if own > other else 0.0 if own < other else 0.5)
    return [fmean(by_session[session]) for session in sorted(by_session)]


def longer_won_share(comparisons: list[Comparison]) -> tuple[float | None, int]:
    """How often the longer reply's side won: the mean share the longer
    reply won over the comparisons of unequal lengths (ties half), and
    their number.

    >>> longer_won_share([("s", "A", "B", 1.0, 9, 3), ("s", "A", "B", 0.5, 2, 3),
    ...                   ("s", "A", "B", 1.0, 3, 3)])
    (0.75, 2)
    """
    won = [
        y if ca > cb else 1.0 - y for _s, _a, _b, y, ca, cb in comparisons if ca != cb
    ]
    return (fmean(won) if won else None), len(won)


def _quantiles(draws: list[float], tail: float) -> tuple[float, float]:
    import numpy as np

    low, high = np.quantile(draws, [tail, 1 - tail])
    return float(low), float(high)


def length_controlled(
    comparisons: list[Comparison], methods: list[str], baseline: str
) -> dict[str, Any]:
    """Everything the summary reports: per method ``bt_lc`` and
    ``winrate_lc`` (``{"mean", "ci_low", "ci_high"}``), the fit's ``gamma``
    and ``shift`` with intervals, ``scale``, ``separated`` (``"bt"``,
    ``"length"`` or None), ``resamples_separated`` (bootstrap resamples
    with no finite strengths, left out) and the sessions and comparisons.
    Intervals: percentile, ``ranking.BT_RESAMPLES`` resamples of sessions
    (fixed seed), none from fewer than two sessions or when more than
    ``ranking.SEPARATED_SHARE`` of the resamples have no finite value.

    >>> c = [("s1", "A", "B", 1.0, 120, 100), ("s1", "A", "B", 0.0, 80, 100),
    ...      ("s2", "A", "B", 1.0, 100, 100), ("s2", "A", "B", 0.0, 100, 90),
    ...      ("s3", "A", "B", 0.5, 60, 70), ("s3", "A", "B", 1.0, 90, 100)]
    >>> found = length_controlled(c, ["A", "B"], "B")
    >>> round(found["methods"]["A"]["winrate_lc"]["mean"], 4), round(found["gamma"], 4)
    (0.5985, 0.4994)
    >>> found["resamples_separated"], found["methods"]["A"]["winrate_lc"]["ci_low"]
    (41, None)
    """
    import numpy as np

    scale = length_scale(comparisons)
    base = methods.index(baseline)
    data = _Data(comparisons, methods, scale or 1.0)
    ones = np.ones(len(comparisons))
    point = _estimate(data, ones, base)
    point["scale"] = scale
    sessions = len(data.sessions)
    resamples = ranking.BT_RESAMPLES if sessions >= 2 else 0
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    betas, rates, gammas, shifts = [], [], [], []
    no_strength = no_gamma = 0
    # A resample's fit depends on its session counts alone: fitted once per
    # distinct counts (500 resamples of three sessions are 10 multisets)
    fits: dict[bytes, tuple[dict[str, Any], list[float | None]]] = {}
    for _ in range(resamples):
        picked = np.bincount(rng.integers(0, sessions, sessions), minlength=sessions)
        if (key := picked.tobytes()) not in fits:
            weights = picked[data.session].astype(float)
            fitted = _estimate(data, weights, base)
            shares: list[float | None] = []  # (read only with a beta)
            if fitted["separated"] != "bt" and fitted["beta"] is not None:
                shares = _session_shares(data, fitted["beta"], picked.astype(float))
            fits[key] = fitted, shares
        found, shares = fits[key]
        if found["separated"] == "bt":
            no_strength += 1
            no_gamma += 1
            continue
        if found["beta"] is None:
            no_strength += 1
        else:
            betas.append(found["beta"])
            rates.append(shares)
        if found["gamma"] is None:
            no_gamma += 1
        else:
            gammas.append(found["gamma"])
        moved = shift(found)
        if moved is not None:
            shifts.append(moved)
    tail = (1 - LEVEL) / 2
    limit = ranking.SEPARATED_SHARE * resamples

    def interval(draws: list[float], missing: int) -> tuple[float | None, float | None]:
        if not draws or missing > limit:
            return None, None
        # an interval of width 0 (the baseline's strength, 0 in every
        # resample) is not shown as one: None, None with ci_no_spread
        return spread_or_none(*_quantiles(draws, tail)) or (None, None)

    def note_of(draws: list[float], missing: int, low: float | None) -> dict[str, Any]:
        shown = low is not None or not draws or missing > limit
        return {} if shown else {"ci_note": CI_NO_SPREAD}

    point_rates = (
        _session_shares(data, point["beta"], np.ones(sessions))
        if point["beta"] is not None
        else [None] * len(methods)
    )
    per_method: dict[str, dict[str, Any]] = {}
    for i, method in enumerate(methods):
        bt_low, bt_high = interval([b[i] for b in betas], no_strength)
        kept = [rate for r in rates if (rate := r[i]) is not None]
        rate_low, rate_high = interval(kept, no_strength + len(rates) - len(kept))
        per_method[method] = {
            "bt_lc": {
                "mean": None if point["beta"] is None else point["beta"][i],
                "ci_low": bt_low,
                "ci_high": bt_high,
                **note_of([b[i] for b in betas], no_strength, bt_low),
            },
            "winrate_lc": {
                "mean": point_rates[i],
                "ci_low": rate_low,
                "ci_high": rate_high,
                **note_of(kept, no_strength + len(rates) - len(kept), rate_low),
            },
        }
    gamma_low, gamma_high = interval(gammas, no_gamma)
    shift_low, shift_high = interval(shifts, resamples - len(shifts))
    return {
        "methods": per_method,
        "gamma": point["gamma"],
        "gamma_ci_low": gamma_low,
        "gamma_ci_high": gamma_high,
        "shift": shift(point),
        "shift_ci_low": shift_low,
        "shift_ci_high": shift_high,
        "separated": point["separated"],
        "direction": point["direction"],
        "scale": scale,
        "resamples_separated": no_strength,
        "sessions": sessions,
        "comparisons": len(comparisons),
    }


# -- the suite's summary ---------------------------------------------------
LC_KEYS = (
    "pairwise_winrate_lc",
    "pairwise_winrate_lc_ci_low",
    "pairwise_winrate_lc_ci_high",
    "bt_lc_score",
    "bt_lc_ci_low",
    "bt_lc_ci_high",
)
LONGER_KEYS = (
    "pairwise_longer_wins_rate",
    "pairwise_longer_wins_rate_ci_low",
    "pairwise_longer_wins_rate_ci_high",
)


def comparisons(
    items: dict[Item, dict[str, Any]],
) -> tuple[list[Comparison], int]:
    """The comparisons with both replies' lengths, from ``{(session, round,
    method, opponent): {"values": [...], "chars": [own, opponent] | None}}``
    (each comparison's primary row; a panel's judges' values averaged), and
    how many lack their lengths (judged before lengths were recorded)."""
    found, lacking = [], 0
    for (session, _k, method, opponent), item in items.items():
        chars = item.get("chars")
        if not (isinstance(chars, list) and len(chars) == 2):
            lacking += 1
            continue
        found.append(
            (
                session,
                method,
                opponent,
                fmean(item["values"]),
                int(chars[0]),
                int(chars[1]),
            )
        )
    return found, lacking


def summary_part(
    found: list[Comparison],
    lacking: int,
    methods: list[str],
    baseline: str,
    split: dict[str, Any] | None,
    raw: dict[str, float | None],
    winrate_ci: Callable[[list[float]], dict[str, Any]],
) -> dict[str, Any]:
    """``{"summary": {method: {key: value}}, "notes": {method: {key: note}},
    "validity": {"length_pairwise_effect": dict | None}, "panel": {...}}``.
    ``raw``: each method's raw win rate; ``winrate_ci``: the raw win rate's
    interval rule (mean of per-session shares, bootstrap), reused for the
    "longer reply wins" rate."""
    summary: dict[str, dict[str, Any]] = {
        m: dict.fromkeys(LC_KEYS + LONGER_KEYS) for m in methods
    }
    notes: dict[str, dict[str, Any]] = {}
    effect = None
    if lacking or not found:
        none: dict[str, Any] = (
            {"code": "lc_pairwise_no_lengths", "params": {"n": lacking}}
            if lacking
            else {"code": "validity_no_comparisons"}
        )
        notes = {m: {k: dict(none) for k in LC_KEYS + LONGER_KEYS} for m in methods}
        return {
            "summary": summary,
            "notes": notes,
            "validity": {"length_pairwise_effect": None},
            "panel": None,
        }
    for method in methods:
        ci = winrate_ci(longer_wins_rate(found, method))
        summary[method].update(
            pairwise_longer_wins_rate=ci["mean"],
            pairwise_longer_wins_rate_ci_low=ci["ci_low"],
            pairwise_longer_wins_rate_ci_high=ci["ci_high"],
        )
        if ci.get("ci_note"):  # an interval of width 0: said why
            said = {"code": ci["ci_note"]}
            notes.setdefault(method, {}).update(
                pairwise_longer_wins_rate_ci_low=said,
                pairwise_longer_wins_rate_ci_high=dict(said),
            )
    fitted = None
    present = [m for m in methods if any(m in (c[1], c[2]) for c in found)]
    absent = ", ".join(m for m in methods if m not in present)
    # as Bradley–Terry: strengths only when every method was compared (one scale)
    if split is None and not absent and len(present) >= 2:
        fitted = length_controlled(found, present, baseline)
    values = (fitted or {}).get("methods", {})
    for method in methods:
        lc = values.get(method)
        if lc is None or lc["bt_lc"]["mean"] is None:
            reason: dict[str, Any]
            if split is not None:
                reason = {
                    "code": "bt_disconnected" if "groups" in split else "bt_separation",
                    "params": split,
                }
            elif fitted and fitted["separated"] == "length":
                reason = {"code": "lc_pairwise_length_separates"}
            elif len(present) < 2:
                reason = {"code": "bt_too_few_methods"}
            else:
                reason = {"code": "bt_not_compared", "params": {"methods": absent}}
            notes[method] = {k: dict(reason) for k in LC_KEYS}
            continue
        summary[method].update(
            pairwise_winrate_lc=lc["winrate_lc"]["mean"],
            pairwise_winrate_lc_ci_low=lc["winrate_lc"]["ci_low"],
            pairwise_winrate_lc_ci_high=lc["winrate_lc"]["ci_high"],
            bt_lc_score=lc["bt_lc"]["mean"],
            bt_lc_ci_low=lc["bt_lc"]["ci_low"],
            bt_lc_ci_high=lc["bt_lc"]["ci_high"],
        )
        for key, part in (("pairwise_winrate_lc", "winrate_lc"), ("bt_lc", "bt_lc")):
            if lc[part].get("ci_note"):  # an interval of width 0: said why
                said = {"code": lc[part]["ci_note"]}
                notes.setdefault(method, {}).update(
                    {f"{key}_ci_low": said, f"{key}_ci_high": dict(said)}
                )
    won, won_n = longer_won_share(found)
    if fitted and fitted["shift"] is not None:
        effect = {
            "value": fitted["shift"],
            "measure": "win_probability_shift",
            "ci_low": fitted["shift_ci_low"],
            "ci_high": fitted["shift_ci_high"],
            "n": fitted["sessions"],
            "comparisons": fitted["comparisons"],
            "gamma": fitted["gamma"],
            "gamma_ci_low": fitted["gamma_ci_low"],
            "gamma_ci_high": fitted["gamma_ci_high"],
            "scale_chars": fitted["scale"],
            "separated": fitted["separated"],
            "resamples_separated": fitted["resamples_separated"],
            "longer_won_share": won,
            "longer_won_n": won_n,
            "winrate": {m: raw.get(m) for m in methods},
            "winrate_lc": {m: summary[m]["pairwise_winrate_lc"] for m in methods},
            "longer_wins_rate": {
                m: summary[m]["pairwise_longer_wins_rate"] for m in methods
            },
        }
    shown = {m: {"pairwise_winrate": raw.get(m), **summary[m]} for m in methods}
    return {
        "summary": summary,
        "notes": notes,
        "validity": {"length_pairwise_effect": effect},
        "panel": {"methods": shown, "effect": effect},
    }


def table_rows(panel: dict[str, Any], methods: list[str]) -> list[dict[str, Any]]:
    """The dashboard's length-control table: one row per method with a
    raw win rate (the panel data ``length_control.methods``).

    >>> table_rows({"length_control": {"methods": {"A": {"pairwise_winrate": 0.9}}}}, ["A", "B"])
    [{'method': 'A', 'pairwise_winrate': 0.9}]

    An interval of width 0 (the baseline's strength, fixed at 0) is shown
    as none:

    >>> table_rows({"length_control": {"methods": {"A": {"pairwise_winrate": 0.5,
    ...     "bt_lc_score": 0.0, "bt_lc_ci_low": 0.0, "bt_lc_ci_high": 0.0}}}}, ["A"])
    [{'method': 'A', 'pairwise_winrate': 0.5, 'bt_lc_score': 0.0, 'bt_lc_ci_low': None, 'bt_lc_ci_high': None}]
    """
    found = (panel.get("length_control") or {}).get("methods") or {}
    return [
        _no_flat_interval({"method": m, **found[m]})
        for m in methods
        if (found.get(m) or {}).get("pairwise_winrate") is not None
    ]


def _no_flat_interval(row: dict[str, Any]) -> dict[str, Any]:
    for prefix in ("pairwise_winrate_lc", "bt_lc"):
        low, high = row.get(f"{prefix}_ci_low"), row.get(f"{prefix}_ci_high")
        if low is not None and high is not None and spread_or_none(low, high) is None:
            row[f"{prefix}_ci_low"] = row[f"{prefix}_ci_high"] = None
    return row
