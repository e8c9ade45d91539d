"""Simulation suite: every formula against hand-computed values, plus edge cases."""

from __future__ import annotations

import json
import math

import pytest
from pytest import approx

from metrics.suites import simulation
from metrics.suites.simulation import Unscored
from tests import crafted

PERSONA = {"type": "busy_professional", "exploration": "no_exploration"}
PERSONA |= {"moods": ["tired", "casual"], "ordering": "all_at_once", "complete": True}


def sim(exploration="no_exploration", mood="tired", ordering="all_at_once", **extra):
    return {"exploration": exploration, "mood": mood, "ordering": ordering, **extra}


def session(sims, persona=PERSONA, target=("Chai Latte", "Turkey Sandwich"), sid="s1"):
    """One method "M"; a ``None`` sim leaves that response without a sim block."""
    rounds = [
        {"round": k, "user_message": "hi", "responses": {"M": {"text": "ok"}}}
        for k in range(1, len(sims) + 1)
    ]
    for round_, block in zip(rounds, sims, strict=True):
        if block is not None:
            round_["responses"]["M"]["sim"] = block
    built = {"session_id": sid, "rounds": rounds, "persona": persona}
    return {**built, "target_order": None if target is None else list(target)}


def by_metric(rows):
    return {row["metric"]: row for row in rows}


# -- PAS -------------------------------------------------------------------
FULL = {"exploration": "explores_menu", "moods": ["happy", "casual"]}
FULL |= {"ordering": "one_by_one", "complete": False}


@pytest.mark.parametrize(
    ("persona", "messages", "expected"),
    [
        # 1 + 1 + 1 + 1 -> 1.0
        (FULL, [sim("explores_menu", "happy", "one_by_one", complete=False)], 1.0),
        # exploration and mood miss -> 0.5
        (FULL, [sim("no_exploration", "sad", "one_by_one", complete=False)], 0.5),
        # mean of 1.0, 0.5 and 0.5 (third: exploration and mood hold)
        (
            FULL,
            [
                sim("explores_menu", "happy", "one_by_one", complete=False),
                sim("no_exploration", "sad", "one_by_one", complete=False),
                sim("explores_menu", "casual", "all_at_once", complete=True),
            ],
            2 / 3,
        ),
        # labels compare casefolded, trimmed, hyphen/space -> underscore
        (FULL, [sim("Explores-Menu", " Happy ", "one by one", complete=False)], 1.0),
        # a missing actual value is a miss: no mood, no complete -> 0.5
        (FULL, [{"exploration": "explores_menu", "ordering": "one_by_one"}], 0.5),
        # partial persona: only exploration and ordering scored, weights 1/2 each
        (
            {"exploration": "explores_menu", "ordering": "one_by_one", "moods": []},
            [sim("explores_menu", "sad", "all_at_once")],
            0.5,
        ),
        # complete=False is an attribute, not an absent one: 1 of 1
        ({"complete": False}, [sim(complete=False)], 1.0),
    ],
)
def test_pas_with_persona_attributes(persona, messages, expected):
    value, detail = simulation.persona_adherence(persona, messages)
    assert value == approx(expected)
    assert detail["mode"] == "attributes"


@pytest.mark.parametrize(
    ("persona_type", "message", "expected"),
    [
        ("busy_professional", sim("no_exploration", "casual", "all_at_once"), 1.0),
        ("busy_professional", sim("explores_menu", "happy", "all_at_once"), 0.33),
        ("busy_professional", sim("no_exploration", "frustrated", "one_by_one"), 0.67),
        ("Busy Professional", sim("explores_menu", "sad", "one_by_one"), 0.0),
        ("curious_explorer", sim("explores_menu", "enthusiastic", "x"), 1.0),
        ("curious_explorer", sim("explores_menu", "sad", "x"), 0.5),
        ("explorer", sim("no_exploration", "casual", "x"), 0.5),
        ("indecisive", sim("x", "confused", "one_by_one"), 1.0),
        ("indecisive", sim("x", "casual", "all_at_once"), 0.5),
        ("family_group", sim("explores_menu", "sad", "one_by_one"), 1.0),
        ("family_group", sim("explores_menu", "casual", "all_at_once"), 0.5),
        ("group", sim("no_exploration", "casual", "all_at_once"), 0.0),
    ],
)
def test_pas_fallback_table(persona_type, message, expected):
    value, detail = simulation.persona_adherence({"type": persona_type}, [message])
    assert value == approx(expected)
    assert detail["mode"] == "fallback"


