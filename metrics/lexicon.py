"""Offline lexical resources: WordNet synonyms (ALMP) and CMUdict (textstat).

``configure`` points nltk at the project's ``nltk_data/`` (built by
``scripts/build_nltk_data.py``); nothing is ever downloaded. When WordNet is
missing, ``synsets`` returns nothing and ``wordnet_status`` says why, so a
suite can record "synonyms unavailable" instead of crashing.

(tests/test_lexicon.py covers both cases; a doctest here would leave nltk
pointed at a missing folder for the rest of the session.)
"""

from __future__ import annotations

import threading
from functools import lru_cache

import nltk

_state = {"root": None, "available": None, "reason": None}
_lock = threading.Lock()


def configure(root: str) -> None:
    """Use ``root`` first and only: no home-directory or download fallbacks."""
    with _lock:
        nltk.data.path[:] = [root]
        _state.update(root=root, available=None, reason=None)
        synsets.cache_clear()


def wordnet_status() -> tuple[bool, str | None]:
    """(available, reason when not). Loads WordNet once (~2 s) on first call."""
    with _lock:
        if _state["available"] is None:
            _state["available"], _state["reason"] = _probe_wordnet(_state["root"])
        return _state["available"], _state["reason"]


def _probe_wordnet(root: str | None) -> tuple[bool, str | None]:
    try:
        nltk.data.find("corpora/wordnet")
        from nltk.corpus import wordnet

        wordnet.ensure_loaded()
    except (LookupError, OSError) as exc:
        if isinstance(exc, OSError):
            return False, f"WordNet data under {root} is unreadable: {exc}"
        return False, (
            f"WordNet data not found under {root}: run scripts/build_nltk_data.py "
            "(needs the Debian package wordnet-base); synonym matching is disabled."
        )
    return True, None


@lru_cache(maxsize=65536)
def synsets(phrase: str) -> frozenset[str]:
    """Synset names of a word or multi-word phrase (spaces become ``_``, as
    WordNet stores collocations); empty when WordNet is unavailable."""
    available, _ = wordnet_status()
    if not available:
        return frozenset()
    from nltk.corpus import wordnet

    lemma = "_".join(phrase.strip().lower().split())
    return frozenset(synset.name() for synset in wordnet.synsets(lemma))
