"""The pairwise suite's summary: win rates over sessions with t-intervals,
Bradley–Terry scores with bootstrap intervals, and the position-bias and
separation checks (``docs/metrics/pairwise.md``)."""

from __future__ import annotations

from collections.abc import Iterable
from statistics import fmean
from typing import TYPE_CHECKING, Any

from metrics import row_source, stats
from metrics.columns import RowColumns
from metrics.suite import (
    SuiteSummary,
    SummaryRows,
)
from metrics.suites.pairwise import length_control, ranking
from metrics.suites.pairwise.bt_separation import separation
from metrics.suites.pairwise.length_control import Item

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


# -- summary ---------------------------------------------------------------
def bt_baseline(outcomes: list[ranking.Outcome], methods: list[str]) -> str:
    """The method every comparison was made against (``pairwise_baseline``),
    else the first method: its strength is fixed at 0.

    >>> bt_baseline([("s", "A", "B", 1.0), ("s", "C", "B", 0.0)], ["A", "B", "C"])
    'B'
    >>> bt_baseline([("s", "A", "B", 1.0)], ["A", "B"])  # two methods
    'A'
    """
    common = [m for m in methods if all(m in (a, b) for _s, a, b, _v in outcomes)]
    return common[0] if len(common) == 1 else methods[0]  # two methods: the first


def _separation(
    outcomes: list[ranking.Outcome], methods: list[str]
) -> dict[str, Any] | None:
    """The separation of the compared methods, as note parameters."""
    present = [m for m in methods if any(m in (a, b) for _s, a, b, _v in outcomes)]
    if len(present) < 2:
        return None
    _sessions, wins = ranking.wins_tensor(outcomes, present)
    found = separation(wins.sum(axis=0), present)
    if found is None:
        return None
    if "apart" in found:  # the note bt_disconnected
        return {"groups": "; ".join(", ".join(group) for group in found["apart"])}
    return {
        "unbeaten": ", ".join(found["unbeaten"]),
        "winless": ", ".join(found["winless"]),
    }


def _winrate_ci(shares: list[float]) -> dict[str, Any]:
    """The mean of per-session win shares, with a 95% percentile bootstrap
    interval over sessions (``stats.paired_bootstrap_ci``: exact under ten
    sessions, else the same fixed seed and resamples), which stays within
    [0, 1] as the shares do (a Student-t interval gave [0.405, 1.262]);
    null with ``ci_note`` ``ci_no_spread`` when it has no width.

    >>> _winrate_ci([1.0, 1.0, 0.5, 1.0])["ci_high"] <= 1.0
    True
    """
    found = stats.mean_ci(shares)
    bounds = stats.paired_bootstrap_ci(shares)
    low, high = bounds if bounds is not None else (None, None)
    flat = bounds is None and len(shares) >= 2  # an interval of width 0
    return {
        **found,
        "ci_low": low,
        "ci_high": high,
        "ci_note": stats.CI_NO_SPREAD if flat else None,
    }


def _with_winrate_notes(
    notes: dict[str, Any], winrates: dict[str, Any]
) -> dict[str, Any]:
    """``notes`` with a ``ci_no_spread`` note on the win-rate interval's
    ends of each method whose interval has no width."""
    for method, found in winrates.items():
        if found.get("ci_note"):
            said = {"code": found["ci_note"]}
            notes.setdefault(method, {}).update(
                pairwise_winrate_ci_low=said, pairwise_winrate_ci_high=dict(said)
            )
    return notes


def _separation_code(split: dict[str, Any]) -> str:
    return "bt_disconnected" if "groups" in split else "bt_separation"


