"""Roleplay suite: JERA/ALMP parsers, attribute matching, rows through a fake
judge (whose replies come from the scripted judge server's ``decide``)."""

from __future__ import annotations

import json

import pytest

from config import PROJECT_ROOT
from metrics import lexicon
from metrics.judging import load_prompt
from metrics.suites import roleplay
from metrics.suites.roleplay import JERA, parse_almp, parse_jera
from tests import crafted
from tests.fake_judge import FakeJudge, scripted, user_text

NLTK_DATA = PROJECT_ROOT / "nltk_data"
ATTRIBUTES = ["Cheerful", "adventurous", "happy", "stubborn"]
MARKED = "Sure! [[attr=cheerful]] [[attr=adventerous]] [[implied=glad]] [[jera=7]]"


@pytest.fixture(autouse=True)
def project_wordnet():
    lexicon.configure(str(NLTK_DATA))
    yield
    lexicon.configure(str(NLTK_DATA))


def questionnaire(imm=7, con=7, cre=7, **extra) -> str:
    return json.dumps(
        {"immersivity": [imm] * 10, "consistency": [con] * 10, "creativity": [cre] * 10}
        | extra
    )


def session(text=MARKED, attributes=ATTRIBUTES, sid="s1", rounds=2) -> dict:
    return {
        "session_id": sid,
        "user_profile": "p",
        "user_personality": "q",
        "attributes": attributes,
        "sample_dialogues": ["Ahoy there!", "Clear skies tonight."],
        "rounds": [
            {
                "round": k,
                "user_message": f"message {k}",
                "responses": {"M": {"text": text if k == rounds else f"reply {k}"}},
            }
            for k in range(1, rounds + 1)
        ],
    }


def by_metric(rows: list[dict]) -> dict[str, dict]:
    return {row["metric"]: row for row in rows}


# -- parsers ------------------------------------------------------------------
def test_jera_parses_a_plain_or_fenced_questionnaire():
    verdict = parse_jera(questionnaire(8, 6, 5, reasoning="vivid but repetitive"))
    assert verdict.score == 190.0
    assert verdict.parts == {
        "immersivity": 80.0,
        "consistency": 60.0,
        "creativity": 50.0,
    }
    assert verdict.reasoning == "vivid but repetitive"
    fenced = parse_jera(f"```json\n{questionnaire(1, 10, 3)}\n```")
    assert (fenced.score, fenced.parts["consistency"]) == (140.0, 100.0)


def _answers(**changes) -> str:
    data = json.loads(questionnaire())
    data.update(changes)
    return json.dumps(data)


@pytest.mark.parametrize(
    "reply",
    [
        _answers(immersivity=[7] * 9),  # 29 answers
        _answers(consistency=[7] * 9 + [11]),  # an 11
        _answers(creativity=[7] * 9 + [0]),
        _answers(immersivity=["seven"] * 10),  # text instead of numbers
        _answers(immersivity=[7.5] * 10),
        _answers(immersivity=[True] * 10),
        _answers(immersivity=[7] * 11),
        _answers(extra=[1]),
        _answers(reasoning=3),
        json.dumps({"immersivity": [7] * 10, "consistency": [7] * 10}),
        json.dumps([[7] * 10] * 3),
        "Here is my evaluation:\n" + questionnaire(),
        questionnaire() + "\nHope this helps.",
        "Immersivity: 70/100, Consistency: 70/100, Creativity: 70/100",
        "",
    ],
)
def test_jera_rejects_anything_but_thirty_likert_integers(reply):
    assert parse_jera(reply) is None


def test_almp_parses_a_list_of_short_strings():
    verdict = parse_almp('```json\n["Cheerful", "loves  tea", "cheerful"]\n```')
    assert verdict.items == ["Cheerful", "loves tea"]
    assert verdict.score == 2.0
    assert verdict.to_dict()["items"] == ["Cheerful", "loves tea"]
    assert parse_almp("[]").items == []


@pytest.mark.parametrize(
    "reply",
    [
        '{"attributes": ["shy"]}',
        "[1, 2]",
        '["shy", null]',
        '["  "]',
        json.dumps(["x" * 81]),
        "cheerful, shy",
        'Attributes: ["shy"]',
        "",
    ],
)
def test_almp_rejects_anything_but_a_json_list_of_strings(reply):
    assert parse_almp(reply) is None


def test_parsers_are_registered_by_mode():
    modes = {mode.name: mode for mode in roleplay.SUITE.modes}
    assert modes["jera"].parse is parse_jera
    assert modes["almp_extract"].parse is modes["almp_infer"].parse is parse_almp


# -- matching -----------------------------------------------------------------
def test_almp_exact_fuzzy_wordnet_and_miss_give_three_quarters():
    result = roleplay.match_attributes(ATTRIBUTES, ["cheerful ", "adventerous", "glad"])
    assert result["value"] == 0.75
    assert result["matched"] == [
        {"attribute": "Cheerful", "observed": "cheerful ", "reason": "exact"},
        {"attribute": "adventurous", "observed": "adventerous", "reason": "fuzzy 90.9"},
        {"attribute": "happy", "observed": "glad", "reason": "wordnet glad.s.01"},
    ]
    assert result["missed"] == ["stubborn"]


