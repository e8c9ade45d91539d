"""Offline lexical resources: WordNet synonyms (ALMP) and CMUdict (textstat).

``configure`` points nltk at the project's ``nltk_data/`` (built by
``scripts/build_nltk_data.py``); nothing is ever downloaded. When WordNet is
missing, ``synsets`` returns nothing and ``wordnet_status`` says why, so a
suite can record "synonyms unavailable" instead of crashing.

(tests/metrics/test_lexicon.py covers both cases; a doctest here would leave nltk
pointed at a missing folder for the rest of the session.)
"""

from __future__ import annotations

import threading
from functools import lru_cache
from types import ModuleType
from typing import TypedDict, cast


class _State(TypedDict):
    root: str | None  # the nltk_data folder; None until configured
    available: bool | None  # None: WordNet not probed yet
    reason: str | None
    applied: bool  # nltk.data.path points at root


_state: _State = {"root": None, "available": None, "reason": None, "applied": False}
_lock = threading.RLock()  # wordnet_status probes through nltk_module


def configure(root: str) -> None:
    """Use ``root`` first and only: no home-directory or download fallbacks.
    nltk itself (~0.6 s to import) loads when a suite first needs it."""
    with _lock:
        _state.update(
            {"root": root, "available": None, "reason": None, "applied": False}
        )
        synsets.cache_clear()


def nltk_module() -> ModuleType:
    """nltk, pointed at the configured data folder (textstat uses the same)."""
    import nltk

    with _lock:
        if not _state["applied"] and _state["root"] is not None:
            nltk.data.path[:] = [_state["root"]]
            _state["applied"] = True
    return cast(ModuleType, nltk)  # nltk ships no type hints: its import is Any


def wordnet_status() -> tuple[bool, str | None]:
    """(available, reason when not). Loads WordNet once (~2 s) on first call."""
    with _lock:
        available = _state["available"]
        if available is None:
            available, _state["reason"] = _probe_wordnet(_state["root"])
            _state["available"] = available
        return available, _state["reason"]


def _probe_wordnet(root: str | None) -> tuple[bool, str | None]:
    nltk = nltk_module()
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
