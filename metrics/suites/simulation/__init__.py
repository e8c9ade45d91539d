"""Simulation suite: guest-simulation quality (``docs/metrics/simulation.md``).

Session rows ``pas``, ``bvs``, ``ora``, ``dei``, ``crrs`` per (session, method)
from the method's guest messages: its responses' ``sim`` blocks in round order.

* N (also the BVS states) = the non-exit messages; N = 0 leaves PAS, BVS and DEI
  unscored. Labels compare casefolded and trimmed, spaces/hyphens -> ``_``.
* PAS falls back on the persona type only when the persona has none of the four
  attributes; otherwise missing ones are skipped and the rest weigh equally.
* ORA: C = ``order`` of the last message reporting one (exit included). DEI
  tier: union of tracking kinds over the N messages (no ``tracking`` -> unscored).
* CRRS is unscored when a component is. Summary: ``<m>_avg``, ``<m>_ci_low|high``.
"""

from __future__ import annotations

from statistics import fmean
from typing import Any, TypedDict, cast

from core.status import RowStatus
from metrics import row_source, stats
from metrics.judging import Judge
from metrics.notes import Note, note
from metrics.rows import ResultRow, RowKey, result_row, session_means
from metrics.suite import (
    Chart,
    Column,
    Metric,
    Panel,
    Suite,
    SuiteSummary,
    SummaryRows,
    Table,
    _l,
    series,
)
from metrics.suites.simulation.components import (
    ALPHA,
    IDS,
    WEIGHTS,
    Unscored,
    behavioral_variance,
    composite,
    explainability,
    normalize_item,
    order_adherence,
    persona_adherence,
    transition_rate,
    variance_score,
)

__all__ = [
    "Unscored",
    "behavioral_variance",
    "explainability",
    "normalize_item",
    "order_adherence",
    "persona_adherence",
    "transition_rate",
    "variance_score",
]


# (value, detail, status, note) of one metric of a (session, method)
Outcome = tuple[float | None, dict[str, Any] | None, str | None, Note | None]


def _compute(
    metric: str, session: dict[str, Any], sims: list[dict[str, Any]]
) -> tuple[float, dict[str, Any]]:
    if not sims:
        raise Unscored("missing_field", field="sim")
    if metric == "ora":
        return _ora(session, sims)
    if metric == "pas" and not session.get("persona"):
        raise Unscored("missing_field", field="persona")
    messages = [sim for sim in sims if not sim.get("exit")]
    if not messages:
        raise Unscored("no_messages")
    if metric == "pas":
        return persona_adherence(session["persona"], messages)
    return (behavioral_variance if metric == "bvs" else explainability)(messages)


def _ora(
    session: dict[str, Any], sims: list[dict[str, Any]]
) -> tuple[float, dict[str, Any]]:
    if (target := session.get("target_order")) is None:
        raise Unscored("missing_field", field="target_order")
    if not target:
        raise Unscored("empty_target_order")
    reported = [s["order"] for s in sims if isinstance(s.get("order"), list)]
    if not reported:
        raise Unscored("no_order")
    return order_adherence(target, reported[-1])


def _outcome(
    metric: str, session: dict[str, Any], sims: list[dict[str, Any]]
) -> Outcome:
    """(value, detail, status, note); never raises."""
    try:
        return (*_compute(metric, session, sims), RowStatus.OK, None)
    except Unscored as unscored:
        return None, None, unscored.reason.status, unscored.reason
    except Exception as error:  # malformed input must not sink the run
        return (
            None,
            None,
            RowStatus.ERROR,
            note("internal_error", kind=type(error).__name__),
        )