def test_pas_fallback_averages_messages_and_ignores_empty_attributes():
    persona = {"type": "busy_professional", "moods": [], "exploration": ""}
    messages = [sim("no_exploration", "casual"), sim("explores_menu", "happy")]
    value = simulation.persona_adherence(persona, messages)[0]
    assert value == approx((1.0 + 0.33) / 2)


@pytest.mark.parametrize("persona", [{"type": "robot"}, {}, {"type": None}])
def test_pas_unknown_type_without_attributes_is_unscored(persona):
    with pytest.raises(Unscored, match="unknown type"):
        simulation.persona_adherence(persona, [sim()])


# -- BVS -------------------------------------------------------------------
@pytest.mark.parametrize(
    ("tr_avg", "expected"),
    [(0.0, 0.0), (0.1, 0.5), (0.2, 1.0), (0.6, 0.5), (1.0, 0.0), (0.05, 0.25)],
)
def test_bvs_piecewise_peak(tr_avg, expected):
    assert simulation.variance_score(tr_avg) == approx(expected)


@pytest.mark.parametrize(
    ("states", "rates", "expected"),
    [
        # ordering changes once in 5 transitions; TR_avg = 0.2 / 3
        ([("a", "x", "m")] * 3 + [("b", "x", "m")] * 3, (0.2, 0, 0), 1 / 3),
        # ordering changes 3 times in 5: TR_avg = 0.2 -> peak
        ([(o, "x", "m") for o in "aabbab"], (0.6, 0, 0), 1.0),
        # only mood changes, M = 2: TR_avg = 1/3 -> 1 - (1/3 - 0.2)/0.8
        ([("a", "x", "m"), ("a", "x", "n")], (0, 0, 1), 1 - (1 / 3 - 0.2) / 0.8),
        # every dimension changes every time: TR_avg = 1 -> 0
        ([("a", "x", "m"), ("b", "y", "n"), ("a", "x", "m")], (1, 1, 1), 0.0),
        # static behaviour -> 0
        ([("a", "x", "m")] * 4, (0, 0, 0), 0.0),
    ],
)
def test_bvs_transition_rates(states, rates, expected):
    messages = [sim(exploration=e, mood=m, ordering=o) for o, e, m in states]
    value, detail = simulation.behavioral_variance(messages)
    assert value == approx(expected)
    got = detail["transition_rates"]
    assert (got["ordering"], got["exploration"], got["mood"]) == approx(rates)
    assert detail["m"] == len(states)


def test_bvs_needs_two_messages():
    with pytest.raises(Unscored, match="fewer than two guest messages"):
        simulation.behavioral_variance([sim()])


# -- ORA -------------------------------------------------------------------
@pytest.mark.parametrize(
    ("item", "expected"),
    [
        ("The Turkey & Avocado Sandwich", "turkey avocado sandwich"),
        ("a large oat-milk chai latte", "large oat milk chai latte"),
        ("  Mac   AND   Cheese, with Bacon!! ", "mac cheese bacon"),
        ("Chef's Special (on the side)", "chefs special side"),
        ("一份麻婆豆腐", "一份麻婆豆腐"),
        ("아이스 아메리카노 (샷 추가)", "아이스 아메리카노 샷 추가"),
        ("Café au lait", "café au lait"),
        ("ＣＯＬＡ　1.25L", "cola 1 25l"),
        ("the", ""),
    ],
)
def test_normalize_item(item, expected):
    assert simulation.normalize_item(item) == expected


