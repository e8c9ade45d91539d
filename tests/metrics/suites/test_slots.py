"""Slots suite: the seed's worked examples that agree with its formulas, the
Unicode-aware canonicalization, merging across rounds and micro-averaging."""

from __future__ import annotations

import json
import math

import pytest

from metrics.suite import Metric
from metrics.suites import slots
from metrics.suites.slots.matching import (
    bleu1,
    canonicalize,
    diff_slots,
    f1,
    merge_writes,
    percentile,
    prf,
    slot_tokens,
    tokens,
)


def session(sid, truth, *writes, latencies=None, method="M"):
    """One session whose method ``method`` writes ``writes[i]`` in round i+1."""
    latencies = latencies or [None] * len(writes)
    rounds = []
    for k, (write, latency) in enumerate(zip(writes, latencies, strict=True), 1):
        response = {"text": "..."}
        if write is not None:
            response["slots"] = write
        if latency is not None:
            response["latency_s"] = latency
        rounds.append(
            {"round": k, "user_message": "hi", "responses": {method: response}}
        )
    return {"session_id": sid, "ground_truth_slots": truth, "rounds": rounds}


def summary_of(sessions, methods=("M",)):
    return slots.summarize(slots.run(sessions, list(methods), None, {}), list(methods))


def value(rows, metric, method="M", session_id=None):
    (row,) = [
        r
        for r in rows
        if r["metric"] == metric
        and r["method"] == method
        and session_id in (None, r["session_id"])
    ]
    return row["value"]


# -- seed worked examples -----------------------------------------------------
@pytest.mark.parametrize(
    ("tp", "fp", "fn", "expected"),
    [
        (7, 3, 0, (0.70, 1.0)),  # precision = 7 / 10
        (12, 0, 3, (1.0, 0.80)),  # recall = 12 / 15
        (0, 0, 5, (0.0, 0.0)),  # no prediction: precision 0.0, as the seed does
        (0, 0, 0, (0.0, 0.0)),
    ],
)
def test_precision_recall(tp, fp, fn, expected):
    precision, recall, _ = prf(tp, fp, fn)
    assert (precision, recall) == pytest.approx(expected)


def test_f1_of_seed_example():
    assert f1(0.70, 0.80) == pytest.approx(0.7467, abs=5e-5)
    assert round(f1(0.70, 0.80), 3) == 0.747
    assert f1(0.0, 0.0) == 0.0


def numbered(n, prefix="f"):
    return {f"{prefix}{i}": f"value {i}" for i in range(n)}


@pytest.mark.parametrize(
    ("truth", "predicted", "metric", "expected"),
    [
        # 7 found + 3 predicted slots the ground truth lacks -> P = 7/10
        (numbered(7), {**numbered(7), **numbered(3, "x")}, "slot_precision", 0.70),
        # 15 ground-truth slots, 12 found -> R = 12/15
        (numbered(15), numbered(12), "slot_recall", 0.80),
    ],
)
def test_seed_examples_end_to_end(truth, predicted, metric, expected):
    s = session("s", {"t": truth}, {"t": predicted})
    assert summary_of([s])["summary"]["M"][metric] == pytest.approx(expected)


def test_token_precision_recall_of_seed_example():
    truth = {("job", "title"): ["software engineer at Google"]}
    predicted = {("job", "title"): ["senior software engineer at Microsoft"]}
    diff = diff_slots(truth, predicted)
    assert (diff.token_matched, diff.token_pred, diff.token_gt) == (3, 5, 4)
    s = session(
        "s",
        {"job": {"title": "software engineer at Google"}},
        {"job": {"title": "senior software engineer at Microsoft"}},
    )
    summary = summary_of([s])["summary"]["M"]
    assert summary["token_precision"] == pytest.approx(3 / 5)
    assert summary["token_recall"] == pytest.approx(3 / 4)
    assert summary["token_f1"] == pytest.approx(f1(0.6, 0.75))
    assert summary["slot_exact"] == 0.0


