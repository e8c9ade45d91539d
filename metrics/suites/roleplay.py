"""Roleplay suite (needs a judge): the JERA questionnaire and ALMP.

Both are session-level, one value per (session, method); the judge reads that
method's whole scene: every round's user message and the method's reply. The
metric card is ``docs/metrics/roleplay.md``.

* ``jera``: ``prompts/jera_v1.txt``, 30 Likert items (1..10), ten each for
  immersivity, consistency and creativity, given the attribute list (or
  "(none)"), the sample dialogues and the scene. The strict JSON reply is
  parsed by :func:`parse_jera`. Rows ``jera`` (30..300) and
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

from functools import partial
from statistics import fmean, pstdev
from typing import Any

from core.status import RowStatus
from metrics import lexicon, row_source
from metrics.columns import RowColumns
from metrics.dialogue import History, sample_text, user_message
from metrics.judging import Batch, Verdict, judge_items, strict_json, template_chars
from metrics.notes import note
from metrics.rows import ResultRow, result_row, session_summary
from metrics.suite import (
    Chart,
    Column,
    Format,
    JudgeMode,
    JudgeUse,
    Metric,
    Panel,
    Suite,
    SuiteSummary,
    SummaryRows,
    Table,
    _l,
)

JERA_SCALES = ("immersivity", "consistency", "creativity")
JERA_ITEMS_PER_SCALE = 10
ALMP_MAX_ATTRIBUTE_CHARS = 80
JERA_ROWS = ("jera", *(f"jera_{scale}" for scale in JERA_SCALES))
FUZZY_THRESHOLD = 85  # rapidfuzz ratio must exceed it
PANEL_SESSIONS = 50  # ALMP drill-down entries per method on the dashboard
NO_JUDGE = note("no_judge")
NO_ATTRIBUTES = note("missing_field", field="attributes")
EMPTY_ATTRIBUTES = note("empty_field", field="attributes")  # present, but []


# -- verdicts -----------------------------------------------------------------
def _likert(answer) -> bool:
    # type() rather than isinstance(): JSON true/false must not count as 1/0.
    return type(answer) is int and 1 <= answer <= 10


def parse_jera(text: str) -> Verdict | None:
    """``{"reasoning"?: str, "immersivity": [10 ints], "consistency": [...],
    "creativity": [...]}`` with every answer an integer 1..10; the score is
    the total (30..300), parts the three sub-scale sums (10..100). Anything
    else (29 answers, an 11, words, extra keys or prose) is unparseable."""
    data = strict_json(text)
    if not isinstance(data, dict) or set(data) - {"reasoning"} != set(JERA_SCALES):
        return None
    reasoning = data.get("reasoning")
    if reasoning is not None and not isinstance(reasoning, str):
        return None
    parts = {}
    for scale in JERA_SCALES:
        answers = data[scale]
        if not isinstance(answers, list) or len(answers) != JERA_ITEMS_PER_SCALE:
            return None
        if not all(_likert(answer) for answer in answers):
            return None
        parts[scale] = float(sum(answers))
    return Verdict(sum(parts.values()), parts, reasoning=reasoning)


def parse_almp(text: str) -> Verdict | None:
    """A JSON list of short attribute strings (``[]`` allowed); the score is
    how many distinct (case-insensitive) attributes it holds."""
    data = strict_json(text)
    if not isinstance(data, list) or not all(isinstance(x, str) for x in data):
        return None
    attributes = [" ".join(x.split()) for x in data]
    if any(not a or len(a) > ALMP_MAX_ATTRIBUTE_CHARS for a in attributes):
        return None
    unique: dict[str, str] = {}
    for attribute in attributes:
        unique.setdefault(attribute.casefold(), attribute)  # first spelling wins
    return Verdict(float(len(unique)), items=list(unique.values()))


JERA = JudgeMode("jera", "jera_v1", parse_jera)
ALMP_EXTRACT = JudgeMode("almp_extract", "almp_extract_v1", parse_almp)
ALMP_INFER = JudgeMode("almp_infer", "almp_infer_v1", parse_almp)
MODES = (JERA, ALMP_EXTRACT, ALMP_INFER)


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


NEGATIONS = ("un", "in", "im", "il", "ir", "dis", "non", "non-", "not ", "not-")


def negation_of(a: str, b: str) -> bool:
    """One form is the other with a negation prefix ("patient" and
    "impatient", ratio 87.5): opposites, never a fuzzy match.

    >>> negation_of("patient", "impatient"), negation_of("honest", "dishonest")
    (True, True)
    >>> negation_of("adventurous", "adventerous")
    False
    """
    shorter, longer = sorted((a, b), key=len)
    return any(longer == prefix + shorter for prefix in NEGATIONS)


def match(attribute: str, observed: list[str], synsets=lexicon.synsets):
    """``(r, reason)`` for the first rule that matches ``attribute``, else None.

    Rules in order: exact (case-insensitive, whitespace stripped and
    collapsed); fuzzy (rapidfuzz ``ratio`` > 85 on those lower-cased forms,
    best r; never a form that is the other with a negation prefix); WordNet (a shared synset, the alphabetically first one named).

    >>> match("adventurous", ["shy", "adventerous"], lambda phrase: frozenset())
    ('adventerous', 'fuzzy 90.9')
    """
    wanted = _norm(attribute)
    forms = [(r, _norm(r)) for r in observed]
    for r, form in forms:
        if form == wanted:
            return r, "exact"
    from rapidfuzz import fuzz

    ratios = [
        (fuzz.ratio(wanted, form), r)
        for r, form in forms
        if not negation_of(wanted, form)
    ]
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


def scene(session: dict, method: str, budget: int | None = None) -> History:
    """The method's scene, every user message and its reply, within the
    history budget (the earliest turns are dropped first)."""
    window = History(budget)
    for round_ in session["rounds"]:
        response = round_["responses"][method]
        window.add(user_message(round_, response), response["text"])
    return window


def request_items(
    session: dict, method: str, samples: int, scene_text: str | None = None
) -> dict[str, list]:
    """``{mode name: [JudgeItem per sample]}``; ALMP modes only with attributes."""
    attributes = attributes_of(session)
    fields = {
        "attributes": "\n".join(f"- {a}" for a in attributes) or "(none)",
        "sample_dialogues": sample_text(session) or "(none)",
        "scene": scene(session, method).text() if scene_text is None else scene_text,
    }
    modes = MODES if attributes else (JERA,)
    return {mode.name: judge_items(mode, samples, **fields) for mode in modes}


_row = result_row
OK, UNSCORED, ERROR = RowStatus.OK, RowStatus.UNSCORED, RowStatus.ERROR


def _failure(labelled: list[tuple[str, Any]]) -> tuple[str, Any, str | None, str]:
    """Status, note, raw text and mode of judge calls none of which scored."""
    mode, first = next((m, o) for m, o in labelled if o.status != OK)
    unscored = any(o.status == UNSCORED for _, o in labelled)
    return UNSCORED if unscored else ERROR, first.note, first.raw, mode


def jera_rows(key: dict, outcomes: list) -> list[ResultRow]:
    """The four JERA rows of one (session, method) from its judge samples.

    >>> from types import SimpleNamespace as Outcome
    >>> parts = dict.fromkeys(JERA_SCALES, 70.0)
    >>> ok = Outcome(status="ok", verdict={"score": 210.0, "parts": parts})
    >>> [row["value"] for row in jera_rows({"session_id": "s"}, [ok])]
    [210.0, 70.0, 70.0, 70.0]
    """
    scored = [o.verdict for o in outcomes if o.status == OK]
    detail: dict[str, Any] = {  # JSON-ready
        "prompt_version": JERA.prompt,
        "samples": [o.verdict["score"] if o.verdict else None for o in outcomes],
    }
    if not scored:
        status, reason, raw, mode = _failure([("jera", o) for o in outcomes])
        detail.update(raw=raw, failed_mode=mode)
        return [_row(key, m, None, status, reason, detail) for m in JERA_ROWS]
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


def almp_row(
    key: dict, attributes: list[str], extracted: list, inferred: list
) -> ResultRow:
    """Per sample with both calls scored: R = union, ALMP; the row is the mean."""
    results = []
    for ext, inf in zip(extracted, inferred, strict=True):
        if ext.status == inf.status == OK:
            found = (ext.verdict.get("items", []), inf.verdict.get("items", []))
            result = match_attributes(attributes, _union(*found))
            results.append({**result, "extracted": found[0], "inferred": found[1]})
    versions = [ALMP_EXTRACT.prompt, ALMP_INFER.prompt]
    if not results:
        labelled = [("almp_extract", o) for o in extracted]
        failure = _failure(labelled + [("almp_infer", o) for o in inferred])
        status, reason, raw, mode = failure
        detail: dict[str, Any] = {
            "prompt_versions": versions,
            "raw": raw,
            "failed_mode": mode,
        }
        return _row(key, "almp", None, status, reason, detail)
    available, reason = lexicon.wordnet_status()
    detail = {**results[0], "wordnet": available, "prompt_versions": versions}
    detail["samples"] = [result["value"] for result in results]
    if not available:
        detail["wordnet_problem"] = reason
    unavailable = None if available else note("no_wordnet")
    return _row(key, "almp", fmean(detail["samples"]), note=unavailable, detail=detail)


def run(
    sessions: list[dict], methods: list[str], judge, options: dict
) -> list[ResultRow]:
    """Judge items go out in bounded batches (``metrics.judging.Batch``)."""
    samples, budget = int(options.get("samples", 1)), options.get("history_chars")
    rows: list[ResultRow] = []
    batch = Batch(judge)
    for session in sessions:
        attributes = attributes_of(session)
        for method in methods:
            key = {"session_id": session["session_id"], "round": None, "method": method}
            if not attributes:
                said = (
                    NO_ATTRIBUTES
                    if session.get("attributes") is None
                    else EMPTY_ATTRIBUTES
                )
                rows.append(_row(key, "almp", None, note=said))
            if judge is None:
                metrics = JERA_ROWS + (("almp",) if attributes else ())
                rows += [_row(key, m, None, note=NO_JUDGE) for m in metrics]
                continue
            window = scene(session, method, budget)
            items = request_items(session, method, samples, window.text())
            flat = [item for mode_items in items.values() for item in mode_items]
            build = partial(_scene_rows, key, attributes, samples, window.dropped)
            rows += batch.add(flat, build)
    return rows + batch.flush()


def estimate(session: dict, methods: list[str], window: int | None) -> tuple[int, int]:
    """Judge calls and prompt characters of one session, per sample: JERA,
    and the two ALMP requests when the session lists attributes."""
    modes = MODES if attributes_of(session) else (JERA,)
    context = len(sample_text(session) or "") + sum(map(len, attributes_of(session)))
    calls = chars = 0
    for method in methods:
        turns = (round_["responses"][method] for round_ in session["rounds"])
        scene_chars = sum(
            len(r.get("user_message") or "") + len(r["text"]) + 24 for r in turns
        )
        scene_chars += sum(len(round_["user_message"]) for round_ in session["rounds"])
        shown = scene_chars if window is None else min(scene_chars, window)
        calls += len(modes)
        chars += sum(template_chars(mode) + shown + context for mode in modes)
    return calls, chars


def _scene_rows(key, attributes, samples: int, truncated: int, outcomes: list) -> list:
    """Rows of one (session, method) from its outcomes, in mode order."""
    got = {"jera": outcomes[:samples], "almp_extract": outcomes[samples : 2 * samples],
           "almp_infer": outcomes[2 * samples :]}  # fmt: skip
    rows = jera_rows(key, got["jera"])
    if attributes:
        rows.append(almp_row(key, attributes, got["almp_extract"], got["almp_infer"]))
    if truncated:
        for row in rows:
            detail = row.get("detail")
            if detail is not None:
                detail["history_truncated"] = truncated
    return rows


# -- summary ----------------------------------------------------------------
def _almp_panel(rows: RowColumns, methods: list[str]) -> dict[str, list[dict]]:
    panel: dict[str, list[dict]] = {method: [] for method in methods}
    for row in rows.dicts(rows.where("almp", scored=False, status=OK)):
        entries = panel.get(row["method"])
        if entries is None:
            continue
        if len(entries) < PANEL_SESSIONS:
            detail = row["detail"]
            assert detail is not None  # an ok almp row always carries its matches
            entries.append(
                {
                    "session_id": row["session_id"],
                    "matched": detail["matched"],
                    "missed": detail["missed"],
                }
            )
    return panel


def summarize(rows: SummaryRows, methods: list[str]) -> SuiteSummary:
    """Means over sessions with t-intervals (panel ``ci``)."""
    rows = row_source.all_rows(rows, details=True)
    found = session_summary(rows, (*JERA_ROWS, "almp"), methods, streamed=False)
    values, summary, cis = found.values, found.summary, found.intervals
    jera_panel = {
        method: {s: cis[method][f"jera_{s}"]["mean"] for s in JERA_SCALES}
        for method in methods
    }
    almp = _almp_panel(rows, methods)
    return {
        "summary": summary,
        "session_values": {"jera": values["jera"], "almp": values["almp"]},
        "panel": {"jera": jera_panel, "almp": almp, "ci": cis},
    }


def almp_table_rows(panel: dict, methods: list[str]) -> list[dict]:
    """One row per (method, session) of the ALMP drill-down entries.

    >>> entry = {"session_id": "s", "missed": ["shy"], "matched": [
    ...     {"attribute": "kind", "observed": "warm", "reason": "wordnet kind.a.01"}]}
    >>> almp_table_rows({"almp": {"M": [entry]}}, ["M"])[0]["matched"]
    'kind ≈ warm (wordnet kind.a.01)'
    """
    rows = []
    for method in methods:
        for entry in panel.get("almp", {}).get(method, []):
            matched = ", ".join(
                f"{m['attribute']} ≈ {m['observed']} ({m['reason']})"
                for m in entry["matched"]
            )
            rows.append({"method": method, "session_id": entry["session_id"],
                         "matched": matched or "—",
                         "missed": ", ".join(entry["missed"]) or "—"})  # fmt: skip
    return rows


JERA_LABELS = {
    "immersivity": _l("Immersivity"),
    "consistency": _l("Consistency"),
    "creativity": _l("Creativity"),
}
JERA_TOTAL, JERA_SCALE, UNIT = (30.0, 300.0), (10.0, 100.0), (0.0, 1.0)
METRICS = (
    Metric(
        "jera",
        _l("Roleplay ability (JERA)"),
        "session",
        True,
        JERA_TOTAL,
        needs_judge=True,
        agreement="interval",
        description=_l(
            "Sum of 30 Likert answers (1-10) of the judge on immersivity, consistency and creativity."
        ),
    ),
    *(
        Metric(
            f"jera_{s}",
            label,
            "session",
            True,
            JERA_SCALE,
            needs_judge=True,
            description=_l("Sum of the ten Likert answers (1-10) of one JERA scale."),
        )
        for s, label in JERA_LABELS.items()
    ),
    Metric(
        "almp",
        _l("Attribute match (ALMP)"),
        "session",
        True,
        UNIT,
        Format.RATE,
        needs_judge=True,
        agreement="interval",
        description=_l(
            "Share of the session's attributes that the judge observed or inferred in the method's scene."
        ),
    ),
    Metric(
        "jera_avg",
        _l("Roleplay ability (JERA)"),
        "summary",
        True,
        JERA_TOTAL,
        needs_judge=True,
        compare="jera",
    ),
    *(
        Metric(f"jera_{s}_avg", label, "summary", True, JERA_SCALE, needs_judge=True)
        for s, label in JERA_LABELS.items()
    ),
    Metric(
        "almp_avg",
        _l("Attribute match (ALMP)"),
        "summary",
        True,
        UNIT,
        Format.RATE,
        needs_judge=True,
        compare="almp",
    ),
)

SUITE = Suite(
    name="roleplay",
    label=_l("Roleplay judge (JERA, ALMP)"),
    description=_l("An LLM judge answers the JERA questionnaire about each method's scene and lists the character attributes it shows (ALMP)."),
    metrics=METRICS,
    run=run,
    summarize=summarize,
    session_fields=("attributes", "sample_dialogues"),
    judge=JudgeUse.REQUIRED,
    modes=MODES,
    estimate=estimate,
    summary_details=True,  # the ALMP panel lists each session's matches
    order=40,
    panel=Panel(
        charts=(
            Chart("roleplay_jera", "stacked_bars", _l("JERA by sub-score (10–100 each)"),
                  "panel.jera", series=tuple((s, f"jera_{s}") for s in JERA_SCALES),
                  empty=_l("No JERA scores: JERA needs a configured judge, and every judge reply for it failed or could not be parsed.")),
            Chart("roleplay_almp", "bars_ci", _l("ALMP: share of the attribute list observed"),
                  "panel.ci", series=(("almp", "almp"),), y_metric="almp",
                  empty=_l("No ALMP scores: ALMP needs a configured judge and an attribute list in the session (field attributes).")),
        ),
        tables=(
            Table("almp_sessions", _l("ALMP per session"), (
                Column("method", _l("Method")),
                Column("session_id", _l("Session")),
                Column("matched", _l("Matched attributes")),
                Column("missed", _l("Missed attributes")),
            ), almp_table_rows),
        ),
        empty=_l("No roleplay scores: JERA and ALMP need a configured judge, and ALMP needs an attribute list in the session."),
    ),
)  # fmt: skip
