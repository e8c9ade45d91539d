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
from typing import Any, TypedDict, cast


class _State(TypedDict):
    root: str | None  # the nltk_data folder; None until configured
    available: bool | None  # None: WordNet not probed yet
    reason: str | None
    applied: bool  # nltk.data.path points at root
    wordnet: Any  # the reader (english_wordnet) once probed; None before


_state: _State = {
    "root": None,
    "available": None,
    "reason": None,
    "applied": False,
    "wordnet": None,
}
_lock = threading.RLock()  # wordnet_status probes through nltk_module


def configure(root: str) -> None:
    """Use ``root`` first and only: no home-directory or download fallbacks.
    nltk itself (~0.6 s to import) loads when a suite first needs it."""
    with _lock:
        _state.update(
            {
                "root": root,
                "available": None,
                "reason": None,
                "applied": False,
                "wordnet": None,
            }
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
    """(available, reason when not). Loads WordNet (~1.3 s of CPU) on the first call of a process."""
    with _lock:
        available = _state["available"]
        if available is None:
            available, _state["reason"] = _probe_wordnet(_state["root"])
            _state["available"] = available
        return available, _state["reason"]


def _probe_wordnet(root: str | None) -> tuple[bool, str | None]:
    nltk = nltk_module()
    try:
        _state["wordnet"] = english_wordnet(nltk.data.find("corpora/wordnet"))
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
    with _lock:  # the reader of this configuration, not None from a configure
        available, _ = wordnet_status()
        wordnet = _state["wordnet"]
    if not available:
        return frozenset()
    lemma = "_".join(phrase.strip().lower().split())
    return frozenset(synset.name() for synset in wordnet.synsets(lemma))


@lru_cache(maxsize=4)
def english_wordnet(folder: Any) -> Any:
    """nltk's WordNet reader of ``folder`` (the path pointer ``nltk.data.find``
    gives), loaded once a process (``configure`` again does not), without
    the map nltk builds for the Open Multilingual Wordnet's offsets.

    nltk maps WordNet 3.0 onto the loaded WordNet on every load, and since
    it tells them apart by the name "wordnet", not by the version, it maps
    3.0 onto itself too: 1.5 of the 2.7 s of CPU a load took. Only the
    synsets of other languages read that map; ALMP asks for English ones
    (tests/metrics/test_lexicon.py compares them with nltk's own loader)."""
    from nltk.corpus import CorpusReader, LazyCorpusLoader
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    class EnglishWordNet(WordNetCorpusReader):  # type: ignore[misc]
        def map_wn(self, version: str = "wordnet") -> None:
            return None

    # the multilingual data nltk's ``wordnet`` names, loaded only if asked for
    omw = LazyCorpusLoader(
        "omw-2.0", CorpusReader, r".*/wn-data-.*\.tab", encoding="utf8"
    )
    return EnglishWordNet(folder, omw)
