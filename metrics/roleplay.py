"""Roleplay suite (needs a judge): the JERA questionnaire and ALMP.

Both are session-level, one value per (session, method); the judge reads that
method's whole scene: every round's user message and the method's reply.

* ``jera``: ``prompts/jera_v1.txt``, 30 Likert items (1..10), ten each for
  immersivity, consistency and creativity, given the attribute list (or
  "(none)"), the sample dialogues and the scene. The strict JSON reply is
  parsed by ``verdicts.parse_jera``. Rows ``jera`` (30..300) and
  ``jera_<scale>`` (10..100); with several samples, the mean of the scored ones.
* ``almp``: ``almp_extract_v1`` (attributes stated in the scene) and
  ``almp_infer_v1`` (attributes implied) each return a JSON list; R is their
  union. These two prompts see only the scene, never the attribute list or
  the sample dialogues, so what they report comes from the method's replies.
  ``almp = matches / |A|`` (see ``match``).

A session without attributes gets an ``unscored`` almp row even when no judge
is configured (no judge could score it); otherwise no judge means
``not_configured`` rows.
"""

from __future__ import annotations

from itertools import islice
from statistics import fmean, pstdev

from rapidfuzz import fuzz

from metrics import alignment, lexicon, stats, style
from metrics.registry import Metric
from metrics.rows import result_row
from verdicts import JERA_SCALES, JudgeItem, load_prompt

PROMPTS = {
    "jera": "jera_v1",
    "almp_extract": "almp_extract_v1",
    "almp_infer": "almp_infer_v1",
}
JERA_ROWS = ("jera", *(f"jera_{scale}" for scale in JERA_SCALES))
FUZZY_THRESHOLD = 85  # rapidfuzz ratio must exceed it
PANEL_SESSIONS = 50  # ALMP drill-down entries per method on the dashboard
NO_JUDGE = "no judge configured"
NO_ATTRIBUTES = "session lacks attributes"

METRICS = (
    Metric("jera", "roleplay", "session", True, (30.0, 300.0), needs_judge=True),
    *(
        Metric(f"jera_{s}", "roleplay", "session", True, (10.0, 100.0), True)
        for s in JERA_SCALES
    ),
    Metric("almp", "roleplay", "session", True, (0.0, 1.0), needs_judge=True),
    Metric(
        "jera_avg", "roleplay", "summary", True, (30.0, 300.0), True, compare="jera"
    ),
    *(
        Metric(f"jera_{s}_avg", "roleplay", "summary", True, (10.0, 100.0), True)
        for s in JERA_SCALES
    ),
    Metric("almp_avg", "roleplay", "summary", True, (0.0, 1.0), True, compare="almp"),
)


# -- matching ---------------------------------------------------------------
def _norm(text: str) -> str:
    return " ".join(text.split()).lower()


def wordnet_senses(phrase: str, synsets=lexicon.synsets) -> frozenset[str]:
    """Synsets of the whole phrase as a WordNet collocation ("ice cream"),
    else of its head word, taken to be the last word ("very shy" -> "shy").

    >>> toy = {"shy": frozenset({"shy.s.01"})}
    >>> wordnet_senses("very shy", lambda p: toy.get(p, frozenset()))
    frozenset({'shy.s.01'})
    """
    words = phrase.split()
    senses = synsets(phrase) if words else frozenset()
    if not senses and len(words) > 1:
        senses = synsets(words[-1])
    return senses


def match(attribute: str, observed: list[str], synsets=lexicon.synsets):
    """``(r, reason)`` for the first rule that matches ``attribute``, else None.

    Rules in order: exact (case-insensitive, whitespace stripped and
    collapsed); fuzzy (rapidfuzz ``ratio`` > 85 on those lower-cased forms,
    best r); WordNet (a shared synset, the alphabetically first one named).

    >>> match("adventurous", ["shy", "adventerous"], lambda phrase: frozenset())
    ('adventerous', 'fuzzy 90.9')
    """
    wanted = _norm(attribute)
    forms = [(r, _norm(r)) for r in observed]
    for r, form in forms:
        if form == wanted:
            return r, "exact"
    ratios = [(fuzz.ratio(wanted, form), r) for r, form in forms]
    best = max(ratios, key=lambda pair: pair[0], default=None)  # first of ties
    if best and best[0] > FUZZY_THRESHOLD:
        return best[1], f"fuzzy {round(best[0], 1):g}"
    senses = wordnet_senses(wanted, synsets)
    if not senses:
        return None
    for r, form in forms:
        shared = senses & wordnet_senses(form, synsets)
        if shared:
            return r, f"wordnet {min(shared)}"
    return None


