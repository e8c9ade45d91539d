"""An interval of width 0 is never shown as an interval, whatever its method
(issue 58, item 1; ``docs/methods.md``): both ends null, the point value
kept, and a note right for the method — ``ci_no_variation`` for a t or
normal interval (every value the same), ``ci_no_spread`` for a bootstrap
(every resample the same). Checked against scipy and the witness.
"""

from __future__ import annotations

import pytest
from scipy import stats as scipy_stats

from metrics import (
    correlation_ci,
    human_agreement,
    notes,
    rank_groups,
    self_preference,
    stats,
)
from metrics.agreement import spearman
from metrics.suites import simulation
from metrics.suites.alignment import judge_checks
from metrics.suites.alignment.summary import _al_summary
from metrics.suites.pairwise import ranking
from metrics.suites.pairwise.summary import _left_out_notes
from tests.witness import reference
from tests.witness.differences import differences


def _constant_panel(shift: float = 6.0) -> list[dict]:
    """Judge b scores exactly ``shift`` above judge a on every item."""
    return [
        reference.row(
            f"s{s}", k, "M", "al", 40.0 + 7 * s + 3 * k + (shift if j == "b" else 0), j
        )
        for s in range(4)
        for k in (1, 2)
        for j in ("a", "b")
    ]


def test_a_constant_judge_offset_has_no_interval_but_a_note():
    """Judge b is +6 on every item: the t interval has width 0. Before: the
    offset was published as [6.00, 6.00] and its note quoted that interval."""
    rows = _constant_panel()
    found = judge_checks.judge_offsets(rows)
    b = found["b"]
    assert b["offset"] == pytest.approx(6.0) and b["n"] == 8
    assert b["ci_low"] is None and b["ci_high"] is None
    assert b["ci_note"] == "ci_no_variation"
    assert b["note"] == {
        "code": "judge_offset_constant",
        "params": {"judge": "b", "offset": "+6.00"},
    }
    assert found["a"]["offset"] == pytest.approx(-6.0)
    assert found["a"]["note"]["params"]["offset"] == "-6.00"
    text = notes.translate(b["note"]["code"], b["note"]["params"], None)
    assert "every item" in text and "CI" not in text
    # the witness, written from the docs, agrees
    doc = reference.tiny_doc(rows, ["M"], models=("a", "b"))
    mine = reference.judge_offsets(reference.build_index(doc))
    assert differences(mine, found, "judge_offsets") == []
    assert mine["b"]["ci_note"] == "ci_no_variation"


def test_two_identical_judges_have_no_interval_and_no_offset_note():
    found = judge_checks.judge_offsets(_constant_panel(shift=0.0))
    assert found["b"]["offset"] == 0.0 and found["b"]["ci_low"] is None
    assert found["b"]["ci_note"] == "ci_no_variation" and found["b"]["note"] is None


def test_the_audit_shows_a_constant_offset_without_an_interval():
    from types import SimpleNamespace

    from web.presentation.audit import audit_rows

    run = SimpleNamespace(
        judge={"model": "a", "models": ["a", "b"], "samples": 1},
        aggregates={"judge_validity": judge_checks.validity(_constant_panel())},
        suites=["alignment"],
        status="done",
    )
    [row] = [r for r in audit_rows(run) if r["key"] == "judge_offsets"]
    assert "b: +6.000 (n=8)" in row["value"] and "[" not in row["value"]
    assert "on every item they share" in row["reason"]


def test_mean_ci_is_scipys_t_interval_and_null_at_width_0():
    values = [3.0, 5.0, 4.0, 8.0]
    low, high = scipy_stats.t.interval(
        0.95, 3, loc=sum(values) / 4, scale=scipy_stats.sem(values)
    )
    found = stats.mean_ci(values)
    assert (found["ci_low"], found["ci_high"]) == pytest.approx((low, high))
    assert "ci_note" not in found
    flat = stats.mean_ci([0.1 + 0.2, 0.3, 0.3])  # equal at the resolution
    assert flat["mean"] == pytest.approx(0.3)
    assert (flat["ci_low"], flat["ci_high"], flat["ci_note"]) == (
        None,
        None,
        "ci_no_variation",
    )


