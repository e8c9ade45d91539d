"""Quality suite: the LLM Lab heuristics as rows per (session, round, method)
(metric card: ``docs/metrics/quality.md``):
``coherence``, ``completeness``, ``length``, ``structure``, ``vocabulary`` and
the weighted ``quality`` (weights: ``options["quality_weights"]``).

The source's formulas win over its worked examples (``docs/metrics/quality.md``
lists where they disagree). Words, sentences and word lists live in
``metrics.suites.quality.text_units``, the pronoun/topic rules in ``metrics.suites.quality.rules``
(which reads each text once for all components); a content word is one that
is not common, not a pronoun and not a connector. Rules for the terms the
seed leaves open:

* connector = min(connectors / (0.3 * sentences), 1); pronoun = 1 - unclear /
  third-person pronouns (1.0 with none); topic = 1 - shifts / sentences.
* Prompt keywords = its content words outside task verbs. coverage = 0.6 *
  matched / keywords (1.0 with none) + 0.4 * min(words / (2.5 * prompt
  words), 1). A prompt sentence ending in ``?`` is answered when the response
  holds one of its keywords (or it has none); a task (task verb occurrence)
  is completed when the response holds at least half, rounded up, of its
  sentence's keywords. No questions or no tasks: that part is 1.0.
* length = max(0, 1 - |ln(words / (2.5 * prompt words))|).
* paragraph = min(paragraphs / ceil(words / 100), 1); introduction: first
  sentence over 20 characters holding a prompt keyword (any content word if
  the prompt has none); conclusion: last sentence over 15 characters holding
  a summary phrase.
* sophistication counts occurrences of all-letter words over 6 letters not in
  ``COMMON_WORDS``; repetition = 1 - (occurrences of words seen more than 3
  times) / words.
* A response without words (empty, blank, punctuation or emoji only) is a
  real, bad response: every metric is 0.0. A prompt without words leaves
  ``length``, ``completeness`` and so ``quality`` unscored.

>>> scores = score_response("AI is the artificial intelligence that simulates human thinking.", "What is AI?")
>>> round(scores["length"].value, 4), round(scores["quality"].value, 4)
(0.8177, ...)
"""

from __future__ import annotations

import math
from typing import Any

from metrics import row_source
from metrics.judging import Judge
from metrics.notes import note
from metrics.rows import ResultRow, RowKey, result_row, session_summary
from metrics.suite import (
    Chart,
    Format,
    Metric,
    Option,
    Panel,
    Suite,
    SuiteSummary,
    SummaryRows,
    _l,
    series,
)
from metrics.suites.quality import rules
from metrics.suites.quality.components import (  # noqa: F401 (public scorers)
    NO_PROMPT,
    Score,
    coherence,
    completeness,
    components,
    length,
    structure,
    vocabulary,
)
from metrics.suites.quality.rules import Ask, Reply

DEFAULT_WEIGHTS = dict(
    coherence=0.25, completeness=0.25, length=0.20, structure=0.15, vocabulary=0.15
)
COMPONENTS = tuple(DEFAULT_WEIGHTS)
ROW_METRICS = (*COMPONENTS, "quality")


# -- overall ----------------------------------------------------------------
def validate_weights(weights: dict[str, Any] | None) -> dict[str, float]:
    """The run's weights: the defaults, or a dict with exactly the five
    component keys, non-negative numbers summing to 1 (within 1e-9).

    >>> validate_weights(None) == DEFAULT_WEIGHTS
    True
    >>> validate_weights({"coherence": 1, "completeness": 0, "length": 0,
    ...                   "structure": 0, "vocabulary": 0.5})
    Traceback (most recent call last):
    ValueError: quality_weights must sum to 1 (got 1.5)
    """
    if weights is None:
        return dict(DEFAULT_WEIGHTS)
    if not isinstance(weights, dict) or set(weights) != set(COMPONENTS):
        got = sorted(weights) if isinstance(weights, dict) else type(weights).__name__
        raise ValueError(
            f"quality_weights needs exactly the keys {COMPONENTS}; got {got}"
        )
    for name, value in weights.items():
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if not number or not math.isfinite(value) or not 0 <= value <= 1:
            raise ValueError(
                f"quality_weights[{name!r}] must be a number >= 0 and <= 1: {value!r}"
            )
    total = math.fsum(weights.values())
    if abs(total - 1.0) > 1e-9:
        raise ValueError(f"quality_weights must sum to 1 (got {total})")
    return {name: float(weights[name]) for name in COMPONENTS}


def score_response(
    text: str, prompt: str, weights: dict[str, Any] | None = None
) -> dict[str, Score]:
    """``{metric: Score}`` for the five components and the weighted quality.

    >>> s = score_response("Machine learning lets computers learn from data. "
    ...                    "In conclusion, it is useful.", "Explain machine learning.")
    >>> {name: round(score.value, 4) for name, score in s.items()}
    ... # doctest: +NORMALIZE_WHITESPACE
    {'coherence': 1.0, 'completeness': 1.0, 'length': 0.53, 'structure': 1.0,
     'vocabulary': 0.7778, 'quality': 0.8727}
    """
    return _score(rules.reply(text), rules.ask(prompt), validate_weights(weights))