def session_rows(session: dict[str, Any], method: str) -> list[ResultRow]:
    """The five session-level rows of one (session, method)."""
    responses = (r.get("responses", {}).get(method) for r in session["rounds"])
    sims = [r["sim"] for r in responses if isinstance(r, dict) and r.get("sim")]
    outcomes = {m: _outcome(m, session, sims) for m in WEIGHTS}
    failed = [m for m, o in outcomes.items() if o[2] != RowStatus.OK]
    scores = {m: o[0] for m, o in outcomes.items()}
    detail: dict[str, Any] = {"components": scores, "weights": WEIGHTS}
    if failed:  # CRRS needs all four; it cannot apply if one of them cannot
        cannot = all(outcomes[m][2] == RowStatus.NOT_APPLICABLE for m in failed)
        why = "components_not_applicable" if cannot else "components_missing"
        reason = note(why, components=", ".join(failed))
        outcomes["crrs"] = (None, {"components": scores}, reason.status, reason)
    else:
        # every component scored: each has a value
        values = {m: v for m, v in scores.items() if v is not None}
        outcomes["crrs"] = (composite(values), detail, RowStatus.OK, None)
    key: RowKey = {
        # (every session has an id: dataset/convert.py makes the missing ones)
        "session_id": cast(str, session.get("session_id")),
        "round": None,
        "method": method,
    }
    return [result_row(key, m, v, s, n, d) for m, (v, d, s, n) in outcomes.items()]


def run(
    sessions: list[dict[str, Any]],
    methods: list[str],
    judge: Judge | None,
    options: dict[str, Any],
) -> list[ResultRow]:
    """Session rows for every (session, method); the judge is not used."""
    return [r for s in sessions for m in methods for r in session_rows(s, m)]


def crrs_band(value: float | None) -> str | None:
    """The interpretation band of a CRRS value (docs/metrics/simulation.md).

    >>> [crrs_band(v) for v in (0.9, 0.85, 0.7, 0.5, 0.49)]
    ['excellent', 'good', 'good', 'acceptable', 'poor']
    """
    if value is None or value < 0.50:
        return None if value is None else "poor"
    return "excellent" if value > 0.85 else "good" if value >= 0.70 else "acceptable"


def _method_summary(values: dict[str, Any], method: str) -> dict[str, Any]:
    """Mean and the documented 95% CI, mean ± 1.96 σ/√n, of each metric."""
    summary = {}
    for metric in IDS:
        scored = list(values[metric].get(method, {}).values())
        ci = stats.normal_ci(scored)
        summary[f"{metric}_avg"] = fmean(scored) if scored else None
        summary[f"{metric}_ci_low"], summary[f"{metric}_ci_high"] = ci or (None, None)
    return summary


def _interval_notes(values: dict[str, Any], methods: list[str]) -> dict[str, Any]:
    """``{method: {"<id>_ci_low": note, "<id>_ci_high": note}}`` for each
    interval left out for having width 0 (every session's value the same:
    ``ci_no_variation``; summary notes)."""
    notes: dict[str, dict[str, Any]] = {}
    for method in methods:
        for metric in IDS:
            scored = list(values[metric].get(method, {}).values())
            if len(scored) >= 2 and stats.normal_ci(scored) is None:
                said = {"code": stats.CI_NO_VARIATION}
                notes.setdefault(method, {}).update(
                    {f"{metric}_ci_low": said, f"{metric}_ci_high": dict(said)}
                )
    return notes


def statistics(values: dict[str, Any], methods: list[str]) -> list[dict[str, Any]]:
    """Welch's t and Cohen's d for every pair of methods and every metric,
    over all scored sessions of each method (unpaired, as the source document ``seeds/simulation-quality-metrics.txt`` compares)."""
    results = []
    for i, a in enumerate(methods):
        for b, metric in ((b, k) for b in methods[i + 1 :] for k in IDS):
            xs, ys = (list(values[metric].get(m, {}).values()) for m in (a, b))
            t, p = stats.welch_t(xs, ys) or (None, None)
            row = dict(metric=metric, a=a, b=b, n_a=len(xs), n_b=len(ys), welch_t=t)
            row.update(welch_p=p, cohens_d=stats.cohens_d(xs, ys))
            results.append({**row, "significant": None if p is None else p < ALPHA})
    return results


def summarize(rows: SummaryRows, methods: list[str]) -> SuiteSummary:
    """Per-method means with 95% normal CIs (null with the summary note
    ``ci_no_variation`` when every session's value is the same: an interval
    of width 0 is never shown as one), CRRS bands and method statistics."""
    rows = row_source.readable(rows)
    values = {metric: session_means(rows, metric, methods) for metric in IDS}
    summary = {method: _method_summary(values, method) for method in methods}
    bands = {method: crrs_band(summary[method]["crrs_avg"]) for method in methods}
    panel = dict(crrs_band=bands, alpha=ALPHA, statistics=statistics(values, methods))
    panel["notes"] = _interval_notes(values, methods)
    return {"summary": summary, "session_values": values, "panel": panel}