@pytest.mark.parametrize(
    ("target", "final", "expected"),
    [
        # T = {chai latte, scone}, C = {chai latte, scone, cookie}: P 2/3, R 1
        (["The Chai Latte", "a scone"], ["chai latte!", "Scone", "cookie"], 0.8),
        # CJK: P 1, R 2/3
        (
            ["一份麻婆豆腐", "一份回锅肉", "五碗米饭"],
            ["一份麻婆豆腐", "一份回锅肉"],
            0.8,
        ),
        (
            ["아이스 아메리카노 (샷 추가)", "플레인 크로플"],
            ["아이스 아메리카노 샷 추가", "플레인 크로플"],
            1.0,
        ),
        # duplicates collapse to one set item
        (["tea"], ["Tea", "tea", "the tea"], 1.0),
        (["tea"], ["coffee"], 0.0),
        # empty final order: precision = recall = 0 -> F1 = 0
        (["tea"], [], 0.0),
    ],
)
def test_ora_f1(target, final, expected):
    assert simulation.order_adherence(target, final)[0] == approx(expected)


def test_ora_is_f1_not_the_seeds_expanded_formula():
    """|C| = 3, |T| = 2, |C∩T| = 2: F1 = 2·2/5 = 0.8, while the seed's
    "expanded formula" gives 2·4/(6 + 2·3) = 0.667; Steps 3-4 (F1) win."""
    value, detail = simulation.order_adherence(["a1", "b1"], ["a1", "b1", "c1"])
    assert value == approx(0.8)
    assert (detail["precision"], detail["recall"]) == approx((2 / 3, 1.0))


def test_ora_target_empty_after_normalization_is_unscored():
    with pytest.raises(Unscored, match="no items after normalization"):
        simulation.order_adherence(["the", "a"], ["tea"])


# -- DEI -------------------------------------------------------------------
@pytest.mark.parametrize(
    ("tracking", "tier", "expected"),
    [
        # ED = 2 + 1 + 1 + 0 = 4, N = 4 -> 4 / 8
        (
            [["order", "behavior"], ["order"], ["behavior", "attributes"], []],
            "order+behavior",
            0.5,
        ),
        ([["order", "behavior"]] * 3, "order+behavior", 1.0),
        # no behavior anywhere: attributes tier, ED = 1, N = 3 -> 0.5 / 3
        ([["attributes", "order"], ["order"], []], "attributes", 0.5 / 3),
        # order only: ED = 2, N = 4 -> 0.25
        ([["order"], ["order"], [], ["basic"]], "order", 0.25),
        # basic: ED = 3, N = 4 -> 0.15
        ([["basic"], [], ["basic"], ["basic"]], "basic", 0.15),
        ([["Order", "BEHAVIOR"]], "order+behavior", 1.0),
        ([[], []], "none", 0.0),
        ([["food"]], "none", 0.0),
        # behavior without order is no tier of the seed
        ([["behavior"], ["behavior"]], "none", 0.0),
    ],
)
def test_dei_tiers(tracking, tier, expected):
    value, detail = simulation.explainability([sim(tracking=t) for t in tracking])
    assert value == approx(expected)
    assert detail["tier"] == tier


def test_dei_without_any_tracking_list_is_unscored():
    with pytest.raises(Unscored, match="no message reports tracking"):
        simulation.explainability([sim(), sim()])


# -- CRRS ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("scores", "expected"),
    [
        ((1, 0, 0, 0), 0.25),
        ((0, 1, 0, 0), 0.20),
        ((0, 0, 1, 0), 0.35),
        ((0, 0, 0, 1), 0.20),
        ((1, 1, 1, 1), 1.0),
        ((0.8, 0.5, 0.6, 0.25), 0.2 + 0.1 + 0.21 + 0.05),
    ],
)
def test_crrs_weights(scores, expected):
    named = dict(zip(("pas", "bvs", "ora", "dei"), scores, strict=True))
    assert simulation.composite(named) == approx(expected)


# -- session rows ----------------------------------------------------------
def hand_session():
    """PAS: each of the 3 non-exit messages misses one component -> 0.75.
    BVS: exploration and mood change once in 2 transitions -> TR_avg = 1/3.
    ORA: final order = the exit message's -> 2·2/(3+2) = 0.8.
    DEI: ED = 2 + 1 + 2 = 5, N = 3 -> 5/6."""
    final = ["Chai Latte", "turkey sandwich", "cookie"]
    return session(
        [
            sim(complete=False, order=[], tracking=["order", "behavior"]),
            sim(mood="casual", complete=False, order=["chai"], tracking=["order"]),
            sim(
                "explores_menu",
                "casual",
                complete=True,
                order=final[:2],
                tracking=["order", "behavior"],
            ),
            sim(mood="happy", complete=True, order=final, tracking=[], exit=True),
        ]
    )


