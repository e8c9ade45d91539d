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

import math
import re
import unicodedata
from itertools import pairwise
from statistics import fmean
from typing import TypedDict

from core.status import RowStatus
from metrics import row_source, stats
from metrics.notes import note
from metrics.rows import ResultRow, result_row, session_means
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

IDS = ("pas", "bvs", "ora", "dei", "crrs")
WEIGHTS = {"pas": 0.25, "bvs": 0.20, "ora": 0.35, "dei": 0.20}
EXPECTED = ("exploration", "moods", "ordering", "complete")
SIM_FIELD = {"moods": "mood"}  # persona key -> the sim key it constrains
# The source document's fallback per persona type (docs/metrics/simulation.md):
# "weight sim_field label|label" terms.
FALLBACK = {
    "busy": "0.33 ordering all_at_once, 0.33 exploration no_exploration, 0.34 mood casual|frustrated",
    "curious": "0.5 exploration explores_menu, 0.5 mood enthusiastic|casual",
    "indecisive": "0.5 ordering one_by_one, 0.5 mood confused|casual",
    "family": "0.5 ordering one_by_one, 0.5 exploration explores_menu",
}
TYPE_WORDS = {"professional": "busy", "explorer": "curious", "group": "family"}
TYPE_WORDS |= {kind: kind for kind in FALLBACK}
PEAK, STATES = 0.2, ("ordering", "exploration", "mood")
FILLER = frozenset({"the", "a", "an", "with", "and", "or", "of", "in", "on", "at"})
# DEI tiers, best first: the tracking kinds required (and counted) -> cap.
TIERS = {"order+behavior": 1.0, "attributes": 0.5, "order": 0.5, "basic": 0.2}
ALPHA = 0.05


class Unscored(Exception):
    """A metric that cannot apply (or could not be computed): ``reason`` is
    the row's note, which also gives its status."""

    def __init__(self, code: str, **params):
        self.reason = note(code, **params)
        super().__init__(self.reason.english)


def _label(value):
    if value is None or isinstance(value, bool):
        return value
    return re.sub(r"[\s\-]+", "_", str(value).strip().casefold()) or None


def persona_adherence(persona: dict, messages: list[dict]) -> tuple[float, dict]:
    """PAS = mean over messages of the weighted components (C1..C4, or fallback).

    >>> persona = {"exploration": "menu", "moods": ["happy"], "complete": False}
    >>> persona_adherence(persona, [{"exploration": "menu", "mood": "sad"}])[0]
    0.3333333333333333
    >>> persona_adherence({"type": "curious_explorer"}, [{"mood": "casual"}])[0]
    0.5
    """
    keys = [k for k in EXPECTED if persona.get(k) not in (None, "", [])]
    wanted = {k: persona[k] if k == "moods" else [persona[k]] for k in keys}
    rules = [
        (1 / len(keys), SIM_FIELD.get(k, k), set(map(_label, wanted[k]))) for k in keys
    ]
    detail = dict(mode="attributes", components=keys)
    if not keys:
        rules, detail = _fallback_rules(persona.get("type"))
    scores = [
        math.fsum(w for w, field, ok in rules if _label(sim.get(field)) in ok)
        for sim in messages
    ]
    return fmean(scores), {**detail, "message_scores": scores}


def _fallback_rules(persona_type) -> tuple[list, dict]:
    words = re.split(r"[^a-z]+", str(persona_type or "").casefold())
    kind = next((TYPE_WORDS[w] for w in words if w in TYPE_WORDS), None)
    if kind is None:
        raise Unscored("unknown_persona_type", type=repr(persona_type))
    terms = (term.split() for term in FALLBACK[kind].split(", "))
    rules = [(float(w), field, set(ok.split("|"))) for w, field, ok in terms]
    return rules, dict(mode="fallback", type=kind)


def transition_rate(states: list) -> float:
    """(1/(M−1)) Σ δ(s_i ≠ s_{i−1}).

    >>> transition_rate(["a", "a", "b", "b", "a"])
    0.5
    """
    return sum(a != b for a, b in pairwise(states)) / (len(states) - 1)


