"""Sparse rounds (issue 58, finding 2): AL(k) at a round that rests on fewer
than ``MIN_ROUND_SESSIONS`` sessions stays on the curve but is kept out of
the AL average and line; the all-rounds figures stay available."""

from __future__ import annotations

from statistics import fmean

import pytest
from scipy import stats as scipy_stats

from metrics.suites.alignment import summary as alignment_summary
from metrics.suites.alignment.summary import MIN_ROUND_SESSIONS, summarize


def _rows(table: dict[str, list[float | None]], method: str = "M") -> list[dict]:
    return [
        {
            "session_id": s,
            "round": k,
            "method": method,
            "metric": "al",
            "value": v,
            "status": "ok" if v is not None else "unscored",
        }
        for s, values in table.items()
        for k, v in enumerate(values, start=1)
    ]


# Three sessions of 2, 2 and 5 rounds: rounds 3-5 rest on one session each.
UNEVEN = {"a": [60.0, 70.0], "b": [40.0, 50.0], "c": [50.0, 60.0, 95.0, 98.0, 100.0]}


def test_rounds_on_fewer_sessions_are_left_out_of_the_average_and_slope():
    assert MIN_ROUND_SESSIONS == 3
    found = summarize(_rows(UNEVEN), ["M"])
    values = found["summary"]["M"]
    assert values["al_avg"] == pytest.approx(fmean([50.0, 60.0]))
    assert values["al_slope"] == pytest.approx(10.0)
    # the unweighted all-rounds figures, as before
    all_means = [50.0, 60.0, 95.0, 98.0, 100.0]
    assert values["al_avg_all_rounds"] == pytest.approx(fmean(all_means))
    line = scipy_stats.linregress([1, 2, 3, 4, 5], all_means)
    assert values["al_slope_all_rounds"] == pytest.approx(line.slope)
    points = found["curves"]["al"]["M"]
    assert [p["k"] for p in points] == [1, 2, 3, 4, 5]  # every round drawn
    assert [p["in_average"] for p in points] == [True, True, False, False, False]
    assert [p["in_average"] for p in found["curves"]["nal"]["M"]] == [
        True,
        True,
        False,
        False,
        False,
    ]
    note = found["panel"]["notes"]["M"]["al_avg"]
    assert note == {
        "code": "al_sparse_rounds",
        "params": {"rounds": "3, 4, 5", "min": 3},
    }
    assert found["panel"]["notes"]["M"]["al_slope"]["code"] == "al_sparse_rounds"


def test_the_delta_parts_leave_the_same_rounds_out():
    from metrics import basis

    found = summarize(_rows(UNEVEN), ["M"])
    parts = found["value_parts"]["al_avg"]["M"]
    assert basis.value(parts) == pytest.approx(found["summary"]["M"]["al_avg"])


def test_the_radar_averages_leave_the_same_rounds_out():
    rows = [
        {**r, "metric": "al_style", "value": r["value"] / 5} for r in _rows(UNEVEN)
    ] + _rows(UNEVEN)
    values = summarize(rows, ["M"])["summary"]["M"]
    assert values["al_style_avg"] == pytest.approx(fmean([10.0, 12.0]))


@pytest.mark.parametrize("sessions", [1, 2])
def test_a_file_of_one_or_two_sessions_still_has_an_average(sessions):
    table = {"a": [60.0, 70.0, 80.0], "b": [40.0, 50.0]}
    table = dict(list(table.items())[:sessions])
    found = summarize(_rows(table), ["M"])
    values = found["summary"]["M"]
    assert values["al_avg"] is not None
    if sessions == 1:  # every round rests on the one session there is
        assert values["al_avg"] == values["al_avg_all_rounds"] == 70.0
        assert "al_avg" not in found["panel"].get("notes", {}).get("M", {})
    else:  # round 3 rests on one of two sessions
        assert values["al_avg"] == pytest.approx(fmean([50.0, 60.0]))
        assert values["al_avg_all_rounds"] == pytest.approx(fmean([50.0, 60.0, 80.0]))


def test_balanced_sessions_agree_everywhere():
    table = {s: [50.0 + i, 60.0, 70.0 - i] for i, s in enumerate("abcd")}
    found = summarize(_rows(table), ["M"])
    values = found["summary"]["M"]
    assert values["al_avg"] == values["al_avg_all_rounds"]
    assert values["al_slope"] == values["al_slope_all_rounds"]
    assert all(p["in_average"] for p in found["curves"]["al"]["M"])
    assert "notes" not in found["panel"]


def test_an_unscored_reply_can_make_a_round_sparse():
    table = {"a": [60.0, 70.0], "b": [40.0, None], "c": [50.0, 60.0]}
    found = summarize(_rows(table), ["M"])
    assert [p["in_average"] for p in found["curves"]["al"]["M"]] == [True, False]
    assert found["summary"]["M"]["al_avg"] == 50.0
    assert found["summary"]["M"]["al_slope"] is None
    said = found["panel"]["notes"]["M"]
    # the line is undefined because the sparse round left one round in
    assert said["al_slope"]["code"] == "al_sparse_rounds"


def test_the_rule_is_documented_with_its_constant():
    from pathlib import Path

    card = Path("docs/metrics/alignment.md").read_text(encoding="utf-8")
    assert f"`MIN_ROUND_SESSIONS` = {alignment_summary.MIN_ROUND_SESSIONS}" in card
    assert "al_avg_all_rounds" in card and "al_sparse_rounds" in card