def test_session_rows_hand_computed():
    rows = by_metric(simulation.run([hand_session()], ["M"], None, {}))
    bvs = 1 - (1 / 3 - 0.2) / 0.8
    expected = {"pas": 0.75, "bvs": bvs, "ora": 0.8, "dei": 5 / 6}
    expected["crrs"] = 0.25 * 0.75 + 0.2 * bvs + 0.35 * 0.8 + 0.2 * 5 / 6
    assert {m: r["value"] for m, r in rows.items()} == approx(expected)
    for row in rows.values():
        assert (row["round"], row["method"], row["session_id"]) == (None, "M", "s1")
        assert (row["status"], row["note"]) == ("ok", None)
        json.dumps(row["detail"])
    assert rows["ora"]["detail"]["final"] == ["chai latte", "cookie", "turkey sandwich"]
    assert rows["dei"]["detail"] == {
        "tier": "order+behavior",
        "kinds": ["behavior", "order"],
        "ed": 5,
        "n": 3,
    }


def test_ora_uses_last_message_that_reports_an_order():
    sims = [sim(order=["tea"], tracking=[]), sim(tracking=[])]
    rows = by_metric(simulation.session_rows(session(sims, target=["tea"]), "M"))
    assert rows["ora"]["value"] == 1.0


@pytest.mark.parametrize(
    ("sims", "changes", "unscored"),
    [
        # one message: BVS cannot apply, CRRS follows
        (
            [sim(order=["chai latte"], tracking=["order"])],
            {},
            {"bvs": "fewer than two guest messages"},
        ),
        # all exit: N = 0; ORA still has a final order
        (
            [sim(order=[], tracking=[], exit=True)] * 2,
            {},
            dict.fromkeys(("pas", "bvs", "dei"), "no non-exit guest messages (N = 0)"),
        ),
        (
            [sim(order=[], tracking=[])] * 2,
            {"target": []},
            {"ora": "the target order is empty"},
        ),
        (
            [sim(order=[], tracking=[])] * 2,
            {"target": None},
            {"ora": "session lacks target_order"},
        ),
        (
            [sim(order=[], tracking=[])] * 2,
            {"persona": None},
            {"pas": "session lacks persona"},
        ),
        ([sim(tracking=[])] * 2, {}, {"ora": "no message reports an order"}),
        ([sim(order=[])] * 2, {}, {"dei": "no message reports tracking"}),
        ([None, None], {}, dict.fromkeys(simulation.WEIGHTS, "session lacks sim")),
        (
            [sim(order=[], tracking=[])] * 2,
            {"persona": {"type": "robot"}},
            {"pas": "no persona attributes and unknown type 'robot'"},
        ),
    ],
)
def test_edge_cases_give_values_or_reasons(sims, changes, unscored):
    """Each case is a metric that cannot apply: not_applicable with its
    reason, and CRRS (which needs all four) not applicable, naming them."""
    rows = by_metric(simulation.session_rows(session(sims, **changes), "M"))
    for metric in ("pas", "bvs", "ora", "dei"):
        row = rows[metric]
        if metric in unscored:
            assert (row["value"], row["status"]) == (None, "not_applicable")
            assert row["note"] == unscored[metric]
        else:
            assert row["status"] == "ok" and 0.0 <= row["value"] <= 1.0
    crrs = rows["crrs"]
    assert (crrs["value"], crrs["status"]) == (None, "not_applicable")
    assert crrs["note_code"] == "components_not_applicable"
    assert crrs["note_params"]["components"].split(", ") == [
        m for m in ("pas", "bvs", "ora", "dei") if m in unscored
    ]


