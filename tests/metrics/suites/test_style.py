"""Style suite: NVCS and ERTD rows, summaries, offline textstat."""

from __future__ import annotations

import json

import pytest

from config import PROJECT_ROOT
from metrics import lexicon
from metrics.suite import Metric
from metrics.suites import style
from tests import crafted

NLTK_DATA = PROJECT_ROOT / "nltk_data"
DIALOGUES = [
    "Oh, you look like a rainy Sunday that needs a warm blanket.",
    "Let me fix you something gentle. Chamomile? Honey?",
]
ENGLISH = [
    "Welcome back! A chai latte is like a warm hug for tired nerves.",
    "Hi. Go. Run.",  # Flesch > 100: clamped to 100
    "Notwithstanding institutionalized interdisciplinary considerations, "
    "multidimensional organizational characteristics necessitate "
    "comprehensive reconceptualization.",  # Flesch < 0: clamped to 0
]


@pytest.fixture(autouse=True)
def project_nltk_data():
    lexicon.configure(str(NLTK_DATA))
    yield
    lexicon.configure(str(NLTK_DATA))


def session(responses: list[str], dialogues=DIALOGUES, sid="s1") -> dict:
    return {
        "session_id": sid,
        "sample_dialogues": dialogues,
        "rounds": [
            {"round": k, "user_message": "hi", "responses": {"M": {"text": text}}}
            for k, text in enumerate(responses, start=1)
        ],
    }


def rows_of(rows: list[dict], metric: str) -> list[dict]:
    return [row for row in rows if row["metric"] == metric]


def clamped_fre(text: str) -> float:
    import textstat

    return min(max(textstat.flesch_reading_ease(text), 0.0), 100.0)


# -- NVCS -------------------------------------------------------------------
def test_identical_texts_score_exactly_one():
    text = "Ahoy there! Drop anchor and rest your bones, the chowder's hot. ~(^_^)~"
    assert style.nvcs(text, text) == 1.0
    assert style.nvcs_scores(text, [text, text]) == [1.0, 1.0]


def test_texts_without_a_shared_character_score_zero():
    assert style.nvcs("abc def", "XYZ!?") == 0.0
    assert style.nvcs("你好", "hello") == 0.0


def test_case_is_kept():
    assert style.nvcs("ABC", "abc") == 0.0


@pytest.mark.parametrize(
    ("a", "b"),
    [("Nice day!", "nice day."), ("GG, respect.", "Respect, I guess... GG")],
)
def test_nvcs_is_symmetric(a, b):
    assert style.nvcs(a, b) == pytest.approx(style.nvcs(b, a), abs=1e-12)


def test_one_vocabulary_per_session_equals_one_vectorizer_per_pair():
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.metrics.pairwise import cosine_similarity

    reference = "\n".join(DIALOGUES)
    batched = style.nvcs_scores(reference, ENGLISH)
    for text, score in zip(ENGLISH, batched, strict=True):
        pair = CountVectorizer(
            analyzer="char", ngram_range=(1, 3), lowercase=False
        ).fit_transform([reference, text])
        assert score == pytest.approx(cosine_similarity(pair[0], pair[1])[0, 0])


def test_sample_dialogues_are_joined_by_newlines():
    joined = "\n".join(DIALOGUES)
    rows = style.run([session([joined])], ["M"], None, {})
    assert rows_of(rows, "nvcs")[0]["value"] == 1.0
    assert style.sample_text({"sample_dialogues": "one string"}) == "one string"


# -- ERTD -------------------------------------------------------------------
def test_ertd_is_the_difference_of_clamped_flesch_scores():
    rows = style.run([session(ENGLISH)], ["M"], None, {})
    er_dialogue = clamped_fre("\n".join(DIALOGUES))
    for text, row in zip(ENGLISH, rows_of(rows, "ertd"), strict=True):
        assert row["status"] == "ok"
        assert row["value"] == pytest.approx(abs(er_dialogue - clamped_fre(text)))
        assert row["detail"] == {
            "er_dialogue": pytest.approx(er_dialogue),
            "er_response": pytest.approx(clamped_fre(text)),
        }
    details = [row["detail"]["er_response"] for row in rows_of(rows, "ertd")]
    assert details[1:] == [100.0, 0.0]