@pytest.mark.parametrize(
    ("prediction", "reference", "expected"),
    [
        ("engineer", "software engineer", math.exp(-1)),  # seed: 0.368
        ("software engineer", "software engineer", 1.0),
        ("senior software engineer", "software engineer", 2 / 3),  # BP = 1
        ("", "software engineer", 0.0),
        ("北京", "北京市", math.exp(1 - 3 / 2)),
    ],
)
def test_bleu1(prediction, reference, expected):
    score = bleu1(tokens(canonicalize(prediction)), tokens(canonicalize(reference)))
    assert score == pytest.approx(expected)


def test_bleu1_seed_value_rounds_to_0368():
    assert round(bleu1(["engineer"], ["software", "engineer"]), 3) == 0.368


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 19, 20, 21, 100])
def test_p95_is_numpys_linear_interpolation_bit_for_bit(n):
    import numpy as np

    values = sorted(float(v) ** 1.5 / 7 for v in range(3, 3 + n))
    assert percentile(values, 0.95) == float(np.percentile(values, 95))


def test_p95_at_small_n_by_hand():
    assert percentile([1.0], 0.95) == 1.0
    assert percentile([1.0, 2.0], 0.95) == pytest.approx(1.95)  # not the minimum
    assert percentile([1.0, 2.0, 4.0], 0.95) == pytest.approx(3.8)
    assert percentile([float(v) for v in range(1, 21)], 0.95) == pytest.approx(19.05)


# -- canonicalization and tokens ----------------------------------------------
@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("Software Engineer", "software engineer", True),  # seed: exact match
        ("reading, hiking", "reading, swimming", False),  # seed: no match
        ("25 years old", "25", False),  # seed: no match
        ("北京", "上海", False),  # the seed's ASCII rule made both ""
        ("北京市", "北京市", True),
        ("서울", "부산", False),
        ("ＳＥＯＵＬ", "seoul", True),  # NFKC folds full-width letters
        ("Straße", "STRASSE", True),  # casefold, not lower
        ("new_york", "New-York!", True),
        ("東京。", "東京", True),  # CJK punctuation is punctuation
    ],
)
def test_canonical_forms(a, b, same):
    assert (canonicalize(a) == canonicalize(b)) is same
    assert canonicalize(a)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("software engineer at google", ["software", "engineer", "at", "google"]),
        ("서울 강남구", ["서", "울", "강", "남", "구"]),
        ("北京市", ["北", "京", "市"]),
        ("东京タワー", ["东", "京", "タ", "ワ", "ー"]),
        ("k팝 fan", ["k", "팝", "fan"]),
        ("", []),
    ],
)
def test_tokens_split_cjk_and_hangul_per_character(text, expected):
    assert tokens(text) == expected


def test_chinese_and_korean_values_end_to_end():
    truth = {"basic_info": {"city": "北京市", "hometown": "서울"}}
    predicted = {"basic_info": {"city": "北京市", "hometown": "부산"}}
    summary = summary_of([session("s", truth, predicted)])["summary"]["M"]
    assert summary["slot_recall"] == 1.0
    assert summary["slot_exact"] == 0.5  # 北京市 exact, 부산 != 서울
    # tokens: 北/京/市 match 3 of 3; 부/산 vs 서/울 match 0 of 2
    assert summary["token_precision"] == pytest.approx(3 / 5)
    assert slot_tokens(["서울"]) == ["서", "울"]