@pytest.mark.parametrize(
    "block",
    [
        {"order": "chai", "tracking": "order", "exit": False},
        {"mood": ["x"], "order": [None, 3], "tracking": [None]},
        {"exploration": 7, "complete": "yes", "order": [], "tracking": []},
    ],
)
def test_malformed_blocks_never_raise(block):
    odd = session([block, block], persona={"moods": "tired", "type": 5}, target=[1])
    rows = simulation.run([odd], ["M", "Missing"], None, {})
    assert len(rows) == 2 * crafted.per_item("simulation")
    assert {row["status"] for row in rows} <= {
        "ok",
        "not_applicable",
        "unscored",
        "error",
    }
    assert all(row["note"] for row in rows if row["status"] != "ok")


# -- summary ---------------------------------------------------------------
def row(method, sid, metric, value, status="ok"):
    return {
        "session_id": sid,
        "round": None,
        "method": method,
        "metric": metric,
        "value": value,
        "status": status,
        "note": None,
        "detail": None,
    }


def summary_rows():
    rows = [row("A", f"s{i}", "crrs", v) for i, v in enumerate((0.9, 0.7, 0.8))]
    rows += [row("B", f"s{i}", "crrs", v) for i, v in enumerate((0.5, 0.6, 0.4))]
    rows += [row("C", "s0", "crrs", 0.95), row("C", "s1", "crrs", None, "unscored")]
    rows += [row(m, f"s{i}", "dei", 0.5) for m in "AB" for i in range(3)]
    return [*rows, row("A", "s0", "al", 99.0), row("B", "s9", "pas", 0.1, "error")]


def test_summary_means_normal_ci_and_bands():
    result = simulation.summarize(summary_rows(), ["A", "B", "C"])
    a, b, c = (result["summary"][m] for m in "ABC")
    half = 1.96 * 0.1 / math.sqrt(3)  # σ = 0.1 for both A and B
    assert (a["crrs_avg"], a["crrs_ci_low"], a["crrs_ci_high"]) == approx(
        (0.8, 0.8 - half, 0.8 + half)
    )
    assert b["crrs_avg"] == approx(0.5)
    assert (c["crrs_avg"], c["crrs_ci_low"], c["crrs_ci_high"]) == (0.95, None, None)
    assert a["pas_avg"] is None and b["pas_avg"] is None  # the error row is skipped
    bands = result["panel"]["crrs_band"]
    assert bands == {"A": "good", "B": "acceptable", "C": "excellent"}
    assert result["session_values"]["crrs"]["C"] == {"s0": 0.95}
    assert set(result["session_values"]) == {"pas", "bvs", "ora", "dei", "crrs"}
    json.dumps(result)


def test_summary_statistics_welch_and_cohen():
    """A = {0.9, 0.7, 0.8}, B = {0.5, 0.6, 0.4}: means 0.8 / 0.5, σ = 0.1 each.
    t = 0.3 / √(0.01/3 + 0.01/3) = 3.6742, df = 4, p = 0.02131; d = 0.3 / 0.1 = 3."""
    result = simulation.summarize(summary_rows(), ["A", "B", "C"])
    statistics = result["panel"]["statistics"]
    assert len(statistics) == 3 * 5  # 3 pairs x 5 metrics
    found = {(s["metric"], s["a"], s["b"]): s for s in statistics}
    ab = found["crrs", "A", "B"]
    assert ab["welch_t"] == approx(3.6742346)
    assert ab["welch_p"] == approx(0.0213116, abs=1e-6)
    assert ab["cohens_d"] == approx(3.0)
    assert (ab["n_a"], ab["n_b"], ab["significant"]) == (3, 3, True)
    ac = found["crrs", "A", "C"]  # C has one scored session
    assert (ac["welch_t"], ac["cohens_d"], ac["significant"]) == (None, None, None)
    constant = found["dei", "A", "B"]  # no variance on either side
    assert (constant["welch_t"], constant["cohens_d"]) == (None, None)


def test_metrics_registry_entries():
    ids = {metric.id for metric in simulation.SUITE.metrics}
    result = simulation.summarize(summary_rows(), ["A"])
    assert set(result["summary"]["A"]) <= ids
    assert {"pas", "bvs", "ora", "dei", "crrs"} <= ids
    for metric in simulation.SUITE.metrics:
        assert metric.suite == "simulation" and metric.higher_is_better
        assert metric.bounds == ((0.0, 1.0) if "_ci_" not in metric.id else None)
        assert metric.level == ("session" if "_" not in metric.id else "summary")
