"""WordNet through the project's offline nltk_data, and its graceful absence."""

from __future__ import annotations

import pytest

from config import PROJECT_ROOT
from metrics import lexicon

NLTK_DATA = PROJECT_ROOT / "nltk_data"


@pytest.fixture
def project_wordnet():
    lexicon.configure(str(NLTK_DATA))
    available, reason = lexicon.wordnet_status()
    if not available:
        pytest.fail(f"setup did not build WordNet: {reason}")
    yield
    lexicon.configure(str(NLTK_DATA))


@pytest.mark.slow
def test_synonyms_share_a_synset(project_wordnet):
    assert lexicon.synsets("happy") & lexicon.synsets("glad")
    assert lexicon.synsets("ice cream")  # multi-word collocation


def test_missing_wordnet_degrades_with_a_reason(tmp_path):
    lexicon.configure(str(tmp_path))
    try:
        available, reason = lexicon.wordnet_status()
        assert available is False
        assert "wordnet-base" in reason
        assert lexicon.synsets("happy") == frozenset()
    finally:
        lexicon.configure(str(NLTK_DATA))