# -- slot-level counting ------------------------------------------------------
def test_empty_predictions_are_all_false_negatives():
    truth = {"basic_info": {"name": "Ann", "age": "25"}}
    rows = slots.run(
        [session("s", truth, {}, {"basic_info": {"name": ""}})], ["M"], None, {}
    )
    assert (value(rows, "slot_tp"), value(rows, "slot_fn"), value(rows, "slot_fp")) == (
        0.0,
        2.0,
        0.0,
    )
    assert value(rows, "slot_f1") == 0.0
    summary = slots.summarize(rows, ["M"])["summary"]["M"]
    assert summary["slot_precision"] == 0.0  # TP + FP == 0
    assert summary["slot_recall"] == 0.0 and summary["slot_exact"] == 0.0
    assert summary["token_precision"] is None and summary["bleu1"] is None


def test_a_method_that_never_writes_slots_is_scored_empty_with_a_note():
    rows = slots.run([session("s", {"t": {"f": "x"}}, None)], ["M"], None, {})
    (row,) = [r for r in rows if r["metric"] == "slot_f1"]
    assert (row["value"], row["status"]) == (0.0, "ok")
    assert row["note"] == "no response of this method carries slots: scored as empty"
    assert row["note_code"] == "no_slots_written"


def test_slots_for_topics_absent_from_ground_truth_are_extra():
    truth = {"basic_info": {"name": "Ann"}}
    predicted = {
        "basic_info": {"name": "Ann"},
        "hobbies": {"sport": ["tennis", "golf"], "music": []},  # empty: not extra
    }
    rows = slots.run([session("s", truth, predicted)], ["M"], None, {})
    assert value(rows, "slot_fp") == 1.0
    assert value(rows, "extra_slots") == 1.0 and value(rows, "extra_values") == 2.0
    assert (
        value(rows, "slot_fp@hobbies") == 1.0
        and value(rows, "slot_tp@basic_info") == 1.0
    )
    result = slots.summarize(rows, ["M"])
    summary = result["summary"]["M"]
    assert summary["slot_precision"] == 0.5 and summary["slot_recall"] == 1.0
    assert summary["slot_precision@hobbies"] == 0.0
    assert summary["slot_f1@basic_info"] == 1.0
    assert (summary["extra_slots"], summary["extra_values"]) == (1.0, 2.0)
    assert result["panel"]["topics"] == ["basic_info", "hobbies"]
    (detail,) = [r["detail"] for r in rows if r["detail"]]
    assert detail["extra"] == [["hobbies", "sport"]]
    assert detail["matched"] == [["basic_info", "name"]] and detail["missed"] == []


def test_found_but_wrong_slot_is_not_exact():
    """The seed counted every found slot as an exact match."""
    truth = {"t": {"a": ["Reading", "Hiking"], "b": "tea"}}
    predicted = {"t": {"a": ["hiking!", "reading"], "b": "coffee"}}
    summary = summary_of([session("s", truth, predicted)])["summary"]["M"]
    assert summary["slot_f1"] == 1.0 and summary["slot_exact"] == 0.5


# -- merging across rounds ----------------------------------------------------
def test_merge_keeps_order_and_drops_canonical_duplicates():
    merged = merge_writes(
        [
            {"loc": {"city": "Seoul"}},
            None,
            {"loc": {"city": ["SEOUL", "Busan"], "country": "Korea"}},
            {"loc": {"city": "busan."}},
        ]
    )
    assert merged == {
        ("loc", "city"): ["Seoul", "Busan"],
        ("loc", "country"): ["Korea"],
    }


@pytest.mark.parametrize(
    ("rounds", "exact"),
    [
        (1, 0.0),  # only "Seoul" written so far
        (2, 1.0),  # round 2 adds "Busan": sets now equal
        (3, 1.0),  # a repeated value changes nothing
    ],
)
def test_prediction_is_the_merge_of_rounds_in_order(rounds, exact):
    truth = {"loc": {"city": ["Seoul", "Busan"]}}
    writes = [  # lists add to the slot's set of values (a string replaces)
        {"loc": {"city": ["Seoul"]}},
        {"loc": {"city": ["busan"]}},
        {"loc": {"city": ["SEOUL"]}},
    ]
    summary = summary_of([session("s", truth, *writes[:rounds])])["summary"]["M"]
    assert summary["slot_exact"] == exact