def _simulation_rows(values: dict[str, list[float]]) -> list[dict]:
    return [
        {
            "session_id": f"s{i}",
            "round": None,
            "method": method,
            "metric": "pas",
            "value": v,
            "status": "ok",
            "judge": "j",
        }
        for method, vs in values.items()
        for i, v in enumerate(vs)
    ]


def test_a_simulation_metric_with_identical_values_has_no_interval():
    """Every session's PAS 0.5: mean ± 1.96·s/√n has width 0. Before: the
    summary carried pas_ci_low = pas_ci_high = 0.5."""
    rows = _simulation_rows({"A": [0.5, 0.5, 0.5], "B": [0.2, 0.4, 0.9]})
    found = simulation.summarize(rows, ["A", "B"])
    a, b = found["summary"]["A"], found["summary"]["B"]
    assert a["pas_avg"] == 0.5
    assert a["pas_ci_low"] is None and a["pas_ci_high"] is None
    said = found["panel"]["notes"]["A"]
    assert said["pas_ci_low"] == said["pas_ci_high"] == {"code": "ci_no_variation"}
    assert b["pas_ci_low"] is not None and "B" not in found["panel"]["notes"]
    # the witness: null ends at width 0
    doc = reference.tiny_doc(rows, ["A", "B"], suites=("simulation",))
    mine = reference.mean_over_sessions_summary(
        reference.build_index(doc), "simulation", "A"
    )
    assert mine["pas_ci_low"] is None and mine["pas_ci_high"] is None


def test_a_zero_width_interval_gets_no_rank_and_says_why():
    summary = {
        "A": {"pas_avg": 0.5, "pas_ci_low": None, "pas_ci_high": None},
        "B": {"pas_avg": 0.4, "pas_ci_low": 0.2, "pas_ci_high": 0.6},
    }
    said = {"A": {"pas_ci_low": {"code": "ci_no_variation"}}}
    found, why = rank_groups.ranks(
        {"summary": summary}, ["A", "B"], ["simulation"], said
    )
    assert found["A"]["pas_avg"] is None and found["B"]["pas_avg"] == 1
    assert why["A"]["pas_avg"]["code"] == "rank_ci_no_spread"


def test_self_preference_says_its_t_interval_has_no_width():
    """Before: the t interval's null ends carried ci_no_spread ("every
    resample of the sessions"), a bootstrap's note."""
    rows = [
        reference.row(
            f"s{s}", 1, m, "al", 50.0 + s + (6 if (j, m) == ("gpt", "Ours") else 0), j
        )
        for s in range(4)
        for m in ("Ours", "Base")
        for j in ("gpt", "claude")
    ]
    families = {
        "methods": {"Ours": "openai", "Base": "meta"},
        "judges": {"gpt": "openai", "claude": "anthropic"},
    }
    [found] = self_preference.estimates(rows, families)
    assert found["value"] == pytest.approx(6.0)
    assert found["ci_note"] == "ci_no_variation"
    assert found["ci_reason"] == notes.note("ci_no_variation").english
    assert "resample" not in found["ci_reason"]


def test_al_points_and_the_session_slope_have_no_zero_width_interval():
    """Two sessions with the same AL at every round, rising 10 a round:
    every point's and the session slope's t interval has width 0."""
    rows = [
        {
            "session_id": s,
            "round": k,
            "method": "M",
            "metric": "al",
            "value": 40.0 + 10 * k,
            "status": "ok",
        }
        for s in ("a", "b")
        for k in (1, 2, 3)
    ]
    found, points, said = _al_summary(rows, ["M"])
    assert all(
        p["ci_low"] is None and p["ci_note"] == "ci_no_variation" for p in points["M"]
    )
    assert found["M"]["al_session_slope"] == pytest.approx(10.0)
    assert found["M"]["al_session_slope_ci_low"] is None
    assert said["M"]["al_session_slope_ci_low"] == {"code": "ci_no_variation"}