def variance_score(tr_avg: float) -> float:
    """Piecewise score peaking at TR_avg = 0.2, clamped to [0, 1].

    >>> [variance_score(tr) for tr in (0.0, 0.1, 0.2, 1.0)]
    [0.0, 0.5, 1.0, 0.0]
    """
    raw = tr_avg / PEAK if tr_avg <= PEAK else 1 - (tr_avg - PEAK) / (1 - PEAK)
    return max(0.0, min(1.0, raw))


def behavioral_variance(messages: list[dict]) -> tuple[float, dict]:
    """BVS from the mean transition rate of ordering, exploration and mood.

    >>> behavioral_variance([{"mood": m} for m in "aaaaab"])[0]
    0.3333333333333333
    """
    if len(messages) < 2:
        raise Unscored("too_few_messages")
    rates = {f: transition_rate([_label(m.get(f)) for m in messages]) for f in STATES}
    tr_avg = fmean(rates.values())
    detail = dict(transition_rates=rates, tr_avg=tr_avg, m=len(messages))
    return variance_score(tr_avg), detail


def normalize_item(item: str) -> str:
    """Casefold, drop apostrophes, other non-letter/digit/mark characters -> space,
    remove filler words, collapse spaces (Unicode-aware: CJK and Hangul stay).

    >>> normalize_item("The Mac-&-Cheese with Bacon!"), normalize_item("一份 回锅肉")
    ('mac cheese bacon', '一份 回锅肉')
    """
    text = re.sub(r"['’]", "", unicodedata.normalize("NFKC", item).casefold())
    text = "".join(c if unicodedata.category(c)[0] in "LNM" else " " for c in text)
    return " ".join(word for word in text.split() if word not in FILLER)


def order_adherence(target: list[str], final: list[str]) -> tuple[float, dict]:
    """ORA = F1 of the item sets T, C = 2|C∩T|/(|C|+|T|) (not the source's "expanded"
    formula; see docs/metrics/simulation.md).

    >>> order_adherence(["Chai Latte", "a scone"], ["chai latte", "cake"])[0]
    0.5
    """
    wanted = {normalize_item(i) for i in target} - {""}
    got = {normalize_item(i) for i in final} - {""}
    if not wanted:
        raise Unscored("target_order_unusable")
    hits = len(got & wanted)
    precision, recall = hits / len(got) if got else 0.0, hits / len(wanted)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    detail = dict(target=sorted(wanted), final=sorted(got), precision=precision)
    return f1, {**detail, "matched": sorted(got & wanted), "recall": recall}


def explainability(messages: list[dict]) -> tuple[float, dict]:
    """DEI: the best tier whose kinds the messages carry, capped per tier.

    >>> explainability([{"tracking": ["order", "behavior"]}, {"tracking": []}])[0]
    0.5
    >>> explainability([{"tracking": ["basic"]}, {"tracking": []}])[0]
    0.1
    """
    if not any(isinstance(m.get("tracking"), list) for m in messages):
        raise Unscored("no_tracking")
    kinds = [{_label(kind) for kind in m.get("tracking") or []} for m in messages]
    union, n = set().union(*kinds), len(messages)
    for tier, cap in TIERS.items():
        if union.issuperset(counted := tier.split("+")):
            ed = sum(kind in k for k in kinds for kind in counted)
            detail = dict(tier=tier, kinds=sorted(union), ed=ed, n=n)
            return min(cap, ed / (len(counted) * n) * cap), detail
    return 0.0, dict(tier="none", kinds=sorted(union), ed=0, n=n)


def composite(scores: dict[str, float]) -> float:
    """CRRS = 0.25 PAS + 0.20 BVS + 0.35 ORA + 0.20 DEI.

    >>> composite({"pas": 1.0, "bvs": 0.5, "ora": 1.0, "dei": 0.0})
    0.7
    """
    return math.fsum(weight * scores[m] for m, weight in WEIGHTS.items())


def _compute(metric: str, session: dict, sims: list[dict]) -> tuple[float, dict]:
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