def test_rounds_are_merged_in_round_order():
    s = session("s", {"t": {"f": ["a", "b"]}}, {"t": {"f": ["b"]}}, {"t": {"f": ["a"]}})
    s["rounds"].reverse()
    rows = slots.run([s], ["M"], None, {})
    (detail,) = [r["detail"] for r in rows if r["detail"]]
    assert detail["predicted"] == {"t": {"f": ["b", "a"]}}


@pytest.mark.parametrize(
    "writes",
    [
        # a correction: a string replaces the slot's value
        [{"t": {"dep": "ely", "day": "mon"}}, {"t": {"dep": "cambridge"}}],
        # MultiWOZ-style: two corrections and a deletion (the user drops a
        # constraint), in later rounds
        [
            {"t": {"dep": "ely", "day": "sun", "food": "thai"}},
            {"t": {"day": "mon", "dep": "Ely"}},
            {"t": {"dep": "cambridge", "food": None}},
        ],
        # a deletion, then the value again
        [
            {"t": {"dep": "ely", "day": "mon", "x": "y"}},
            {"t": {"dep": None, "x": None}},
            {"t": {"dep": {"value": "cambridge", "append": False}}},
        ],
        # the whole state each round (a snapshot replaces everything)
        [
            {"slots_state": {"t": {"dep": "ely", "day": "tue"}}},
            {"slots_state": {"t": {"dep": "cambridge", "day": "mon"}}},
        ],
    ],
)
def test_a_tracker_that_writes_the_gold_state_scores_one(writes):
    truth = {"t": {"dep": "cambridge", "day": "mon"}}
    rounds = [w if "slots_state" in w else {"slots": w} for w in writes]
    s = session("s", truth, *[{} for _ in rounds])
    for round_, response in zip(s["rounds"], rounds, strict=True):
        round_["responses"]["M"] = {"text": "ok", **response}
    summary = summary_of([s])["summary"]["M"]
    assert (summary["slot_precision"], summary["slot_recall"]) == (1.0, 1.0)
    assert (summary["slot_f1"], summary["slot_exact"]) == (1.0, 1.0)


# -- sessions the suite cannot score ------------------------------------------
@pytest.mark.parametrize(
    ("truth", "note"),
    [
        (None, "session lacks ground_truth_slots"),
        ({}, "ground_truth_slots has no non-empty value"),  # present, but empty
        ({"t": {"f": ["", "?"]}}, "ground_truth_slots has no non-empty value"),
    ],
)
def test_unscorable_sessions_give_one_not_applicable_row_per_method(truth, note):
    s = session("s", truth, {"t": {"f": "x"}})
    s["rounds"][0]["responses"]["N"] = {"text": "..."}
    rows = slots.run([s], ["M", "N"], None, {})
    assert [
        (r["method"], r["metric"], r["status"], r["value"], r["note"]) for r in rows
    ] == [
        ("M", "slot_f1", "not_applicable", None, note),
        ("N", "slot_f1", "not_applicable", None, note),
    ]
    assert slots.summarize(rows, ["M", "N"])["summary"]["M"]["slot_f1"] is None


# -- latency ------------------------------------------------------------------
def test_latency_is_summed_per_session_and_summarized_over_sessions():
    sessions = [
        session(f"s{i}", {"t": {"f": "x"}}, {}, {}, latencies=[float(i), 0.5])
        for i in range(1, 21)
    ]
    result = summary_of(sessions)
    summary = result["summary"]["M"]
    per_session = [i + 0.5 for i in range(1, 21)]
    assert summary["latency_mean"] == pytest.approx(sum(per_session) / 20)
    assert summary["latency_median"] == pytest.approx(11.0)
    assert summary["latency_p95"] == pytest.approx(19.55)  # 19.5 + 0.05 x (20.5 - 19.5)
    assert summary["latency_total"] == pytest.approx(sum(per_session))
    assert result["session_values"]["latency"]["M"]["s3"] == 3.5
    assert result["panel"]["latency_p95"] == {"M": pytest.approx(19.55)}
    assert sorted(result["panel"]["latency"]["M"]) == per_session


