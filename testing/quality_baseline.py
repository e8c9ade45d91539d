"""Frozen copy of the quality suite's scoring path (``score_response`` and
``run`` of ``metrics/suites/quality/__init__.py``) as it was before issue 17 (commit
07b8a4b), with its text units in :mod:`testing.quality_baseline_units`.

It is kept only as the baseline of ``bench/suites.py`` (the optimised suite
is measured against it in the same run) and as the reference
``tests/metrics/suites/test_quality.py`` checks the optimised rows against, value for value.
Not used by the product; do not optimise it. The formulas, rules and notes
are documented in ``metrics/suites/quality/__init__.py``.
"""

from __future__ import annotations

import math
from collections import Counter
from statistics import fmean
from typing import NamedTuple

from metrics.notes import Note, note
from metrics.rows import ResultRow, result_row
from testing import quality_baseline_units as tu

DEFAULT_WEIGHTS = dict(
    coherence=0.25, completeness=0.25, length=0.20, structure=0.15, vocabulary=0.15
)
COMPONENTS = tuple(DEFAULT_WEIGHTS)
ROW_METRICS = (*COMPONENTS, "quality")
OPTIMAL_RATIO = 2.5  # optimal response words per prompt word
CONNECTOR_TARGET = 0.3  # connectors per sentence for a full score
WORDS_PER_PARAGRAPH = 100
INTRO_MIN_CHARS, CONCLUSION_MIN_CHARS = 20, 15
REPEAT_LIMIT = 3  # a word seen more than this often counts as repeated
NO_PROMPT = note("prompt_has_no_words")


class Score(NamedTuple):
    value: float | None
    detail: dict
    note: Note | None = None


def _zeros(*parts: str) -> Score:
    return Score(0.0, {"empty_response": True, **dict.fromkeys(parts, 0.0)})


def _mean_of(detail: dict, *parts: str) -> Score:
    return Score(fmean(detail[part] for part in parts), detail)


# -- coherence --------------------------------------------------------------
def coherence(text: str, prompt: str = "") -> Score:
    """Mean of connector, pronoun and topic scores.

    >>> coherence("The weather is nice today. However, it might rain later. "
    ...           "Therefore, we should bring umbrellas.").value
    1.0
    >>> round(coherence("Cats are animals. Pizza is food. Cars are vehicles.").value, 4)
    0.4444
    """
    units = tu.analyze(text)
    if not units.words:
        return _zeros("connector", "pronoun", "topic")
    sentences = len(units.sentences)
    connectors = sum(tu.CONNECTORS.count(s.words) for s in units.sentences)
    pronouns, unclear = tu.pronoun_counts(units, tu.analyze(prompt))
    shifts = tu.topic_shifts(units)
    detail = {
        "connector": min(connectors / (sentences * CONNECTOR_TARGET), 1.0),
        "pronoun": 1.0 - unclear / pronouns if pronouns else 1.0,
        "topic": 1.0 - shifts / sentences,
        "sentences": sentences,
        "connectors": connectors,
        "pronouns": pronouns,
        "unclear_pronouns": unclear,
        "topic_shifts": shifts,
    }
    return _mean_of(detail, "connector", "pronoun", "topic")


# -- completeness -----------------------------------------------------------
def completeness(text: str, prompt: str) -> Score:
    """Mean of keyword coverage, question answering and task fulfillment.

    >>> completeness("Machine learning is a subset of artificial intelligence that "
    ...              "enables computers to learn from data.", "Explain machine learning.").value
    1.0
    >>> round(completeness("The weather is nice today.", "Explain machine learning.").value, 4)
    0.4222
    """
    units, asked = tu.analyze(text), tu.analyze(prompt)
    if not asked.words:
        return Score(None, {}, NO_PROMPT)
    if not units.words:
        return _zeros("coverage", "question", "task")
    have = tu.content_keys(units.words)
    wanted = tu.prompt_keywords(prompt)
    expected = OPTIMAL_RATIO * len(asked.words)
    questions, tasks = tu.prompt_demands(asked)
    answered = sum(1 for keys in questions if len(keys & have) >= min(1, len(keys)))
    done = sum(1 for keys in tasks if len(keys & have) >= math.ceil(len(keys) / 2))
    detail = {
        "coverage": 0.6 * (len(wanted & have) / len(wanted) if wanted else 1.0)
        + 0.4 * min(len(units.words) / expected, 1.0),
        "question": answered / len(questions) if questions else 1.0,
        "task": done / len(tasks) if tasks else 1.0,
        "keywords": len(wanted),
        "matched_keywords": len(wanted & have),
        "missing_keywords": sorted(wanted - have)[:20],
        "expected_words": expected,
        "questions": len(questions),
        "answered": answered,
        "tasks": len(tasks),
        "completed": done,
    }
    return _mean_of(detail, "coverage", "question", "task")


