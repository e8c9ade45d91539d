"""Style suite: does a method write like the character's sample dialogues?

* ``nvcs`` (row): cosine similarity of character 1..3-gram count vectors of
  the sample dialogues (joined by newlines) and the response. One vocabulary
  is fitted per session, on the sample text and all the session's responses,
  and every response is scored against the sample text with sparse dot
  products: the counts of the n-grams of a pair do not depend on which other
  texts shaped the vocabulary, so this equals one vectorizer per pair. An
  empty response is ``unscored`` ("empty response").
* ``ertd`` (row): ``|Er(D) - Er(R)|`` with ``Er = clamp(Flesch reading ease,
  0, 100)`` (textstat; syllables from the offline CMUdict in ``nltk_data/``).
  The metric card is ``docs/metrics/style.md``.

Which texts Flesch can score (a deterministic rule, since textstat returns a
number for any string, e.g. 121 for a Chinese sentence): a text needs at
least ``MIN_LATIN_LETTERS`` Latin-alphabet letters, and at least
``MIN_LATIN_SHARE`` of all its letters must be Latin. Anything else (Chinese,
Korean, emoji only, digits only) is ``not_applicable`` with the reason. Mixed text
that passes is scored as a whole.

>>> nvcs("Hello there!", "Hello there!"), nvcs("abc", "xyz")
(1.0, 0.0)
>>> value, why = readability("你好，今天想喝点什么？")
>>> value, why.english, why.status
(None, 'the response is mostly non-Latin script (0% Latin letters)', 'not_applicable')
"""

from __future__ import annotations

import re
from typing import Any

from metrics import lexicon, row_source
from metrics.dialogue import sample_text
from metrics.judging import Judge
from metrics.notes import Note, note
from metrics.rows import ResultRow, RowKey, result_row, session_summary
from metrics.suite import Chart, Metric, Panel, Suite, SuiteSummary, SummaryRows, _l

NVCS_SLICE = 256  # texts per fitted vocabulary
MIN_LATIN_LETTERS = 2
EMPTY = note("empty_response")
Key = tuple[str, int | None, str]  # (session_id, round, method)
NO_REFERENCE = note("missing_field", field="sample_dialogues")
MIN_LATIN_SHARE = 0.5
_LETTER = re.compile(r"[^\W\d_]")
_LATIN = re.compile(r"[A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u1e00-\u1eff]")
_CMUDICT = {"found": False}


def nvcs_scores(reference: str, texts: list[str]) -> list[float | None]:
    """NVCS of each text against ``reference`` from one fitted vocabulary;
    None for an empty text.

    The cosine is ``D·R / sqrt(|D|² |R|²)`` on exact integer counts, so
    identical texts give exactly 1.0 and the measure is symmetric.

    >>> nvcs_scores("aab", ["aab", "b", "zz", " "])
    [1.0, 0.3535..., 0.0, None]
    """
    import numpy as np  # heavy imports load when the suite runs, not at start-up
    from sklearn.feature_extraction.text import CountVectorizer

    present = [i for i, text in enumerate(texts) if text.strip()]
    scores: list[float | None] = [None] * len(texts)
    # Slices of texts, one vocabulary each: a pair's counts do not depend on
    # the other texts, and memory stays flat however long the session is.
    for first in range(0, len(present), NVCS_SLICE):
        part = present[first : first + NVCS_SLICE]
        vectorizer = CountVectorizer(
            analyzer="char", ngram_range=(1, 3), lowercase=False
        )
        counts = vectorizer.fit_transform([reference, *(texts[i] for i in part)])
        dots = (counts[1:] @ counts[0].T).toarray().ravel().astype(float)
        squares = np.asarray(counts.multiply(counts).sum(axis=1), dtype=float).ravel()
        cosines = dots / np.sqrt(squares[1:] * squares[0])
        for index, cosine in zip(part, cosines, strict=True):
            scores[index] = min(float(cosine), 1.0)
    return scores


def nvcs(a: str, b: str) -> float | None:
    """NVCS of one pair (symmetric; None when either text is empty).

    >>> nvcs("Nice day!", "nice day.") == nvcs("nice day.", "Nice day!")
    True
    """
    if not a.strip():
        return None
    return nvcs_scores(a, [b])[0]


def readability(
    text: str, subject: str = "response"
) -> tuple[float | None, Note | None]:
    """``(Er, None)`` with ``Er = clamp(flesch_reading_ease, 0, 100)``, or
    ``(None, reason)`` for text the Flesch formula does not apply to (the
    ``subject``, "response" or "dialogues", names it), or when CMUdict is
    missing (never a download attempt).

    >>> readability("안녕하세요, Kim")[1].english
    'the response is mostly non-Latin script (38% Latin letters)'
    >>> readability("你好，今天天气很好")[1].english
    'the response is mostly non-Latin script (0% Latin letters)'
    >>> readability("12 + 34 = 46 !")[1].english
    'the response has no English words textstat can score'
    """
    letters = len(_LETTER.findall(text))
    latin = len(_LATIN.findall(text))
    # One cause, one reason: text in another script (Chinese alone
    # included, 0% Latin) is "mostly non-Latin"; "no English words" is left
    # for text with (almost) no letters at all.
    if latin < MIN_LATIN_SHARE * letters:
        share = f"{latin / letters:.0%}"
        return None, note(f"{subject}_mostly_non_latin", share=share)
    if latin < MIN_LATIN_LETTERS:
        return None, note(f"{subject}_not_english")
    if not _CMUDICT["found"]:
        problem = cmudict_problem()
        if problem:
            return None, problem
        _CMUDICT["found"] = True  # textstat keeps the loaded dictionary
    import textstat

    return min(max(float(textstat.flesch_reading_ease(text)), 0.0), 100.0), None