def test_the_bradley_terry_baseline_has_no_zero_width_interval():
    """The baseline's strength is 0 in every resample. Before: bt_ci_low =
    bt_ci_high = 0.0 was published for it."""
    outcomes = [(f"s{i}", "A", "B", 1.0 if i % 3 else 0.0) for i in range(9)]
    found = ranking.bt_with_ci(outcomes, ["A", "B"], "B")
    assert found["B"]["mean"] == 0.0
    assert found["B"]["ci_low"] is None and found["B"]["ci_high"] is None
    assert found["B"]["ci_note"] == "ci_no_spread"
    assert found["A"]["ci_low"] < found["A"]["ci_high"]
    said = _left_out_notes(found)
    assert said["B"]["bt_ci_low"] == {"code": "ci_no_spread"}
    assert said["A"]["bt_ci_low"]["code"] == "bt_resamples_left_out"


def test_perfect_human_agreement_has_no_zero_width_interval():
    """Every resample of perfectly agreeing pairs gives ρ = 1. Before: the
    interval [1.0, 1.0] was shown."""
    found = human_agreement._with_ci([(v, v) for v in (1, 2, 3, 4, 5)], spearman)
    assert found["value"] == pytest.approx(1.0)
    assert found["ci"] is None and found["ci_note"] == "ci_no_spread"


def test_every_zero_width_note_is_translated():
    for code in ("ci_no_spread", "ci_no_variation", "judge_offset_constant"):
        assert code in notes.NOTES


def test_the_paper_table_says_why_a_method_has_no_rank():
    """A method whose ranked value has an interval of width 0 prints a dash
    in the Rank column, and the caption says why. Before: the dash stood
    alone (tests/witness/test_compare.py: "Rank (unexplained)")."""
    from types import SimpleNamespace

    from reports import paper

    summary = {
        "A": {"pas_avg": 0.7, "pas_ci_low": 0.6, "pas_ci_high": 0.8},
        "B": {"pas_avg": 0.5, "pas_ci_low": None, "pas_ci_high": None},
    }
    flat = {"code": "ci_no_variation"}
    run = SimpleNamespace(
        id="0123456789abcdef",
        methods=["A", "B"],
        suites=["simulation"],
        aggregates={
            "summary": summary,
            "comparisons": [],
            "summary_notes": {"B": {"pas_ci_low": flat, "pas_ci_high": dict(flat)}},
        },
        judge=None,
    )
    md = paper.to_markdown(run, "A")
    assert "\n| B | — |" in md
    assert "B, Rank: no rank: the value's interval has width 0" in md


def test_agreement_at_one_says_why_it_has_no_interval():
    """r = ρ = τ = 1 (and κ = 1 on a 1–5 scale): Fisher's z is infinite, so
    the interval would be [1, 1]; κ's every resample gives 1. Both are null
    with a note; the audit shows it beside the value. Before: null with no
    reason."""
    from web.presentation.audit import agreement_table

    found = correlation_ci.criterion_agreement([1, 2, 3, 4, 5], [1, 2, 3, 4, 5], [1, 5])
    for name in ("pearson", "spearman", "kendall"):
        assert found[f"{name}_ci"] is None
        assert found[f"{name}_ci_note"] == "ci_fisher_at_one"
    assert found["weighted_kappa"] == pytest.approx(1.0)
    assert found["weighted_kappa_ci"] is None
    assert found["weighted_kappa_ci_note"] == "ci_no_spread"
    below = correlation_ci.criterion_agreement([1, 2, 3], [1, 2, 3])
    assert below["pearson_ci"] is None and "pearson_ci_note" not in below
    human = {
        "J": {"n": 5, "scores": {"q:1-5": {"criterion": "q", "scale": [1, 5], **found}}}
    }
    [row] = agreement_table(human)
    assert "Fisher's z is infinite" in row["cells"][0]["why"]
