"""What the quality suite reads of a text, read once: a response becomes a
:class:`Reply` and a prompt an :class:`Ask`, and every component of
``metrics.suites.quality`` works from those, so a text is normalised,
split and tokenised once, and each distinct word's rules (content word, key
form, pronoun) are worked out once (``text_units.word_role``). Also the
pronoun and topic-shift rules, over per-sentence :class:`Facts`.

Words, sentences, paragraphs, word lists and keywords are
``metrics.suites.quality.text_units``'s.

>>> r = reply("The bike is red. It is fast. Pizza is hot.")
>>> pronoun_counts(r.facts, after_content=False), topic_shifts(r.facts)
((1, 0), 1)
>>> a = ask("Do you like my bike? Explain why.")
>>> a.words, sorted(a.keywords), a.after_content
(7, ['bike'], True)
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import NamedTuple

from metrics.suites.quality import text_units as tu


class Facts(NamedTuple):
    """What the pronoun and topic rules need of one sentence, read in one
    pass over its words (the same whatever prompt it answers)."""

    keys: frozenset[str]  # content keys
    pronouns: int
    leading: int  # pronouns before its first content word
    connectors: int


def sentence_facts(tokens: tuple[str, ...]) -> Facts:
    """The :class:`Facts` of a sentence's words.

    >>> sentence_facts(("it", "broke", "and", "it", "however"))
    Facts(keys=frozenset({'broke'}), pronouns=2, leading=1, connectors=1)
    """
    if not tokens:
        return Facts(frozenset(), 0, 0, 0)
    # Columns of the per-word roles: the counting runs in C, not per word here.
    content, pronoun = zip(*tu.per_word(tu.word_role, tokens), strict=True)
    pronouns, leading = sum(pronoun), 0
    if pronouns:  # those before the first content word (a pronoun is never one)
        first = next((i for i, key in enumerate(content) if key is not None), None)
        leading = sum(pronoun[:first])
    keys = frozenset(filter(None, content))  # a key form is never ""
    return Facts(keys, pronouns, leading, tu.CONNECTORS.count(tokens))


def pronoun_counts(facts: Sequence[Facts], after_content: bool) -> tuple[int, int]:
    """(pronouns, unclear ones). A pronoun is unclear when no content word
    precedes it in its sentence or occurs in the previous sentence; the first
    sentence's previous sentence is the prompt's last (``after_content``: it
    has a content word; a reply may say "it" about what the user just said)."""
    total = unclear = 0
    for fact in facts:
        total += fact.pronouns
        unclear += 0 if after_content else fact.leading
        after_content = bool(fact.keys)
    return total, unclear


def topic_shifts(facts: Sequence[Facts]) -> int:
    """Sentences that share no content word with the previous one (both
    having some) and hold no connector and no pronoun to bridge the gap."""
    shifts = 0
    for before, fact in pairwise(facts):
        old, new = before.keys, fact.keys
        bridged = fact.connectors or fact.pronouns
        shifts += bool(old and new and old.isdisjoint(new) and not bridged)
    return shifts


class Reply(NamedTuple):
    units: tu.Units
    facts: tuple[Facts, ...]  # one per sentence
    keys: frozenset[str]  # content keys of all its words


def reply(text: str) -> Reply:
    """A response, read once for all five components (not cached: a
    response is scored once)."""
    units = tu.units(text)
    facts = tuple(sentence_facts(sentence.words) for sentence in units.sentences)
    return Reply(units, facts, frozenset().union(*(fact.keys for fact in facts)))


class Ask(NamedTuple):
    words: int
    keywords: frozenset[str]  # text_units.prompt_keywords
    questions: tuple[set[str], ...]  # keywords of each question
    tasks: tuple[set[str], ...]  # keywords of each task's sentence
    after_content: bool  # its last sentence has a content word


def ask(prompt: str) -> Ask:
    """A prompt, read once for every response that answers it."""
    units = tu.units(prompt)
    questions, tasks = tu.prompt_demands(units)
    last = units.sentences[-1].words if units.sentences else ()
    return Ask(
        len(units.words),
        tu.topic_keywords(units),
        tuple(questions),
        tuple(tasks),
        bool(tu.content_keys(last)),
    )