def match_attributes(attributes: list, observed: list, synsets=lexicon.synsets):
    """ALMP of attribute list A against the observed set R: matched pairs with
    their reasons, missed attributes, and ``value = matches / |A|``.

    >>> no_wordnet = lambda phrase: frozenset()
    >>> result = match_attributes(["Cheerful", "stubborn"], ["cheerful "], no_wordnet)
    >>> result["value"], result["matched"][0]["reason"], result["missed"]
    (0.5, 'exact', ['stubborn'])
    """
    matched, missed = [], []
    for attribute in attributes:
        found = match(attribute, observed, synsets)
        if found:
            matched.append(
                {"attribute": attribute, "observed": found[0], "reason": found[1]}
            )
        else:
            missed.append(attribute)
    value = len(matched) / len(attributes) if attributes else None
    return {"value": value, "matched": matched, "missed": missed}


# -- judge items and rows -----------------------------------------------------
def attributes_of(session: dict) -> list[str]:
    return [a.strip() for a in session.get("attributes") or () if a.strip()]


def scene(session: dict, method: str) -> str:
    """The method's whole scene: every user message and its reply."""
    return alignment.history(session, method, len(session["rounds"]))


def judge_items(session: dict, method: str, samples: int) -> dict[str, list]:
    """``{mode: [JudgeItem per sample]}``; ALMP modes only with attributes."""
    attributes = attributes_of(session)
    fields = {
        "attributes": "\n".join(f"- {a}" for a in attributes) or "(none)",
        "sample_dialogues": style.sample_text(session) or "(none)",
        "scene": scene(session, method),
    }
    modes = list(PROMPTS) if attributes else ["jera"]
    items = {}
    for mode in modes:
        messages = tuple(load_prompt(PROMPTS[mode]).render(**fields))
        items[mode] = [
            JudgeItem(mode, PROMPTS[mode], messages, s) for s in range(samples)
        ]
    return items


_row = result_row


def _failure(labelled: list[tuple[str, object]]) -> tuple[str, str, str | None]:
    """Status, note and raw text of judge calls none of which scored."""
    mode, first = next((m, o) for m, o in labelled if o.status != "ok")
    unscored = any(o.status == "unscored" for _, o in labelled)
    return "unscored" if unscored else "error", f"{mode}: {first.note}", first.raw


def jera_rows(key: dict, outcomes: list) -> list[dict]:
    """The four JERA rows of one (session, method) from its judge samples.

    >>> from types import SimpleNamespace as Outcome
    >>> parts = dict.fromkeys(JERA_SCALES, 70.0)
    >>> ok = Outcome(status="ok", verdict={"score": 210.0, "parts": parts})
    >>> [row["value"] for row in jera_rows({"session_id": "s"}, [ok])]
    [210.0, 70.0, 70.0, 70.0]
    """
    scored = [o.verdict for o in outcomes if o.status == "ok"]
    detail = {
        "prompt_version": PROMPTS["jera"],
        "samples": [o.verdict["score"] if o.verdict else None for o in outcomes],
    }
    if not scored:
        status, note, raw = _failure([("jera", o) for o in outcomes])
        detail["raw"] = raw
        return [_row(key, m, None, status, note, detail) for m in JERA_ROWS]
    totals = [verdict["score"] for verdict in scored]
    detail.update(reasoning=scored[0].get("reasoning"), spread=pstdev(totals))
    rows = [_row(key, "jera", fmean(totals), detail=detail)]
    for scale in JERA_SCALES:
        value = fmean(verdict["parts"][scale] for verdict in scored)
        rows.append(_row(key, f"jera_{scale}", value))
    return rows


