"""Roleplay suite (needs a judge): the JERA questionnaire and ALMP.

Both are session-level, one value per (session, method); the judge reads that
method's whole scene: every round's user message and the method's reply. The
metric card is ``docs/metrics/roleplay.md``.

* ``jera``: ``prompts/jera_v2.txt``, 30 Likert items (1..10), ten each for
  immersivity, consistency and creativity, given the attribute list (or
  "(none)"), the sample dialogues and the scene. The strict JSON reply is
  parsed by :func:`parse_jera`. Rows ``jera`` (30..300) and
  ``jera_<scale>`` (10..100); with several samples, the mean of the scored ones.
* ``almp``: ``almp_extract_v2`` (attributes stated in the scene) and
  ``almp_infer_v2`` (attributes implied) each return a JSON list; R is their
  union. These two prompts see only the scene, never the attribute list or
  the sample dialogues, so what they report comes from the method's replies.
  ``almp = matches / |A|`` (see ``match``).

A session without attributes gets an ``unscored`` almp row even when no judge
is configured (no judge could score it); otherwise no judge means
``not_configured`` rows.


The parsers are in ``verdicts.py``, the attribute matching in
``matching.py`` and the summary in ``summary.py``.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from core.status import RowStatus
from metrics.dialogue import History, sample_text, user_message
from metrics.judging import Batch, Judge, JudgeItem, judge_items, template_chars
from metrics.notes import note
from metrics.rows import ResultRow, RowKey, result_row
from metrics.suite import (
    Chart,
    Column,
    Format,
    JudgeUse,
    Metric,
    Panel,
    Suite,
    Table,
    _l,
)
from metrics.suites.roleplay.matching import (
    match,
    match_attributes,
    wordnet_senses,
)
from metrics.suites.roleplay.rows import scene_rows
from metrics.suites.roleplay.summary import almp_table_rows, summarize
from metrics.suites.roleplay.verdicts import (
    JERA,
    JERA_ROWS,
    JERA_SCALES,
    MODES,
    parse_almp,
    parse_jera,
)

__all__ = [
    "match",
    "match_attributes",
    "parse_almp",
    "parse_jera",
    "summarize",
    "wordnet_senses",
]

NO_JUDGE = note("no_judge")
NO_ATTRIBUTES = note("missing_field", field="attributes")
EMPTY_ATTRIBUTES = note("empty_field", field="attributes")  # present, but []


# -- judge items and rows -----------------------------------------------------
def attributes_of(session: dict[str, Any]) -> list[str]:
    return [a.strip() for a in session.get("attributes") or () if a.strip()]


def scene(session: dict[str, Any], method: str, budget: int | None = None) -> History:
    """The method's scene, every user message and its reply, within the
    history budget (the earliest turns are dropped first)."""
    window = History(budget)
    for round_ in session["rounds"]:
        response = round_["responses"][method]
        window.add(user_message(round_, response), response["text"])
    return window


def request_items(
    session: dict[str, Any], method: str, samples: int, scene_text: str | None = None
) -> dict[str, list[JudgeItem]]:
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


def run(
    sessions: list[dict[str, Any]],
    methods: list[str],
    judge: Judge | None,
    options: dict[str, Any],
) -> list[ResultRow]:
    """Judge items go out in bounded batches (``metrics.judging.Batch``)."""
    samples, budget = int(options.get("samples", 1)), options.get("history_chars")
    rows: list[ResultRow] = []
    batch = Batch(judge)
    for session in sessions:
        attributes = attributes_of(session)
        for method in methods:
            key: RowKey = {
                "session_id": session["session_id"],
                "round": None,
                "method": method,
            }
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
            build = partial(scene_rows, key, attributes, samples, window.dropped)
            rows += batch.add(flat, build)
    return rows + batch.flush()


def estimate(
    session: dict[str, Any],
    methods: list[str],
    window: int | None,
    options: dict[str, Any],
) -> tuple[int, int]:
    """Judge calls and prompt characters of one session, per sample: JERA,
    and the two ALMP requests when the session lists attributes (whatever
    the run's protocol: these prompts are the suite's own)."""
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
    description=_l(
        "An LLM judge answers the JERA questionnaire about each method's scene and lists the character attributes it shows (ALMP)."
    ),
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
            Chart(
                "roleplay_jera",
                "stacked_bars",
                _l("JERA by sub-score (10–100 each)"),
                "panel.jera",
                series=tuple((s, f"jera_{s}") for s in JERA_SCALES),
                empty=_l(
                    "No JERA scores: JERA needs a configured judge, and every judge reply for it failed or could not be parsed."
                ),
            ),
            Chart(
                "roleplay_almp",
                "bars_ci",
                _l("ALMP: share of the attribute list observed"),
                "panel.ci",
                series=(("almp", "almp"),),
                y_metric="almp",
                empty=_l(
                    "No ALMP scores: ALMP needs a configured judge and an attribute list in the session (field attributes)."
                ),
            ),
        ),
        tables=(
            Table(
                "almp_sessions",
                _l("ALMP per session"),
                (
                    Column("method", _l("Method")),
                    Column("session_id", _l("Session")),
                    Column("matched", _l("Matched attributes")),
                    Column("missed", _l("Missed attributes")),
                ),
                almp_table_rows,
            ),
        ),
        empty=_l(
            "No roleplay scores: JERA and ALMP need a configured judge, and ALMP needs an attribute list in the session."
        ),
    ),
)
