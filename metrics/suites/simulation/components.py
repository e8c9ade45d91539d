"""The five guest-simulation components of one session, each from its guest
messages: PAS, BVS, ORA, DEI and the composite CRRS
(``docs/metrics/simulation.md``, ``seeds/simulation-quality-metrics.txt``)."""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from itertools import pairwise
from statistics import fmean
from typing import Any

from metrics.notes import note

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

    def __init__(self, code: str, **params: object) -> None:
        self.reason = note(code, **params)
        super().__init__(self.reason.english)


Label = str | bool | None  # a field's value as compared
Rule = tuple[float, str, set[Label]]  # (weight, sim field, the labels that count)


def _label(value: object) -> Label:
    if value is None or isinstance(value, bool):
        return value
    return re.sub(r"[\s\-]+", "_", str(value).strip().casefold()) or None


def persona_adherence(
    persona: dict[str, Any], messages: list[dict[str, Any]]
) -> tuple[float, dict[str, Any]]:
    """PAS = mean over messages of the weighted components (C1..C4, or fallback).

    >>> persona = {"exploration": "menu", "moods": ["happy"], "complete": False}
    >>> persona_adherence(persona, [{"exploration": "menu", "mood": "sad"}])[0]
    0.3333333333333333
    >>> persona_adherence({"type": "curious_explorer"}, [{"mood": "casual"}])[0]
    0.5
    """
    keys = [k for k in EXPECTED if persona.get(k) not in (None, "", [])]
    wanted = {k: persona[k] if k == "moods" else [persona[k]] for k in keys}
    rules: list[Rule] = [
        (1 / len(keys), SIM_FIELD.get(k, k), set(map(_label, wanted[k]))) for k in keys
    ]
    detail: dict[str, Any] = dict(mode="attributes", components=keys)
    if not keys:
        rules, detail = _fallback_rules(persona.get("type"))
    scores = [
        math.fsum(w for w, field, ok in rules if _label(sim.get(field)) in ok)
        for sim in messages
    ]
    return fmean(scores), {**detail, "message_scores": scores}


def _fallback_rules(persona_type: object) -> tuple[list[Rule], dict[str, Any]]:
    words = re.split(r"[^a-z]+", str(persona_type or "").casefold())
    kind = next((TYPE_WORDS[w] for w in words if w in TYPE_WORDS), None)
    if kind is None:
        raise Unscored("unknown_persona_type", type=repr(persona_type))
    terms = (term.split() for term in FALLBACK[kind].split(", "))
    rules: list[Rule] = [
        (float(w), field, set[Label](ok.split("|"))) for w, field, ok in terms
    ]
    return rules, dict(mode="fallback", type=kind)


def transition_rate(states: Sequence[Label]) -> float:
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


def behavioral_variance(messages: list[dict[str, Any]]) -> tuple[float, dict[str, Any]]:
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


def order_adherence(
    target: list[str], final: list[str]
) -> tuple[float, dict[str, Any]]:
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


def explainability(messages: list[dict[str, Any]]) -> tuple[float, dict[str, Any]]:
    """DEI: the best tier whose kinds the messages carry, capped per tier.

    >>> explainability([{"tracking": ["order", "behavior"]}, {"tracking": []}])[0]
    0.5
    >>> explainability([{"tracking": ["basic"]}, {"tracking": []}])[0]
    0.1
    """
    if not any(isinstance(m.get("tracking"), list) for m in messages):
        raise Unscored("no_tracking")
    kinds = [{_label(kind) for kind in m.get("tracking") or []} for m in messages]
    union, n = set[Label]().union(*kinds), len(messages)
    # (a bool or None among string labels raises here: _outcome's error row)
    named = sorted(union)  # type: ignore[type-var]
    for tier, cap in TIERS.items():
        if union.issuperset(counted := tier.split("+")):
            ed = sum(kind in k for k in kinds for kind in counted)
            detail = dict(tier=tier, kinds=named, ed=ed, n=n)
            return min(cap, ed / (len(counted) * n) * cap), detail
    return 0.0, dict(tier="none", kinds=named, ed=0, n=n)


def composite(scores: dict[str, float]) -> float:
    """CRRS = 0.25 PAS + 0.20 BVS + 0.35 ORA + 0.20 DEI.

    >>> composite({"pas": 1.0, "bvs": 0.5, "ora": 1.0, "dei": 0.0})
    0.7
    """
    return math.fsum(weight * scores[m] for m, weight in WEIGHTS.items())