# -- length -----------------------------------------------------------------
def length(text: str, prompt: str) -> Score:
    """1 - |ln(words / (2.5 * prompt words))|, floored at 0.

    >>> round(length("AI is the artificial intelligence that simulates human thinking.",
    ...              "What is AI?").value, 4)
    0.8177
    >>> length("", "What is AI?").value, length("Hello", "").value
    (0.0, None)
    """
    words, prompt_words = len(tu.analyze(text).words), len(tu.analyze(prompt).words)
    if not prompt_words:
        return Score(None, {}, NO_PROMPT)
    optimal = OPTIMAL_RATIO * prompt_words
    value = max(0.0, 1.0 - abs(math.log(words / optimal))) if words else 0.0
    detail = {"words": words, "prompt_words": prompt_words, "optimal_words": optimal}
    return Score(value, detail)


# -- structure --------------------------------------------------------------
def structure(text: str, prompt: str = "") -> Score:
    """Mean of paragraph, introduction and conclusion scores.

    >>> structure("Artificial intelligence is transforming industries. It enables "
    ...           "automation. In conclusion, AI will shape our future.",
    ...           "Tell me about artificial intelligence.").value
    1.0
    """
    units, topic = tu.analyze(text), tu.prompt_keywords(prompt)
    if not units.words:
        return _zeros("paragraph", "introduction", "conclusion")
    optimal = math.ceil(len(units.words) / WORDS_PER_PARAGRAPH)
    first, last = units.sentences[0], units.sentences[-1]
    opening = tu.content_keys(first.words)
    on_topic = opening & topic if topic else opening
    detail = {
        "paragraph": min(units.paragraphs / optimal, 1.0),
        "introduction": float(len(first.text) > INTRO_MIN_CHARS and bool(on_topic)),
        "conclusion": float(
            len(last.text) > CONCLUSION_MIN_CHARS and tu.SUMMARY.count(last.words) > 0
        ),
        "paragraphs": units.paragraphs,
        "optimal_paragraphs": optimal,
    }
    return _mean_of(detail, "paragraph", "introduction", "conclusion")


# -- vocabulary -------------------------------------------------------------
def vocabulary(text: str) -> Score:
    """Mean of diversity, sophistication and repetition scores.

    >>> score = vocabulary("The sophisticated algorithm demonstrates remarkable "
    ...                    "efficiency and effectiveness.")
    >>> score.detail["sophistication"], round(score.value, 4)
    (0.75, 0.9167)
    """
    words = tu.analyze(text).words
    if not words:
        return _zeros("diversity", "sophistication", "repetition")
    counts = Counter(words)
    rich = sum(
        1 for w in words if len(w) > 6 and w.isalpha() and w not in tu.COMMON_WORDS
    )
    repeated = sum(n for n in counts.values() if n > REPEAT_LIMIT)
    detail = {
        "diversity": len(counts) / len(words),
        "sophistication": rich / len(words),
        "repetition": 1.0 - repeated / len(words),
        "words": len(words),
        "unique_words": len(counts),
        "sophisticated_words": rich,
        "repeated_occurrences": repeated,
    }
    return _mean_of(detail, "diversity", "sophistication", "repetition")


# -- overall ----------------------------------------------------------------
def validate_weights(weights: dict | None) -> dict[str, float]:
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
    text: str, prompt: str, weights: dict | None = None
) -> dict[str, Score]:
    """``{metric: Score}`` for the five components and the weighted quality.

    >>> s = score_response("Machine learning lets computers learn from data. "
    ...                    "In conclusion, it is useful.", "Explain machine learning.")
    >>> {name: round(score.value, 4) for name, score in s.items()}
    ... # doctest: +NORMALIZE_WHITESPACE
    {'coherence': 1.0, 'completeness': 1.0, 'length': 0.53, 'structure': 1.0,
     'vocabulary': 0.7778, 'quality': 0.8727}
    """
    weights = validate_weights(weights)
    scores = {
        "coherence": coherence(text, prompt),
        "completeness": completeness(text, prompt),
        "length": length(text, prompt),
        "structure": structure(text, prompt),
        "vocabulary": vocabulary(text),
    }
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
def _row(key: dict, metric: str, score: Score) -> ResultRow:
    return result_row(
        key, metric, score.value, note=score.note, detail=score.detail or None
    )


def run(
    sessions: list[dict], methods: list[str], judge, options: dict
) -> list[ResultRow]:
    """Rows for every (session, round, method); the judge is not used. The
    prompt is the response's own ``user_message`` when set, else the round's."""
    weights = validate_weights(options.get("quality_weights"))
    rows: list[ResultRow] = []
    for session in sessions:
        sid = session["session_id"]
        for round_ in session["rounds"]:
            for method in methods:
                key = {"session_id": sid, "round": round_["round"], "method": method}
                response = round_["responses"][method]
                prompt = response.get("user_message") or round_["user_message"]
                scores = score_response(response.get("text") or "", prompt, weights)
                rows += [_row(key, metric, score) for metric, score in scores.items()]
    return rows
