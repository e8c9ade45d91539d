"""The five components of the quality suite, each a :class:`Score` from a
response read once (``metrics.suites.quality.rules``); the rules and the open terms
of the source document (``seeds/llm-lab-quality-metrics.md``) are in ``metrics/suites/quality/__init__.py`` and
``docs/metrics/quality.md``. Each public scorer takes raw text (doctests,
``docs/metrics/quality.md``); the suite calls :func:`components` with the
response and prompt already read.
"""

from __future__ import annotations

import math
from collections import Counter
from functools import lru_cache
from itertools import compress
from typing import Any, NamedTuple

from metrics.notes import Note, note
from metrics.suites.quality import rules
from metrics.suites.quality import text_units as tu
from metrics.suites.quality.rules import Ask, Reply

OPTIMAL_RATIO = 2.5  # optimal response words per prompt word
CONNECTOR_TARGET = 0.3  # connectors per sentence for a full score
WORDS_PER_PARAGRAPH = 100
INTRO_MIN_CHARS, CONCLUSION_MIN_CHARS = 20, 15
REPEAT_LIMIT = 3  # a word seen more than this often counts as repeated
NO_PROMPT = note("prompt_has_no_words")


class Score(NamedTuple):
    value: float | None
    detail: dict[str, Any]
    note: Note | None = None


def _zeros(*parts: str) -> Score:
    return Score(0.0, {"empty_response": True, **dict.fromkeys(parts, 0.0)})


def _mean_of(detail: dict[str, Any], *parts: str) -> Score:
    values = [detail[part] for part in parts]
    return Score(math.fsum(values) / len(values), detail)  # fmean's own sum


# -- coherence --------------------------------------------------------------
def coherence(text: str, prompt: str = "") -> Score:
    """Mean of connector, pronoun and topic scores.

    >>> coherence("The weather is nice today. However, it might rain later. "
    ...           "Therefore, we should bring umbrellas.").value
    1.0
    >>> round(coherence("Cats are animals. Pizza is food. Cars are vehicles.").value, 4)
    0.4444
    """
    return _coherence(rules.reply(text), rules.ask(prompt))


def _coherence(reply: Reply, ask: Ask) -> Score:
    if not reply.units.words:
        return _zeros("connector", "pronoun", "topic")
    sentences = len(reply.units.sentences)
    connectors = sum(fact.connectors for fact in reply.facts)
    pronouns, unclear = rules.pronoun_counts(reply.facts, ask.after_content)
    shifts = rules.topic_shifts(reply.facts)
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
    return _completeness(rules.reply(text), rules.ask(prompt))


def _completeness(reply: Reply, ask: Ask) -> Score:
    if not ask.words:
        return Score(None, {}, NO_PROMPT)
    words = len(reply.units.words)
    if not words:
        return _zeros("coverage", "question", "task")
    have, wanted = reply.keys, ask.keywords
    expected = OPTIMAL_RATIO * ask.words
    questions, tasks = ask.questions, ask.tasks
    answered = sum(1 for keys in questions if len(keys & have) >= min(1, len(keys)))
    done = sum(1 for keys in tasks if len(keys & have) >= math.ceil(len(keys) / 2))
    detail = {
        "coverage": 0.6 * (len(wanted & have) / len(wanted) if wanted else 1.0)
        + 0.4 * min(words / expected, 1.0),
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
    return _length(rules.reply(text), rules.ask(prompt))


def _length(reply: Reply, ask: Ask) -> Score:
    words, prompt_words = len(reply.units.words), ask.words
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
    return _structure(rules.reply(text), rules.ask(prompt))


def _structure(reply: Reply, ask: Ask) -> Score:
    units, topic = reply.units, ask.keywords
    if not units.words:
        return _zeros("paragraph", "introduction", "conclusion")
    optimal = math.ceil(len(units.words) / WORDS_PER_PARAGRAPH)
    first, last = units.sentences[0], units.sentences[-1]
    opening = reply.facts[0].keys  # the first sentence's content keys
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
    return _vocabulary(rules.reply(text))


@lru_cache(maxsize=65536)
def _sophisticated(word: str) -> bool:
    return len(word) > 6 and word.isalpha() and word not in tu.COMMON_WORDS


def _vocabulary(reply: Reply) -> Score:
    words = reply.units.words
    if not words:
        return _zeros("diversity", "sophistication", "repetition")
    counts = Counter(words)
    # Per distinct word (the test cached), times its occurrences.
    rich = sum(compress(counts.values(), tu.per_word(_sophisticated, list(counts))))
    repeated = sum(filter(REPEAT_LIMIT.__lt__, counts.values()))  # n > limit
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


def components(reply: Reply, ask: Ask) -> dict[str, Score]:
    """``{component: Score}`` of one response to one prompt, both read once."""
    return {
        "coherence": _coherence(reply, ask),
        "completeness": _completeness(reply, ask),
        "length": _length(reply, ask),
        "structure": _structure(reply, ask),
        "vocabulary": _vocabulary(reply),
    }