@pytest.mark.parametrize(
    "text",
    ["我今天想喝一杯热茶，谢谢。", "오늘은 따뜻한 차 한 잔 주세요.", "😊😊", "12345"],
)
def test_ertd_is_not_applicable_where_flesch_does_not_apply(text):
    rows = style.run([session([text])], ["M"], None, {})
    (ertd,) = rows_of(rows, "ertd")
    assert (ertd["value"], ertd["status"]) == (None, "not_applicable")
    assert ertd["note_code"].startswith("response_")
    assert rows_of(rows, "nvcs")[0]["status"] == "ok"


def test_chinese_sample_dialogues_leave_every_ertd_not_applicable():
    rows = style.run(
        [session(ENGLISH, dialogues=["客官里边请，今日新到的明前龙井。"])],
        ["M"],
        None,
        {},
    )
    assert {row["status"] for row in rows_of(rows, "ertd")} == {"not_applicable"}
    # one reason for text in another script, Chinese alone (0%) included
    assert rows_of(rows, "ertd")[0]["note"] == (
        "the sample dialogues are mostly non-Latin script (0% Latin letters)"
    )


def test_mostly_non_latin_text_is_not_applicable_with_its_share():
    value, reason = style.readability("안녕하세요 손님, hi")
    assert value is None
    assert reason.status == "not_applicable"
    assert reason.english == (
        "the response is mostly non-Latin script (22% Latin letters)"
    )


def test_missing_cmudict_is_unscored_and_never_downloads(tmp_path, monkeypatch):
    def no_download(*args, **kwargs):
        raise AssertionError("nltk.download called")

    monkeypatch.setattr("nltk.download", no_download)
    lexicon.configure(str(tmp_path))
    rows = style.run([session(ENGLISH[:1])], ["M"], None, {})
    (ertd,) = rows_of(rows, "ertd")
    assert ertd["status"] == "unscored"
    assert "CMUdict" in ertd["note"]


# -- unscored inputs ----------------------------------------------------------
def test_empty_response_is_unscored():
    rows = style.run([session(["  \n", ENGLISH[0]])], ["M"], None, {})
    empty = [row for row in rows if row["round"] == 1]
    assert [(r["metric"], r["status"], r["note"]) for r in empty] == [
        ("nvcs", "unscored", "empty response"),
        ("ertd", "unscored", "empty response"),
    ]
    assert all(row["status"] == "ok" for row in rows if row["round"] == 2)


@pytest.mark.parametrize("dialogues", [None, [], "", ["  "]])
def test_session_without_sample_dialogues(dialogues):
    rows = style.run([session(ENGLISH[:2], dialogues=dialogues)], ["M"], None, {})
    assert len(rows) == 2 * crafted.per_item("style")
    assert {(r["status"], r["note"]) for r in rows} == {
        ("not_applicable", "session lacks sample_dialogues")
    }
    assert all(row["value"] is None for row in rows)


# -- summary ----------------------------------------------------------------
def test_summary_averages_session_means_and_feeds_the_panel():
    sessions = [
        session(ENGLISH, sid="a"),
        session(["Hi. Go. Run.", "我今天想喝一杯热茶。"], sid="b"),
    ]
    rows = style.run(sessions, ["M"], None, {})
    result = style.summarize(rows, ["M", "Absent"])
    json.dumps(result)
    nvcs = result["session_values"]["nvcs"]["M"]
    expected_a = sum(r["value"] for r in rows[:6] if r["metric"] == "nvcs") / 3
    assert nvcs["a"] == pytest.approx(expected_a)
    ertd_b = result["session_values"]["ertd"]["M"]["b"]  # only the English row
    assert ertd_b == rows_of(rows, "ertd")[3]["value"]
    summary = result["summary"]["M"]
    assert summary["nvcs_avg"] == pytest.approx((nvcs["a"] + nvcs["b"]) / 2)
    panel = result["panel"]["M"]
    assert panel["nvcs"]["n"] == 2
    assert panel["nvcs"]["ci_low"] < panel["nvcs"]["mean"] < panel["nvcs"]["ci_high"]
    assert result["summary"]["Absent"] == {"nvcs_avg": None, "ertd_avg": None}


def test_metrics_declare_every_emitted_id():
    ids = {metric.id: metric for metric in style.SUITE.metrics}
    rows = style.run([session(ENGLISH)], ["M"], None, {})
    assert {row["metric"] for row in rows} <= set(ids)
    summary = style.summarize(rows, ["M"])["summary"]["M"]
    assert set(summary) <= set(ids)
    assert ids["ertd"].higher_is_better is False
    assert ids["ertd_avg"].higher_is_better is False
    assert ids["nvcs"].bounds == (0.0, 1.0)
    assert all(isinstance(m, Metric) for m in style.SUITE.metrics)