def _ora(session: dict, sims: list[dict]) -> tuple[float, dict]:
    if (target := session.get("target_order")) is None:
        raise Unscored("missing_field", field="target_order")
    if not target:
        raise Unscored("empty_target_order")
    reported = [s["order"] for s in sims if isinstance(s.get("order"), list)]
    if not reported:
        raise Unscored("no_order")
    return order_adherence(target, reported[-1])


def _outcome(metric: str, session: dict, sims: list) -> tuple:
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


def session_rows(session: dict, method: str) -> list[ResultRow]:
    """The five session-level rows of one (session, method)."""
    responses = (r.get("responses", {}).get(method) for r in session["rounds"])
    sims = [r["sim"] for r in responses if isinstance(r, dict) and r.get("sim")]
    outcomes = {m: _outcome(m, session, sims) for m in WEIGHTS}
    failed = [m for m, o in outcomes.items() if o[2] != RowStatus.OK]
    scores = {m: o[0] for m, o in outcomes.items()}
    detail = {"components": scores, "weights": WEIGHTS}
    if failed:  # CRRS needs all four; it cannot apply if one of them cannot
        cannot = all(outcomes[m][2] == RowStatus.NOT_APPLICABLE for m in failed)
        why = "components_not_applicable" if cannot else "components_missing"
        reason = note(why, components=", ".join(failed))
        outcomes["crrs"] = (None, {"components": scores}, reason.status, reason)
    else:
        outcomes["crrs"] = (composite(scores), detail, RowStatus.OK, None)
    key = {"session_id": session.get("session_id"), "round": None, "method": method}
    return [result_row(key, m, v, s, n, d) for m, (v, d, s, n) in outcomes.items()]


def run(
    sessions: list[dict], methods: list[str], judge, options: dict
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


def _method_summary(values: dict, method: str) -> dict:
    """Mean and the documented 95% CI, mean ± 1.96 σ/√n, of each metric."""
    summary = {}
    for metric in IDS:
        scored = list(values[metric].get(method, {}).values())
        ci = stats.normal_ci(scored)
        summary[f"{metric}_avg"] = fmean(scored) if scored else None
        summary[f"{metric}_ci_low"], summary[f"{metric}_ci_high"] = ci or (None, None)
    return summary


def statistics(values: dict, methods: list[str]) -> list[dict]:
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
    """Per-method means with 95% normal CIs, CRRS bands and method statistics."""
    rows = row_source.readable(rows)
    values = {metric: session_means(rows, metric, methods) for metric in IDS}
    summary = {method: _method_summary(values, method) for method in methods}
    bands = {method: crrs_band(summary[method]["crrs_avg"]) for method in methods}
    panel = dict(crrs_band=bands, alpha=ALPHA, statistics=statistics(values, methods))
    return {"summary": summary, "session_values": values, "panel": panel}


def band_rows(panel: dict, methods: list[str]) -> list[dict]:
    bands = panel.get("crrs_band", {})
    return [{"method": method, "band": bands.get(method)} for method in methods]


def statistics_rows(panel: dict, methods: list[str]) -> list[dict]:
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
    description=_l("How realistic simulated restaurant guests are: persona adherence, behavioural variance, order accuracy and explainability."),
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
            Chart("simulation_parts", "bars", _l("CRRS and its parts (0–1)"), "summary",
                  series=series(*(f"{m}_avg" for m in IDS))),
            Chart("simulation_crrs", "bars_ci", _l("CRRS per method (mean ± 1.96·σ/√n)"),
                  "summary", series=(("crrs", "crrs"),), y_metric="crrs"),
        ),
        tables=(
            Table("crrs_bands", _l("Interpretation of CRRS"), (
                Column("method", _l("Method")),
                Column("band", _l("Band"), "choice", CRRS_BANDS),
            ), band_rows),
            Table("welch", _l("Welch's t-test and Cohen's d between methods"), (
                Column("metric", _l("Metric"), "metric"),
                Column("a", "A"), Column("b", "B"),
                Column("welch_t", "t", "score"), Column("welch_p", "p", "p"),
                Column("cohens_d", "d", "score"),
                Column("significant", "p < 0.05", "flag"),
            ), statistics_rows),
        ),
    ),
)  # fmt: skip