def bt_notes(
    strengths: dict[str, Any],
    split: dict[str, Any] | None,
    outcomes: list[ranking.Outcome],
    methods: list[str],
) -> dict[str, dict[str, Any]]:
    """``{method: {"bt_score": note, ...}}`` (its interval's ends too) for
    each method without a strength: why (summary notes,
    ``metrics.results.summary_notes``).

    >>> bt_notes({}, None, [("s", "A", "B", 1.0)], ["A", "B", "C"])["C"]["bt_score"]
    {'code': 'bt_not_compared', 'params': {'methods': 'C'}}
    >>> bt_notes({}, None, [], ["A", "B"])["A"]["bt_score"]["code"]
    'validity_no_comparisons'
    """
    present = [m for m in methods if any(m in (a, b) for _s, a, b, _v in outcomes)]
    if split:
        reason = {"code": _separation_code(split), "params": split}
    elif not outcomes:
        reason = {"code": "validity_no_comparisons"}
    elif len(present) < 2:
        reason = {"code": "bt_too_few_methods"}
    else:
        absent = ", ".join(m for m in methods if m not in present)
        reason = {"code": "bt_not_compared", "params": {"methods": absent}}
    return {
        method: {key: dict(reason) for key in ("bt_score", "bt_ci_low", "bt_ci_high")}
        for method in methods
        if strengths.get(method, {}).get("mean") is None
    }