@pytest.mark.parametrize(
    ("latencies", "expected", "status", "note"),
    [
        # a method that reports no latency: the metric does not apply to it
        (
            [None, None],
            None,
            "not_applicable",
            "no response of this method has latency_s",
        ),
        # a partial sum would understate the session's time: no number
        ([2.0, None], None, "unscored", "latency_s missing in 1 of 2 rounds"),
        ([2.0, 3.0], 5.0, "ok", None),
    ],
)
def test_session_latency(latencies, expected, status, note):
    rows = slots.run(
        [session("s", {"t": {"f": "x"}}, {}, {}, latencies=latencies)], ["M"], None, {}
    )
    (row,) = [r for r in rows if r["metric"] == "latency"]
    assert (row["value"], row["status"], row["note"]) == (expected, status, note)


# -- aggregation --------------------------------------------------------------
def two_sessions():
    good = session(
        "a",
        {"basic_info": {"name": "Ann", "city": "北京"}, "interests": {"sport": "golf"}},
        {"basic_info": {"name": "ann"}},
        {
            "basic_info": {"city": "北京"},
            "interests": {"sport": "golf", "music": "jazz"},
        },
        latencies=[1.0, 2.0],
    )
    poor = session(
        "b",
        {"basic_info": {"name": "Bo"}, "mental_state": {"mood": "calm"}},
        {"mental_state": {"mood": "anxious"}, "x": {"y": ["1", "2"]}},
        latencies=[4.0],
    )
    return [good, poor]


def test_summarize_over_two_chunks_equals_summarize_over_one():
    first, second = two_sessions()
    one_chunk = slots.run([first, second], ["M"], None, {})
    two_chunks = slots.run([first], ["M"], None, {}) + slots.run(
        [second], ["M"], None, {}
    )
    assert slots.summarize(two_chunks, ["M"]) == slots.summarize(one_chunk, ["M"])
    assert (
        slots.summarize(list(reversed(one_chunk)), ["M"])["summary"]
        == (slots.summarize(one_chunk, ["M"])["summary"])
    )


def test_summary_is_micro_averaged():
    result = summary_of(two_sessions())
    summary = result["summary"]["M"]
    # a: TP 3 FP 1 FN 0; b: TP 1 FP 1 FN 1 -> TP 4, FP 2, FN 1
    assert summary["slot_precision"] == pytest.approx(4 / 6)
    assert summary["slot_recall"] == pytest.approx(4 / 5)
    assert summary["slot_f1"] == pytest.approx(f1(4 / 6, 4 / 5))
    session_f1 = result["session_values"]["slot_f1"]["M"]
    assert session_f1 == pytest.approx({"a": f1(3 / 4, 1.0), "b": f1(0.5, 0.5)})
    assert summary["slot_f1"] != pytest.approx(sum(session_f1.values()) / 2)
    assert summary["slot_exact"] == pytest.approx(3 / 5)
    assert summary["bleu1"] == pytest.approx(3 / 4)  # 1, 1, 1 and 0 over 4 matched
    assert summary["slot_recall@mental_state"] == 1.0
    assert summary["slot_precision@x"] == 0.0
    assert result["panel"]["per_topic_f1"]["M"]["basic_info"] == pytest.approx(
        f1(1.0, 2 / 3)
    )