def cmudict_problem() -> Note | None:
    """Why textstat cannot count syllables offline, if it cannot: textstat
    would otherwise try ``nltk.download`` on its first call."""
    try:
        lexicon.nltk_module().data.find("corpora/cmudict")
    except LookupError:
        return note("cmudict_missing")
    return None


def _row(
    key: Key,
    metric: str,
    value: float | None,
    reason: Note | None = None,
    detail: dict[str, Any] | None = None,
) -> ResultRow:
    session_id, round_, method = key
    key_fields: RowKey = {"session_id": session_id, "round": round_, "method": method}
    return result_row(
        key_fields,
        metric,
        value,
        note=None if value is not None else reason,
        detail=detail,
    )


def _ertd_row(
    key: Key, reference: tuple[float | None, Note | None], text: str
) -> ResultRow:
    er_dialogue, dialogue_reason = reference
    if dialogue_reason:
        return _row(key, "ertd", None, dialogue_reason)
    er_response, reason = readability(text) if text.strip() else (None, EMPTY)
    detail: dict[str, Any] = {"er_dialogue": er_dialogue, "er_response": er_response}
    value = (
        None
        if reason or er_dialogue is None or er_response is None
        else abs(er_dialogue - er_response)
    )
    return _row(key, "ertd", value, reason, detail)


def session_rows(
    session: dict[str, Any], methods: list[str], problem: Note | None
) -> list[ResultRow]:
    """NVCS and ERTD rows of one session; Er(D) is computed once."""
    keys: list[Key] = []
    texts: list[str] = []
    for round_ in session["rounds"]:
        for method in methods:
            keys.append((session["session_id"], round_["round"], method))
            texts.append(round_["responses"][method]["text"])
    reference = sample_text(session)
    if reference is None:
        return [_row(k, m, None, NO_REFERENCE) for k in keys for m in ("nvcs", "ertd")]
    er_reference = (None, problem) if problem else readability(reference, "dialogues")
    rows = []
    for key, text, score in zip(
        keys, texts, nvcs_scores(reference, texts), strict=True
    ):
        rows.append(_row(key, "nvcs", score, EMPTY))
        rows.append(_ertd_row(key, er_reference, text))
    return rows


def run(
    sessions: list[dict[str, Any]],
    methods: list[str],
    judge: Judge | None,
    options: dict[str, Any],
) -> list[ResultRow]:
    """Rows of a chunk (no judge needed; ``judge`` and ``options`` unused)."""
    problem = cmudict_problem()
    return [row for s in sessions for row in session_rows(s, methods, problem)]


# -- summary ----------------------------------------------------------------
def summarize(rows: SummaryRows, methods: list[str]) -> SuiteSummary:
    """Averages over sessions (the independent unit: rounds of one session
    are correlated), with t-intervals for the dashboard bars."""
    rows = row_source.readable(rows)
    found = session_summary(rows, ("nvcs", "ertd"), methods, streamed=False)
    values, summary, panel = found.values, found.summary, found.intervals
    return {"summary": summary, "session_values": values, "panel": panel}


UNIT = (0.0, 1.0)
SUITE = Suite(
    name="style",
    label=_l("Roleplay style (NVCS, ERTD)"),
    description=_l(
        "Does a method write like the character's sample dialogues? Character n-gram similarity and readability gap."
    ),
    metrics=(
        Metric(
            "nvcs",
            _l("Style similarity (NVCS)"),
            "row",
            True,
            UNIT,
            description=_l(
                "Cosine similarity of character 1-3-gram counts of the sample dialogues and the response."
            ),
        ),
        Metric(
            "ertd",
            _l("Readability gap (ERTD)"),
            "row",
            False,
            (0.0, 100.0),
            description=_l(
                "Absolute difference of Flesch reading ease (clamped to 0-100) between the sample dialogues and the response."
            ),
        ),
        Metric(
            "nvcs_avg",
            _l("Style similarity (NVCS)"),
            "summary",
            True,
            UNIT,
            compare="nvcs",
        ),
        Metric(
            "ertd_avg",
            _l("Readability gap (ERTD)"),
            "summary",
            False,
            (0.0, 100.0),
            compare="ertd",
        ),
    ),
    run=run,
    summarize=summarize,
    session_fields=("sample_dialogues",),
    order=30,
    panel=Panel(
        charts=(
            Chart(
                "style_nvcs",
                "bars_ci",
                _l("NVCS: style similarity to the sample dialogues (higher is closer)"),
                "panel",
                series=(("nvcs", "nvcs"),),
                y_metric="nvcs",
            ),
            Chart(
                "style_ertd",
                "bars_ci",
                _l("ERTD: readability gap to the sample dialogues (lower is closer)"),
                "panel",
                series=(("ertd", "ertd"),),
                y_metric="ertd",
            ),
        ),
    ),
)