def _union(*lists: list[str]) -> list[str]:
    seen: dict[str, str] = {}
    for attribute in (a for items in lists for a in items):
        seen.setdefault(_norm(attribute), attribute)
    return list(seen.values())


def almp_row(key: dict, attributes: list[str], extracted: list, inferred: list):
    """Per sample with both calls scored: R = union, ALMP; the row is the mean."""
    results = []
    for ext, inf in zip(extracted, inferred, strict=True):
        if ext.status == inf.status == "ok":
            found = (ext.verdict.get("items", []), inf.verdict.get("items", []))
            result = match_attributes(attributes, _union(*found))
            results.append({**result, "extracted": found[0], "inferred": found[1]})
    versions = [PROMPTS["almp_extract"], PROMPTS["almp_infer"]]
    if not results:
        labelled = [("almp_extract", o) for o in extracted]
        status, note, raw = _failure(labelled + [("almp_infer", o) for o in inferred])
        detail = {"prompt_versions": versions, "raw": raw}
        return _row(key, "almp", None, status, note, detail)
    available, reason = lexicon.wordnet_status()
    detail = {**results[0], "wordnet": available, "prompt_versions": versions}
    detail["samples"] = [result["value"] for result in results]
    note = None if available else f"synonym matching unavailable: {reason}"
    return _row(key, "almp", fmean(detail["samples"]), note=note, detail=detail)


def run(sessions: list[dict], methods: list[str], judge, options: dict) -> list:
    """Every judge item of the chunk goes out in one ``judge.evaluate`` batch."""
    samples = int(options.get("samples", 1))
    rows, plan, batch = [], [], []
    for session in sessions:
        attributes = attributes_of(session)
        for method in methods:
            key = {"session_id": session["session_id"], "round": None, "method": method}
            if not attributes:
                rows.append(_row(key, "almp", None, "unscored", NO_ATTRIBUTES))
            if judge is None:
                metrics = JERA_ROWS + (("almp",) if attributes else ())
                rows += [
                    _row(key, m, None, "not_configured", NO_JUDGE) for m in metrics
                ]
                continue
            items = judge_items(session, method, samples)
            plan.append((key, attributes, {m: len(v) for m, v in items.items()}))
            batch += [item for mode_items in items.values() for item in mode_items]
    outcomes = iter(judge.evaluate(batch) if batch else [])
    for key, attributes, counts in plan:
        # The batch is in plan order, so each mode takes its next `count`.
        got = {mode: list(islice(outcomes, n)) for mode, n in counts.items()}
        rows += jera_rows(key, got["jera"])
        if attributes:
            rows.append(
                almp_row(key, attributes, got["almp_extract"], got["almp_infer"])
            )
    return rows


# -- summary ----------------------------------------------------------------
def _almp_panel(rows: list[dict], methods: list[str]) -> dict:
    panel = {method: [] for method in methods}
    for row in rows:
        entries = panel.get(row["method"])
        if row["metric"] != "almp" or row["status"] != "ok" or entries is None:
            continue
        if len(entries) < PANEL_SESSIONS:
            detail = row["detail"]
            entries.append(
                {
                    "session_id": row["session_id"],
                    "matched": detail["matched"],
                    "missed": detail["missed"],
                }
            )
    return panel


def summarize(rows: list[dict], methods: list[str]) -> dict:
    """Means over sessions with t-intervals (``panels.roleplay.ci``)."""
    metrics = (*JERA_ROWS, "almp")
    values = {metric: style.session_means(rows, metric) for metric in metrics}
    summary, cis, jera_panel = {}, {}, {}
    for method in methods:
        cis[method] = {
            m: stats.mean_ci(list(values[m].get(method, {}).values())) for m in metrics
        }
        summary[method] = {f"{m}_avg": ci["mean"] for m, ci in cis[method].items()}
        jera_panel[method] = {s: cis[method][f"jera_{s}"]["mean"] for s in JERA_SCALES}
    almp = _almp_panel(rows, methods)
    return {
        "summary": summary,
        "session_values": {"jera": values["jera"], "almp": values["almp"]},
        "panels": {"roleplay": {"jera": jera_panel, "almp": almp, "ci": cis}},
    }
