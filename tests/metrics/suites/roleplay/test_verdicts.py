"""The roleplay judge's replies read strictly (metrics/suites/roleplay/verdicts.py):
JERA's 30 Likert answers summed per scale, ALMP's attributes counted once."""

import json

from metrics.suites.roleplay.verdicts import JERA_SCALES, parse_almp, parse_jera


def jera(**scales):
    answers = {scale: [5] * 10 for scale in JERA_SCALES}
    answers.update(scales)
    return json.dumps(answers)


def test_jera_totals_the_three_scales():
    verdict = parse_jera(jera(immersivity=[10] * 10, creativity=[1] * 10))
    assert verdict.score == 100 + 50 + 10
    assert verdict.parts == {
        "immersivity": 100.0,
        "consistency": 50.0,
        "creativity": 10.0,
    }


def test_jera_refuses_what_is_not_thirty_answers_from_1_to_10():
    assert parse_jera(jera(consistency=[5] * 9)) is None
    assert parse_jera(jera(consistency=[5] * 9 + [11])) is None
    assert parse_jera(jera(consistency=[5] * 9 + [True])) is None  # JSON true is no 1
    assert parse_jera(json.dumps({**json.loads(jera()), "extra": 1})) is None
    assert parse_jera("The reply is immersive: 9/10.") is None


def test_almp_counts_distinct_attributes_keeping_the_first_spelling():
    verdict = parse_almp('["Kind", "kind", "  loves   cats ", "brave"]')
    assert verdict.score == 3
    assert verdict.items == ["Kind", "loves cats", "brave"]
    assert parse_almp("[]").score == 0


def test_almp_refuses_empty_or_overlong_attributes_and_other_shapes():
    assert parse_almp('["", "kind"]') is None
    assert parse_almp(json.dumps(["x" * 81])) is None
    assert parse_almp('{"attributes": ["kind"]}') is None
    assert parse_almp("[1, 2]") is None
