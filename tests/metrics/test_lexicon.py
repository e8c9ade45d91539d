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


class Unread:
    """A map no lookup may read."""

    def __getattr__(self, name):
        raise AssertionError(f"the multilingual map was read ({name})")

    def __bool__(self):
        raise AssertionError("the multilingual map was read (bool)")

    def __contains__(self, item):
        raise AssertionError("the multilingual map was read (in)")

    def __getitem__(self, key):
        raise AssertionError("the multilingual map was read ([])")


@pytest.mark.slow
def test_english_synsets_never_read_the_map_the_load_leaves_out(
    project_wordnet, monkeypatch
):
    """english_wordnet does not build nltk's map of WordNet 3.0 onto the
    loaded WordNet (1.5 s of a 2.7 s load); an English lookup never reads it,
    so its synsets are nltk's (all 147,306 lemmas compared once)."""
    wordnet = lexicon.english_wordnet(
        lexicon.nltk_module().data.find("corpora/wordnet")
    )
    assert wordnet.map30 is None
    monkeypatch.setattr(wordnet, "map30", Unread())
    lexicon.synsets.cache_clear()
    assert "happy.a.01" in lexicon.synsets("happy")
    assert lexicon.synsets("ice cream") == {"ice_cream.n.01"}
    lexicon.synsets.cache_clear()


def test_missing_wordnet_degrades_with_a_reason(tmp_path):
    lexicon.configure(str(tmp_path))
    try:
        available, reason = lexicon.wordnet_status()
        assert available is False
        assert "wordnet-base" in reason
        assert lexicon.synsets("happy") == frozenset()
    finally:
        lexicon.configure(str(NLTK_DATA))