def test_fuzzy_needs_a_ratio_above_85():
    no_wordnet = lambda phrase: frozenset()  # noqa: E731
    twenty = "abcdefghijklmnopqrst"
    assert roleplay.match(twenty, ["abcdefghijklmnopqXYZ"], no_wordnet) is None  # 85
    assert roleplay.match("abcdefg", ["abcdefh"], no_wordnet) == (
        "abcdefh",
        "fuzzy 85.7",
    )


def test_multi_word_attributes_try_the_collocation_then_the_head_word():
    assert roleplay.wordnet_senses("ice cream") == lexicon.synsets("ice cream")
    assert roleplay.wordnet_senses("very shy") == lexicon.synsets("shy")
    assert roleplay.match("very shy", ["timid"]) == ("timid", "wordnet diffident.a.02")


def test_without_wordnet_exact_and_fuzzy_still_score(tmp_path):
    lexicon.configure(str(tmp_path))
    rows = roleplay.run([session()], ["M"], FakeJudge(), {})
    almp = by_metric(rows)["almp"]
    assert (almp["status"], almp["value"]) == ("ok", 0.5)
    assert almp["note_code"] == "no_wordnet"
    assert almp["detail"]["wordnet"] is False
    assert almp["detail"]["wordnet_problem"].startswith("WordNet data")


# -- rows through a judge -------------------------------------------------------
def test_one_batch_per_chunk_and_rows_from_the_scripted_judge():
    judge = FakeJudge()
    sessions = [session(sid="a"), session(sid="b", attributes=[])]
    rows = roleplay.run(sessions, ["M"], judge, {})
    assert len(judge.batches) == 1
    assert [item.mode.name for item in judge.batches[0]] == [
        "jera",
        "almp_extract",
        "almp_infer",
        "jera",
    ]
    a = by_metric([row for row in rows if row["session_id"] == "a"])
    assert a["jera"]["value"] == 210.0
    assert {
        a[f"jera_{s}"]["value"] for s in ("immersivity", "consistency", "creativity")
    } == {70.0}
    assert a["almp"]["value"] == 0.75
    assert a["almp"]["detail"]["missed"] == ["stubborn"]
    assert a["almp"]["detail"]["extracted"] == ["cheerful", "adventerous"]
    assert a["almp"]["detail"]["inferred"] == ["glad"]
    assert a["almp"]["detail"]["wordnet"] is True
    assert all(row["round"] is None and row["status"] == "ok" for row in a.values())
    b = by_metric([row for row in rows if row["session_id"] == "b"])
    assert (b["almp"]["status"], b["almp"]["note"]) == (
        "not_applicable",
        "attributes has no non-empty value",  # present, but [] (not "lacks")
    )
    assert b["jera"]["status"] == "ok"
    json.dumps(rows)


def test_prompts_carry_the_whole_scene_attributes_and_sample_dialogues():
    items = roleplay.request_items(session(), "M", samples=1)
    jera = user_text(items["jera"][0])
    assert "JERA roleplay questionnaire" in jera
    assert "- Cheerful\n- adventurous" in jera
    assert "Ahoy there!\nClear skies tonight." in jera
    assert "User: message 1\nAssistant: reply 1\n\nUser: message 2" in jera
    assert "ALMP extraction task" in user_text(items["almp_extract"][0])
    assert "ALMP inference task" in user_text(items["almp_infer"][0])
    assert "Cheerful" not in user_text(items["almp_infer"][0])  # no leading
    bare = roleplay.request_items(session(attributes=[]), "M", samples=1)
    assert list(bare) == ["jera"]
    assert "## Character attribute list\n(none)" in user_text(bare["jera"][0])


def test_prompt_fields_stay_literal():
    messages = load_prompt(JERA.prompt).render(
        attributes="$HOME", sample_dialogues="${x}", scene="学生 <b>"
    )
    assert "<<<SCENE\n学生 <b>\nSCENE>>>" in messages[1]["content"]
    assert "$HOME" in messages[1]["content"]


def test_garbage_replies_leave_the_session_unscored_with_the_raw_text():
    rows = roleplay.run([session("[[fault=garbage]] hm")], ["M"], FakeJudge(), {})
    assert len(rows) == crafted.per_item("roleplay")
    assert {(r["status"], r["value"]) for r in rows} == {("unscored", None)}
    jera = by_metric(rows)["jera"]
    assert jera["note_code"] == "unparseable"
    assert jera["detail"]["failed_mode"] == "jera"
    assert jera["detail"]["raw"] == "I think this reply is quite good overall!"
    assert by_metric(rows)["almp"]["detail"]["failed_mode"] == "almp_extract"


def test_out_of_range_answers_from_the_judge_are_unscored():
    rows = roleplay.run([session("[[jera=11]]")], ["M"], FakeJudge(), {})
    assert by_metric(rows)["jera"]["status"] == "unscored"