def test_methods_are_scored_separately_and_summarize_ignores_other_rows():
    s = session("s", {"t": {"f": "x"}}, {"t": {"f": "x"}})
    s["rounds"][0]["responses"]["N"] = {"text": "...", "slots": {"t": {"f": "y"}}}
    other = {
        "session_id": "s",
        "round": 1,
        "method": "M",
        "metric": "al",
        "value": 9.0,
        "status": "ok",
        "note": None,
    }
    rows = [*slots.run([s], ["M", "N"], None, {}), other]
    summary = slots.summarize(rows, ["M", "N", "Z"])["summary"]
    assert (summary["M"]["slot_exact"], summary["N"]["slot_exact"]) == (1.0, 0.0)
    assert all(v is None for v in summary["Z"].values())


# -- row contract and registry -------------------------------------------------
def test_rows_follow_the_suite_contract():
    rows = slots.run(two_sessions(), ["M"], None, {})
    keys = {
        "session_id",
        "round",
        "method",
        "metric",
        "value",
        "status",
        "note",
        "note_code",
        "note_params",
        "detail",
    }
    assert all(set(r) == keys and r["round"] is None for r in rows)
    assert all(r["status"] in ("ok", "not_applicable", "unscored") for r in rows)
    assert not any(
        r["status"] == "not_configured" for r in rows
    )  # judge None: no slot_judge
    json.dumps(rows)
    json.dumps(slots.summarize(rows, ["M"]))
    details = [r for r in rows if r["detail"] is not None]
    assert [r["metric"] for r in details] == ["slot_f1", "slot_f1"]
    assert set(details[0]["detail"]) >= {
        "ground_truth",
        "predicted",
        "matched",
        "missed",
        "extra",
    }


def test_metrics_registry_covers_every_fixed_id():
    ids = [m.id for m in slots.SUITE.metrics]
    assert len(ids) == len(set(ids))
    assert all(
        isinstance(m, Metric) and m.suite == "slots" for m in slots.SUITE.metrics
    )
    assert all(
        not m.needs_judge
        for m in slots.SUITE.metrics
        if not m.id.startswith("slot_judge")
    )
    rows = slots.run(two_sessions(), ["M"], None, {})
    emitted = {r["metric"] for r in rows if "@" not in r["metric"]}
    summary_ids = {
        k for k in summary_of(two_sessions())["summary"]["M"] if "@" not in k
    }
    assert emitted | summary_ids <= set(ids)
    by_id = {m.id: m for m in slots.SUITE.metrics}
    lower_is_better = [i for i in ids if i.startswith(("latency", "extra_"))]
    assert all(not by_id[i].higher_is_better for i in lower_is_better)
    assert (
        by_id["slot_f1"].compare == "slot_f1"
        and by_id["latency_mean"].compare == "latency"
    )


def test_slot_updates_and_snapshots_are_validated():
    import io
    import json

    import dataset

    def check(response: dict):
        line = {
            "session_id": "s",
            "user_profile": "p",
            "user_personality": "q",
            "ground_truth_slots": {"t": {"dep": "cambridge"}},
            "rounds": [
                {
                    "round": 1,
                    "user_message": "hi",
                    "responses": {"M": {"text": "ok", **response}},
                }
            ],
        }
        stream = io.BytesIO(json.dumps(line).encode())
        report = dataset.validate_stream(stream, "s.jsonl")
        return {(p.path, p.code) for p in report.errors}

    fine = {"t": {"dep": None, "day": {"value": ["mon"], "append": True}, "x": "y"}}
    assert check({"slots": fine}) == set()
    assert check({"slots_state": {"t": {"dep": "ely"}}}) == set()
    path = "rounds[0].responses.M"
    assert check({"slots": {"t": {"dep": {"append": "yes"}}}}) == {
        (f"{path}.slots.t.dep.value", "missing_field"),
        (f"{path}.slots.t.dep.append", "wrong_type"),
    }
    assert check({"slots_state": {"t": {"dep": None}}}) == {
        (f"{path}.slots_state.t.dep", "wrong_type")  # a snapshot deletes by leaving out
    }
