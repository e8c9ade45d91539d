"""Self-preference: does a judge score the method of its own model family
higher than judges of other families do (issue 58; pure)?

A run may name each method's and each judge's model family
(``run.families = {"methods": {method: family}, "judges": {model:
family}}``). For every judge J sharing a family F with a method M, per
session s (the unit of every paired test here):

* ``gap(m, s)`` = J's mean AL of method m in s minus the mean, over the
  judges whose family is named and is not F, of their mean AL of m in s;
* ``d(s)`` = ``gap(M, s)`` minus the mean of ``gap(m, s)`` over the methods
  m of a named family other than F that have one in s.

The estimate is the mean of ``d(s)`` over the sessions that have it, with a
Student-t 95% interval (n − 1 degrees of freedom) and n, the sessions (an
interval of width 0, every session's d the same, is null with ``ci_note``
``ci_no_variation``, as every t interval of the platform). A
positive value: J favours its family's method beyond what it does for the
others, relative to the other families' judges. Beside it, J's own mean AL
of M (``judge_score``) and the other-family judges' (``other_families_score``),
over the same sessions.

>>> rows = [{"session_id": s, "round": 1, "method": m, "judge": j, "metric": "al",
...          "value": v, "status": "ok"}
...         for s, bonus in (("s1", 8), ("s2", 12), ("s3", 10))
...         for m, j, v in (("Ours", "gpt", 60 + bonus), ("Ours", "claude", 60),
...                         ("Base", "gpt", 50), ("Base", "claude", 50))]
>>> families = {"methods": {"Ours": "openai", "Base": "meta"},
...             "judges": {"gpt": "OpenAI", "claude": "anthropic"}}
>>> [found] = estimates(rows, families)
>>> found["judge"], found["method"], found["value"], found["n"]
('gpt', 'Ours', 10.0, 3)
>>> round(found["ci_low"], 3), found["judge_score"], found["other_families_score"]
(5.032, 70.0, 60.0)
>>> estimates(rows, None) is None, estimates(rows, {"methods": {"Ours": "x"}})
(True, [])
"""

from __future__ import annotations

from collections import defaultdict
from statistics import fmean
from typing import Any

from metrics import row_source
from metrics.items import Rows
from metrics.notes import note
from metrics.stats import mean_ci

METRIC = "al"
Means = dict[tuple[str, str], dict[str, float]]  # (judge, method) -> session -> AL


def family(name: object) -> str | None:
    """A family name as compared: stripped, case folded (None when empty).

    >>> family(" OpenAI "), family("")
    ('openai', None)
    """
    if not isinstance(name, str) or not name.strip():
        return None
    return name.strip().casefold()


def shared(families: dict[str, Any] | None) -> list[tuple[str, str, str]]:
    """``(judge, method, family)`` for each judge and method of one family.

    >>> shared({"methods": {"A": "x", "B": "y"}, "judges": {"j": "X"}})
    [('j', 'A', 'X')]
    """
    families = families or {}
    methods = {m: family(f) for m, f in (families.get("methods") or {}).items()}
    return [
        (judge, method, name)
        for judge, name in (families.get("judges") or {}).items()
        for method, own in methods.items()
        if own is not None and own == family(name)
    ]


def estimates(
    rows: Rows, families: dict[str, Any] | None, judge: str | None = None
) -> list[dict[str, Any]] | None:
    """One estimate per judge and method sharing a family ([] when none
    does; None when the run named no families). ``judge``: the run's one
    judge model, for rows that name none."""
    if not families:
        return None
    pairs = shared(families)
    if not pairs:
        return []
    means = _session_means(rows, judge)
    methods = {m: family(f) for m, f in (families.get("methods") or {}).items()}
    judges = {j: family(f) for j, f in (families.get("judges") or {}).items()}
    return [_estimate(means, j, m, name, methods, judges) for j, m, name in pairs]


def _session_means(rows: Rows, judge: str | None) -> Means:
    """``{(judge, method): {session: mean AL}}`` over the scored rows."""
    table = row_source.part(rows, [METRIC])
    index = table.where(METRIC)
    sums: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(
        lambda: defaultdict(lambda: [0.0, 0])
    )
    for session, method, who, value in zip(
        table.strings("session", index),
        table.strings("method", index),
        table.strings("judge", index),
        table.values(index),
        strict=True,
    ):
        found = sums[(who or judge or "", method)][session]
        found[0] += value
        found[1] += 1
    return {
        key: {s: total / count for s, (total, count) in by_session.items()}
        for key, by_session in sums.items()
    }


def _estimate(
    means: Means,
    judge: str,
    method: str,
    name: str,
    methods: dict[str, str | None],
    judges: dict[str, str | None],
) -> dict[str, Any]:
    own = family(name)
    others = [j for j, f in judges.items() if f is not None and f != own]
    baseline = [m for m, f in methods.items() if f is not None and f != own]
    found: dict[str, Any] = {
        "judge": judge,
        "method": method,
        "family": name,
        "other_judges": sorted(others),
        "value": None,
        "n": 0,
        "ci_low": None,
        "ci_high": None,
        "judge_score": None,
        "other_families_score": None,
    }

    def missing(code: str, **params: object) -> dict[str, Any]:
        return found | {
            "reason_code": code,
            "reason_params": params,
            "reason": note(code, **params).english,
        }

    mine = means.get((judge, method)) or {}
    if mine:
        found["judge_score"] = fmean(mine.values())
    if not others:
        return missing(
            "self_preference_no_other_family", judge=judge, family=name, method=method
        )

    def gap(m: str, session: str) -> tuple[float, float] | None:
        theirs = [
            means[(o, m)][session] for o in others if session in means.get((o, m), {})
        ]
        if session not in means.get((judge, m), {}) or not theirs:
            return None
        return means[(judge, m)][session], fmean(theirs)

    diffs, scores, other_scores = [], [], []
    for session in sorted(mine):
        target = gap(method, session)
        gaps = [g for m in baseline if (g := gap(m, session)) is not None]
        if target is None or not gaps:
            continue
        diffs.append((target[0] - target[1]) - fmean(a - b for a, b in gaps))
        scores.append(target[0])
        other_scores.append(target[1])
    if not baseline:
        return missing("self_preference_no_other_method")
    if other_scores:
        found["judge_score"] = fmean(scores)
        found["other_families_score"] = fmean(other_scores)
    found["n"] = len(diffs)
    if len(diffs) < 2:
        return missing("self_preference_too_few", judge=judge, n=len(diffs))
    interval = mean_ci(diffs)
    found |= {"value": interval["mean"]}
    if interval.get("ci_note"):  # every session's d the same: no interval
        code = interval["ci_note"]
        return found | {"ci_note": code, "ci_reason": note(code).english}
    return found | {"ci_low": interval["ci_low"], "ci_high": interval["ci_high"]}