def test_transport_errors_are_errors():
    rows = roleplay.run([session()], ["M"], FakeJudge(status="error"), {})
    assert {(r["status"], r["note"]) for r in rows} == {
        ("error", "judge answered HTTP 503")
    }
    modes = {r["metric"]: r["detail"]["failed_mode"] for r in rows}
    assert (modes["jera"], modes["almp"]) == ("jera", "almp_extract")


def test_samples_are_averaged():
    answers = iter([questionnaire(5, 5, 5), questionnaire(9, 9, 9)])

    def reply(item):
        return next(answers) if item.mode.name == "jera" else '["cheerful"]'

    rows = by_metric(roleplay.run([session()], ["M"], FakeJudge(reply), {"samples": 2}))
    assert rows["jera"]["value"] == 210.0
    assert rows["jera"]["detail"]["samples"] == [150.0, 270.0]
    assert rows["jera"]["detail"]["spread"] == 60.0
    assert rows["almp"]["value"] == 0.25


def test_without_a_judge_rows_are_not_configured():
    rows = roleplay.run([session(), session(sid="b", attributes=None)], ["M"], None, {})
    statuses = {(r["session_id"], r["metric"]): r["status"] for r in rows}
    assert statuses[("s1", "almp")] == statuses[("s1", "jera")] == "not_configured"
    assert statuses[("b", "jera_creativity")] == "not_configured"
    assert statuses[("b", "almp")] == "not_applicable"
    assert len(rows) == 2 * crafted.per_item("roleplay")


# -- scripted judge server, new modes ------------------------------------------
def test_judge_server_answers_the_roleplay_modes():
    items = roleplay.request_items(
        session("[[attr=loves tea]] [[implied=shy]]"), "M", 1
    )
    # the judge knows each mode from its declared templates, not its wording
    replies = {mode: scripted(found[0]) for mode, found in items.items()}
    assert replies["almp_extract"] == '["loves tea"]'
    assert replies["almp_infer"] == '["shy"]'
    verdict = parse_jera(replies["jera"])  # hash-derived, fenced, valid
    assert 30 <= verdict.score <= 300
    assert replies["jera"].startswith("```json\n")


# -- summary --------------------------------------------------------------------
def test_summary_session_values_and_panels():
    sessions = [session(sid=f"s{i}") for i in range(60)]
    sessions.append(session("[[jera=1]] [[attr=stubborn]]", sid="low"))
    rows = roleplay.run(sessions, ["M"], FakeJudge(), {})
    result = roleplay.summarize(rows, ["M", "N"])
    assert set(result["summary"]["N"].values()) == {None}
    assert result["panel"]["almp"]["N"] == []
    json.dumps(result)
    summary = result["summary"]["M"]
    assert summary["jera_avg"] == pytest.approx((60 * 210 + 30) / 61)
    assert summary["almp_avg"] == pytest.approx((60 * 0.75 + 0.25) / 61)
    assert result["session_values"]["jera"]["M"]["low"] == 30.0
    assert set(result["session_values"]) == {"jera", "almp"}
    panel = result["panel"]
    assert panel["jera"]["M"]["creativity"] == pytest.approx((60 * 70 + 10) / 61)
    assert len(panel["almp"]["M"]) == 50
    # the first 50 sessions by id, whatever order their rows came in
    shown = [entry["session_id"] for entry in panel["almp"]["M"]]
    assert shown == sorted(["low", *(f"s{i}" for i in range(60))])[:50]
    assert panel["almp"]["M"][shown.index("s0")]["missed"] == ["stubborn"]
    assert panel["ci"]["M"]["jera"]["n"] == 61
    ids = {metric.id for metric in roleplay.SUITE.metrics}
    assert {row["metric"] for row in rows} | set(summary) <= ids
    assert all(metric.needs_judge for metric in roleplay.SUITE.metrics)


@pytest.mark.parametrize(
    ("attribute", "observed"),
    [
        ("patient", "impatient"),
        ("honest", "dishonest"),
        ("friendly", "unfriendly"),
        ("verbal", "non-verbal"),
    ],
)
def test_a_negation_prefix_is_never_a_fuzzy_match(attribute, observed):
    no_synonyms = lambda phrase: frozenset()  # noqa: E731
    assert roleplay.match(attribute, [observed], no_synonyms) is None
    assert roleplay.match(observed, [attribute], no_synonyms) is None


def test_present_but_empty_attributes_say_empty_not_missing():
    from metrics.suites import roleplay

    base = {
        "session_id": "s",
        "user_profile": "p",
        "user_personality": "q",
        "rounds": [
            {"round": 1, "user_message": "hi", "responses": {"A": {"text": "x"}}}
        ],
    }
    codes = []
    for session in ({**base, "attributes": []}, base):
        rows = roleplay.run([session], ["A"], None, {})
        [almp] = [
            r
            for r in rows
            if r["metric"] == "almp"
            and r["note_code"] in ("empty_field", "missing_field")
        ]
        codes.append(almp["note_code"])
    assert codes == ["empty_field", "missing_field"]
