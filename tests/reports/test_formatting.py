"""Number presentation (reports/formatting.py) and the comparison table's view
model (web/presentation/dashboard.py): integers for counts, ``< 0.0001``, no negative
zero, one sign convention, best only where methods differ, ``<id>_n``."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from flask import Flask
from flask_babel import Babel

from reports import formatting, tables


@pytest.fixture
def request_in(request):
    app = Flask(__name__)
    Babel(app, locale_selector=lambda: request.param)
    with app.test_request_context():
        yield request.param


@pytest.mark.parametrize("request_in", ["en"], indirect=True)
@pytest.mark.parametrize(
    ("value", "shown"),
    [(-0.0, "0.00"), (-0.004, "0.00"), (0.004, "0.00"), (-0.006, "-0.01"), (None, "—")],
)
def test_no_negative_zero(request_in, value, shown):
    assert formatting.number(value) == shown


@pytest.mark.parametrize("request_in", ["en"], indirect=True)
def test_signed_differences_use_one_convention(request_in):
    assert formatting.signed(0.16) == "+0.16"
    assert formatting.signed(-0.08) == "\u22120.08"
    assert formatting.signed(-0.001) == "0.00"
    assert formatting.signed(float("nan")) == "—"


@pytest.mark.parametrize("request_in", ["en", "zh", "ko"], indirect=True)
def test_tiny_p_values_and_counts(request_in):
    assert formatting.p_value(0.0) == "< 0.0001"
    assert formatting.p_value(0.00009) == "< 0.0001"
    assert formatting.p_value(0.0123) == "0.0123"
    assert formatting.count(8.0) == "8"
    assert formatting.metric_number("slot_tp", 1234.0) == "1,234"
    assert formatting.metric_number("extra_slots", 3.0) == "3"


@pytest.mark.parametrize("request_in", ["en"], indirect=True)
def test_rates_optionally_as_percent_with_differences_in_points(request_in):
    assert formatting.metric_number("binary_rate", 0.4) == "0.40"
    assert formatting.metric_number("binary_rate", 0.4, percent=True) == "40.0%"
    assert formatting.metric_number("al_avg", 0.4, percent=True) == "0.40"
    assert formatting.metric_difference("binary_rate", -0.05, True) == "\u22125.0 pp"


def test_best_is_marked_only_where_methods_differ():
    tie = {m: {"nvcs_avg": 0.5} for m in "ABC"}
    assert tables.best_methods(tie, list("ABC"), "nvcs_avg") == set()
    near = {"A": {"nvcs_avg": 0.50001}, "B": {"nvcs_avg": 0.5}}
    assert tables.best_methods(near, ["A", "B"], "nvcs_avg") == set()
    two = {"A": {"ertd_avg": 10.0}, "B": {"ertd_avg": 10.0}, "C": {"ertd_avg": 30.0}}
    assert tables.best_methods(two, list("ABC"), "ertd_avg") == {"A", "B"}
    assert tables.best_methods(two, list("ABC"), "al_intercept") == set()


def test_flipping_a_comparison_flips_every_signed_statistic():
    stored = {
        "metric": "al",
        "a": "Base",
        "b": "Ours",
        "diff": -2.0,
        "ci_low": -3.0,
        "ci_high": -1.0,
        "effect_size": -0.5,
        "rank_biserial": -0.4,
        "sd_diff": 4.0,
        "p_value": 0.01,
        "p_holm": 0.02,
        "n": 9,
    }
    flipped = tables.versus_baseline([stored], "al", "Base", "Ours")
    assert (flipped["diff"], flipped["ci_low"], flipped["ci_high"]) == (2.0, 1.0, 3.0)
    assert (flipped["effect_size"], flipped["rank_biserial"]) == (0.5, 0.4)
    assert flipped["sd_diff"] == 4.0  # a spread has no direction
    assert flipped["p_holm"] == 0.02


def test_cells_carry_the_session_count_behind_each_value():
    run = SimpleNamespace(
        methods=["A", "B"],
        aggregates={
            "summary": {
                "A": {"nvcs_avg": 0.5, "nvcs_avg_n": 9, "ertd_avg": None},
                "B": {"nvcs_avg": 0.7, "nvcs_avg_n": 8, "ertd_avg_n": 0},
            },
            "comparisons": [],
        },
    )
    table = tables.comparison_table(run, "A", "style")
    cells = {row["method"]: row["cells"] for row in table["rows"]}
    assert [(c["metric"].id, c["n"]) for c in cells["B"]] == [
        ("nvcs_avg", 8),
        ("ertd_avg", 0),
    ]
    assert cells["B"][0]["best"] and not cells["A"][0]["best"]