def band_rows(panel: dict[str, Any], methods: list[str]) -> list[dict[str, Any]]:
    bands = panel.get("crrs_band", {})
    return [{"method": method, "band": bands.get(method)} for method in methods]


def statistics_rows(panel: dict[str, Any], methods: list[str]) -> list[dict[str, Any]]:
    return list(panel.get("statistics", []))


LABELS = {
    "pas": _l("Persona adherence (PAS)"),
    "bvs": _l("Behavioral variance (BVS)"),
    "ora": _l("Order accuracy (ORA)"),
    "dei": _l("Decision explainability (DEI)"),
    "crrs": _l("Composite realism (CRRS)"),
}
DESCRIPTIONS = {
    "pas": _l("How often the simulated guest's behaviour matches its persona."),
    "bvs": _l("Score of the rate of behaviour changes between messages, best at 0.2."),
    "ora": _l("F1 of the final order's items against the target order."),
    "dei": _l(
        "How much of the guest's decisions its messages explain, by tracking tier."
    ),
    "crrs": _l("0.25 PAS + 0.20 BVS + 0.35 ORA + 0.20 DEI."),
}
CRRS_BANDS = {
    "excellent": _l("excellent (> 0.85)"),
    "good": _l("good (0.70–0.85)"),
    "acceptable": _l("acceptable (0.50–0.70)"),
    "poor": _l("poor (< 0.50)"),
}
UNIT = (0.0, 1.0)


class _Unranked(TypedDict):
    """Keyword arguments of :class:`Metric` for values outside the table."""

    ranked: bool
    in_table: bool


CI_FREE: _Unranked = {"ranked": False, "in_table": False}
METRICS = (
    *(
        Metric(m, LABELS[m], "session", True, UNIT, description=DESCRIPTIONS[m])
        for m in IDS
    ),
    *(Metric(f"{m}_avg", LABELS[m], "summary", True, UNIT, compare=m) for m in IDS),
    # mean ± 1.96 σ/√n can leave [0, 1], so the CI ends carry no bounds.
    *(
        Metric(f"{m}_ci_{end}", LABELS[m], "summary", True, None, **CI_FREE)
        for m in IDS
        for end in ("low", "high")
    ),
)
SUITE = Suite(
    name="simulation",
    label=_l("Guest-simulation quality"),
    description=_l(
        "How realistic simulated restaurant guests are: persona adherence, behavioural variance, order accuracy and explainability."
    ),
    metrics=METRICS,
    run=run,
    summarize=summarize,
    session_fields=("persona", "target_order"),
    response_fields=("sim",),
    order=50,
    methods_note=(
        "For the simulation suite, Welch's t-test (Welch-Satterthwaite degrees "
        "of freedom) and Cohen's d (pooled standard deviation) are also reported."
    ),
    panel=Panel(
        charts=(
            Chart(
                "simulation_parts",
                "bars",
                _l("CRRS and its parts (0–1)"),
                "summary",
                series=series(*(f"{m}_avg" for m in IDS)),
            ),
            Chart(
                "simulation_crrs",
                "bars_ci",
                _l("CRRS per method (mean ± 1.96·σ/√n)"),
                "summary",
                series=(("crrs", "crrs"),),
                y_metric="crrs",
            ),
        ),
        tables=(
            Table(
                "crrs_bands",
                _l("Interpretation of CRRS"),
                (
                    Column("method", _l("Method")),
                    Column("band", _l("Band"), "choice", CRRS_BANDS),
                ),
                band_rows,
            ),
            Table(
                "welch",
                _l("Welch's t-test and Cohen's d between methods"),
                (
                    Column("metric", _l("Metric"), "metric"),
                    Column("a", "A"),
                    Column("b", "B"),
                    Column("welch_t", "t", "score"),
                    Column("welch_p", "p", "p"),
                    Column("cohens_d", "d", "score"),
                    Column("significant", "p < 0.05", "flag"),
                ),
                statistics_rows,
            ),
        ),
    ),
)
