"""ALMP's matching of the character's attributes against those the judge
observed in the scene: exact, WordNet senses, fuzzy, never a negation."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from metrics import lexicon

FUZZY_THRESHOLD = 85  # rapidfuzz ratio must exceed it


# a phrase -> its WordNet synset names
Synsets = Callable[[str], frozenset[str]]


# -- matching ---------------------------------------------------------------
def norm_attribute(text: str) -> str:
    return " ".join(text.split()).lower()


def wordnet_senses(phrase: str, synsets: Synsets = lexicon.synsets) -> frozenset[str]:
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


def match(
    attribute: str, observed: list[str], synsets: Synsets = lexicon.synsets
) -> tuple[str, str] | None:
    """``(r, reason)`` for the first rule that matches ``attribute``, else None.

    Rules in order: exact (case-insensitive, whitespace stripped and
    collapsed); fuzzy (rapidfuzz ``ratio`` > 85 on those lower-cased forms,
    best r; never a form that is the other with a negation prefix); WordNet (a shared synset, the alphabetically first one named).

    >>> match("adventurous", ["shy", "adventerous"], lambda phrase: frozenset())
    ('adventerous', 'fuzzy 90.9')
    """
    wanted = norm_attribute(attribute)
    forms = [(r, norm_attribute(r)) for r in observed]
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


def match_attributes(
    attributes: list[str], observed: list[str], synsets: Synsets = lexicon.synsets
) -> dict[str, Any]:
    """ALMP of attribute list A against the observed set R: matched pairs with
    their reasons, missed attributes, and ``value = matches / |A|``.

    >>> no_wordnet = lambda phrase: frozenset()
    >>> result = match_attributes(["Cheerful", "stubborn"], ["cheerful "], no_wordnet)
    >>> result["value"], result["matched"][0]["reason"], result["missed"]
    (0.5, 'exact', ['stubborn'])
    """
    matched: list[dict[str, str]] = []
    missed: list[str] = []
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