def _score(reply: Reply, ask: Ask, weights: dict[str, float]) -> dict[str, Score]:
    scores = components(reply, ask)
    values = {name: score.value for name, score in scores.items()}
    detail = {"weights": dict(weights), "components": values}
    known = {name: value for name, value in values.items() if value is not None}
    missing = [name for name in values if name not in known]
    if missing:
        # Components that cannot apply (a prompt without words) make the
        # overall score not applicable too.
        cannot = all(scores[name].note == NO_PROMPT for name in missing)
        why = "components_not_applicable" if cannot else "components_missing"
        reason = note(why, components=", ".join(missing))
        scores["quality"] = Score(None, detail, reason)
    else:
        total = math.fsum(weights[name] * known[name] for name in COMPONENTS)
        scores["quality"] = Score(min(max(total, 0.0), 1.0), detail)
    return scores


# -- suite interface ----------------------------------------------------------
def _row(key: RowKey, metric: str, score: Score) -> ResultRow:
    return result_row(
        key, metric, score.value, note=score.note, detail=score.detail or None
    )


def run(
    sessions: list[dict[str, Any]],
    methods: list[str],
    judge: Judge | None,
    options: dict[str, Any],
) -> list[ResultRow]:
    """Rows for every (session, round, method); the judge is not used. The
    prompt is the response's own ``user_message`` when set, else the round's."""
    weights = validate_weights(options.get("quality_weights"))
    # A prompt is read once per chunk, however many methods and sessions
    # answer it (chunks are small, so the memo is too).
    asks: dict[str, Ask] = {}
    rows: list[ResultRow] = []
    for session in sessions:
        sid = session["session_id"]
        for round_ in session["rounds"]:
            for method in methods:
                key: RowKey = {
                    "session_id": sid,
                    "round": round_["round"],
                    "method": method,
                }

                response = round_["responses"][method]
                prompt = response.get("user_message") or round_["user_message"]
                ask = asks.get(prompt) or asks.setdefault(prompt, rules.ask(prompt))
                reply = rules.reply(response.get("text") or "")
                scores = _score(reply, ask, weights)
                rows += [_row(key, metric, score) for metric, score in scores.items()]
    return rows


def summarize(rows: SummaryRows, methods: list[str]) -> SuiteSummary:
    """Per method and metric, the mean over sessions of the per-session means
    (``<metric>_avg``): sessions are the independent unit, and the paired Δ
    of each column is made of the same per-session means, so a Δ over the
    same sessions is exactly the difference of the values shown. Also the
    component panel."""
    rows = row_source.readable(rows)
    found = session_summary(rows, ROW_METRICS, methods)
    values, summary = found.values, found.summary
    panel = {m: {c: summary[m][f"{c}_avg"] for c in COMPONENTS} for m in methods}
    return {"summary": summary, "session_values": values, "panel": panel}


LABELS = {
    "coherence": _l("Coherence"),
    "completeness": _l("Completeness"),
    "length": _l("Length"),
    "structure": _l("Structure"),
    "vocabulary": _l("Vocabulary"),
    "quality": _l("Overall quality"),
}
DESCRIPTIONS = {
    "coherence": _l("Mean of connector use, clear pronouns and staying on topic."),
    "completeness": _l(
        "Mean of prompt keyword coverage, questions answered and tasks done."
    ),
    "length": _l("1 - |ln(words / (2.5 x prompt words))|, floored at 0."),
    "structure": _l(
        "Mean of paragraphing, an on-topic introduction and a concluding sentence."
    ),
    "vocabulary": _l(
        "Mean of word diversity, sophisticated words and lack of repetition."
    ),
    "quality": _l("Weighted sum of the five components (weights per run)."),
}
UNIT = (0.0, 1.0)
SUITE = Suite(
    name="quality",
    label=_l("Response quality heuristics"),
    description=_l(
        "Deterministic heuristics of coherence, completeness, length, structure and vocabulary; no judge needed."
    ),
    metrics=(
        # scores on [0, 1], not shares of anything: "rates as %" leaves them
        *(
            Metric(
                m,
                LABELS[m],
                "row",
                True,
                UNIT,
                Format.SCORE,
                description=DESCRIPTIONS[m],
            )
            for m in ROW_METRICS
        ),
        *(
            Metric(
                f"{m}_avg", LABELS[m], "summary", True, UNIT, Format.SCORE, compare=m
            )
            for m in ROW_METRICS
        ),
    ),
    run=run,
    summarize=summarize,
    options=(
        Option(
            "quality_weights",
            _l("Quality weights"),
            validate_weights,
            problem="bad_weights",
            problem_message=_l("Quality weights rejected: %(detail)s"),
        ),
    ),
    order=20,
    lead="quality_avg",  # the weighted whole, not its first component
    panel=Panel(
        charts=(
            Chart(
                "quality_components",
                "bars",
                _l("Response quality components (0–1)"),
                "panel",
                series=series(*COMPONENTS),
            ),
            Chart(
                "quality_overall",
                "bars",
                _l("Overall quality (weighted)"),
                "summary",
                series=series("quality_avg"),
            ),
        ),
    ),
)