def _left_out_notes(strengths: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Beside each end of a Bradley–Terry interval, how many resamples it
    left out (separated: no finite strengths), or why it has none (more
    than ``ranking.SEPARATED_SHARE`` of them were; width 0, as the
    baseline's: ``ci_no_spread``).

    >>> _left_out_notes({"A": {"mean": 1.0, "ci_low": 0.1, "resamples_separated": 3}})
    ... # doctest: +NORMALIZE_WHITESPACE
    {'A': {'bt_ci_low': {'code': 'bt_resamples_left_out',
                         'params': {'left_out': 3, 'resamples': 500}},
           'bt_ci_high': {'code': 'bt_resamples_left_out',
                          'params': {'left_out': 3, 'resamples': 500}}}}
    """
    said = {}
    for method, bt in strengths.items():
        if bt.get("mean") is not None and bt.get("ci_note"):  # width 0
            reason = {"code": bt["ci_note"]}
            said[method] = {"bt_ci_low": reason, "bt_ci_high": dict(reason)}
            continue
        left_out = bt.get("resamples_separated") or 0
        if bt.get("mean") is None or not left_out:
            continue
        code = (
            "bt_resamples_left_out"
            if bt.get("ci_low") is not None
            else ("bt_ci_too_separated")
        )
        params = {"left_out": left_out, "resamples": ranking.BT_RESAMPLES}
        reason = {"code": code, "params": params}
        said[method] = {"bt_ci_low": reason, "bt_ci_high": dict(reason)}
    return said


def validity(details: Iterable[dict[str, Any] | None]) -> dict[str, Any]:
    """Position bias of the judge over the scored comparisons (each once),
    from the details of the scored rows.

    >>> validity([{"primary": True, "consistent": True, "first_wins": [1.0, 0.0]},
    ...           {"primary": False, "consistent": True}])  # doctest: +NORMALIZE_WHITESPACE
    {'position_consistency': 1.0, 'first_position_rate': 0.5,
     'pairwise_comparisons': 1, 'first_position_rate_n': 2}
    """
    primary = [d for d in (detail or {} for detail in details) if d.get("primary")]
    consistent = [d["consistent"] for d in primary if "consistent" in d]
    firsts = [w for d in primary for w in d.get("first_wins", []) if w in (0.0, 1.0)]
    return {
        "position_consistency": fmean(consistent) if consistent else None,
        "first_position_rate": fmean(firsts) if firsts else None,
        "pairwise_comparisons": len(consistent),
        # the single-order verdicts that named a winner: what the rate is of
        "first_position_rate_n": len(firsts),
    }


def _notes(said: dict[str, Any]) -> dict[str, Any]:
    return {"notes": said} if said else {}


def _outcomes(
    rows: RowColumns, found: NDArray[np.intp], details: list[dict[str, Any] | None]
) -> list[ranking.Outcome]:
    """(session, method, opponent, value) of each comparison, once (its
    primary row), in the order the rows arrived. With a judge panel, per
    item first (docs/metrics/README.md): the judges' mean value of each
    (session, round, pair), so W counts comparisons, not the verdicts of
    every judge (which only weighed the penalty less)."""
    by_item: dict[Item, list[float]] = {}
    for session, k, method, metric, value, detail in zip(
        rows.strings("session", found),
        rows.rounds(found),
        rows.strings("method", found),
        rows.strings("metric", found),
        rows.values(found),
        details,
        strict=True,
    ):
        if (detail or {}).get("primary"):
            item = (session, k, method, metric.partition("@")[2])
            by_item.setdefault(item, []).append(value)
    return [
        (session, method, opponent, fmean(values))
        for (session, _k, method, opponent), values in by_item.items()
    ]


def _length_items(
    rows: RowColumns, found: NDArray[np.intp], details: list[dict[str, Any] | None]
) -> dict[Item, dict[str, Any]]:
    """Each comparison's values (a panel's judges) and the replies' lengths
    its primary row recorded (``detail.chars``; None in earlier runs)."""
    items: dict[Item, dict[str, Any]] = {}
    for session, k, method, metric, value, detail in zip(
        rows.strings("session", found),
        rows.rounds(found),
        rows.strings("method", found),
        rows.strings("metric", found),
        rows.values(found),
        details,
        strict=True,
    ):
        if (detail or {}).get("primary"):
            item = items.setdefault(
                (session, k, method, metric.partition("@")[2]),
                {"values": [], "chars": detail.get("chars")},
            )
            item["values"].append(value)
    return items


def summarize(rows: SummaryRows, methods: list[str]) -> SuiteSummary:
    """Win rate per method (mean over sessions of the session's share of
    comparisons won), Bradley-Terry strengths, the win matrix and the
    judge's position bias."""
    rows = row_source.all_rows(rows, details=True)
    found = rows.where(prefix="pairwise@")
    compared = [m for m in rows.names["metric"].names if m.startswith("pairwise@")]
    per_session = rows.session_means(compared)
    details = [rows.details[i] for i in found.tolist()] if rows.details else []
    outcomes = _outcomes(rows, found, details)
    split = _separation(outcomes, methods)
    strengths = (
        ranking.bt_with_ci(outcomes, methods, bt_baseline(outcomes, methods))
        if outcomes and split is None
        else {}
    )
    summary: dict[str, dict[str, float | None]] = {}
    winrates: dict[str, dict[str, Any]] = {}
    for method in methods:
        shares = per_session.get(method, {})
        # by session id: the seeded resamples draw by position
        ci = _winrate_ci([shares[s] for s in sorted(shares)])
        winrates[method] = ci
        bt = strengths.get(method, {})
        summary[method] = {
            "pairwise_winrate": ci["mean"],
            "pairwise_winrate_ci_low": ci["ci_low"],
            "pairwise_winrate_ci_high": ci["ci_high"],
            "bt_score": bt.get("mean"),
            "bt_ci_low": bt.get("ci_low"),
            "bt_ci_high": bt.get("ci_high"),
            # resamples left out of the interval (separated), 0 too
            "bt_resamples_left_out": bt.get("resamples_separated"),
        }
    # length-controlled (metrics/suites/pairwise/length_control.py)
    found_lc, lacking = length_control.comparisons(_length_items(rows, found, details))
    raw = {method: winrates[method]["mean"] for method in methods}
    lc = length_control.summary_part(
        found_lc,
        lacking,
        methods,
        bt_baseline(outcomes, methods),
        split,
        raw,
        _winrate_ci,
    )
    for method in methods:
        summary[method].update(lc["summary"][method])
    said = _left_out_notes(strengths) | bt_notes(strengths, split, outcomes, methods)
    for method, reasons in lc["notes"].items():
        said.setdefault(method, {}).update(reasons)
    return {
        "summary": summary,
        "panel": {
            "matrix": ranking.win_matrix(outcomes, methods),
            "methods": list(methods),
            "bt": {method: {"bt": values} for method, values in strengths.items()},
            "winrate": winrates,
            # why a chart has nothing to draw: a note code and its parameters
            "reasons": {"bt_forest": {"code": _separation_code(split), "params": split}}
            if split
            else {},
            # why a method has no strength or no win-rate interval
            # (metrics.results.summary_notes)
            **_notes(_with_winrate_notes(said, winrates)),
            "length_control": lc["panel"],
        },
        "validity": {**validity(details), **lc["validity"]},
    }
