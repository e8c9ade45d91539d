"""No untrue number (issue 56): a value that cannot mean anything is null
with its reason, and the reason reaches every reader (dashboard tables,
summary.csv, the paper exports, the results document)."""

from __future__ import annotations

import csv
import io
from types import SimpleNamespace

from metrics import engine
from metrics.results import summary_notes
from reports import paper, paper_summary


def al_rows(rounds: dict[str, list[float]]) -> list[dict]:
    """Two sessions per method, AL per round as given (+10 in the second)."""
    return [
        {
            "session_id": session,
            "round": k,
            "method": method,
            "metric": "al",
            "value": value + shift,
            "status": "ok",
            "judge": "",
        }
        for method, values in rounds.items()
        for session, shift in (("a", 0.0), ("b", 10.0))
        for k, value in enumerate(values, start=1)
    ]


def run_of(aggregates: dict, methods: list[str], suites: list[str]):
    return SimpleNamespace(
        id="0123456789abcdef",
        token="t",
        methods=methods,
        suites=suites,
        aggregates=aggregates,
        sessions=2,
        rounds=4,
        judge=None,
        options={},
        file_sha256="ab" * 32,
        finished_at=None,
    )


def test_r2_through_two_rounds_is_undefined_with_its_reason():
    """A line always fits two points: R² 1.00 said nothing about AL."""
    rows = al_rows({"Two": [40.0, 55.0], "Five": [40.0, 50.0, 70.0, 60.0, 80.0]})
    found = engine.aggregate(lambda suite: rows, ["alignment"], ["Two", "Five"])
    two, five = found["summary"]["Two"], found["summary"]["Five"]
    assert two["al_slope"] == 15.0 and two["al_r2"] is None
    assert 0 < five["al_r2"] < 1
    said = summary_notes(found)
    assert said["Two"]["al_r2"] == {"code": "r2_two_rounds"}
    assert "al_r2" not in said.get("Five", {})
    run = run_of(found, ["Two", "Five"], ["alignment"])
    rows_csv = list(csv.DictReader(io.StringIO(paper_summary.summary_csv(run))))
    [r2] = [r for r in rows_csv if (r["method"], r["metric"]) == ("Two", "al_r2")]
    assert r2["value"] == "" and r2["note"].startswith("undefined with two rounds")
    assert "a line always fits two points" in paper.to_markdown(run, "Two")


def test_a_flat_curve_and_a_single_round_say_why_their_line_is_null():
    rows = al_rows({"Flat": [50.0, 50.0, 50.0], "One": [70.0]})
    found = engine.aggregate(lambda suite: rows, ["alignment"], ["Flat", "One"])
    said = summary_notes(found)
    assert found["summary"]["Flat"]["al_r2"] is None
    assert said["Flat"]["al_r2"]["code"] == "r2_flat_curve"
    assert {said["One"][k]["code"] for k in ("al_slope", "al_intercept", "al_r2")} == {
        "curve_one_round"
    }


def test_each_judge_check_carries_the_n_it_rests_on():
    from metrics.suites.alignment import judge_checks

    def row(session, k, metric, value, judge=""):
        return {
            "session_id": session,
            "round": k,
            "method": "M",
            "judge": judge,
            "metric": metric,
            "value": value,
            "status": "ok",
        }

    panel = [
        row("s", k, "al", v + shift, judge)
        for k, v in ((1, 40.0), (2, 70.0), (3, 55.0))
        for judge, shift in (("a", 0.0), ("b", 5.0))
    ]
    panel.append(row("t", 1, "al", 60.0, "a"))  # scored by one judge only
    assert judge_checks.inter_judge_alpha_n(panel)[1] == 3
    samples = [
        row("s", k, f"al_sample@{sample}", v + sample)
        for k, v in ((1, 40.0), (2, 70.0), (3, 55.0))
        for sample in (1, 2)
    ]
    samples.append(row("t", 1, "al_sample@1", 60.0))  # one sample: no pair
    alpha, n = judge_checks.samples_alpha_n(samples)
    assert alpha[""] is not None and n == {"": 3}
    checks = judge_checks.validity(
        [
            row("s", k, metric, value)
            for k, (al, chars, vote) in enumerate(
                [(40, 10, 0), (50, 25, 0), (60, 30, 1)]
            )
            for metric, value in (
                ("al", al),
                ("response_chars", chars),
                ("binary", vote),
            )
        ]
    )
    assert checks["length_spearman_n"] == {"": 3}
    assert checks["length_spearman_by_method_n"] == {"": {"M": 3}}
    assert checks["cross_mode_auc_n"] == {"": 3}


def test_a_length_controlled_gap_says_why():
    rows = al_rows({"A": [40.0, 60.0, 50.0], "B": [70.0, 65.0, 80.0]})
    same_length = [{**row, "metric": "response_chars", "value": 120.0} for row in rows]
    found = engine.aggregate(
        lambda suite: rows + same_length, ["alignment"], ["A", "B"]
    )
    assert found["summary"]["A"]["al_lc"] is None
    assert summary_notes(found)["A"]["al_lc"]["code"] == "lc_lengths_constant"
    few = [r for r in rows + same_length if (r["round"], r["session_id"]) == (1, "a")]
    found = engine.aggregate(lambda suite: few, ["alignment"], ["A", "B"])
    assert summary_notes(found)["B"]["al_lc"] == {
        "code": "lc_too_few_items",
        "params": {"n": 2},
    }


def test_a_missing_value_s_reason_is_said_in_its_cell_or_once_for_a_column(app):
    from reports import tables

    rows = al_rows({"Two": [40.0, 55.0], "Five": [40.0, 50.0, 70.0, 60.0, 80.0]})
    found = engine.aggregate(lambda suite: rows, ["alignment"], ["Two", "Five"])
    run = run_of(found, ["Two", "Five"], ["alignment"])
    with app.test_request_context("/?lang=en"):
        table = tables.comparison_table(run, "Two", "alignment")
        page = app.jinja_env.get_template("_comparison_tables.html").render(
            tables=[table], baseline="Two", run=run, percent=False
        )
    # Five has an R²: the reason is Two's own (these rows have no binary
    # row: the keep-chatting rate's reason is every method's)
    assert [s["metric"].id for s in table["shared_notes"]] == ["binary_rate"]
    assert 'value-reason">undefined with two rounds' in page
    both = al_rows({"A": [40.0, 55.0], "B": [60.0, 50.0]})
    found = engine.aggregate(lambda suite: both, ["alignment"], ["A", "B"])
    with app.test_request_context("/?lang=en"):
        table = tables.comparison_table(
            run_of(found, ["A", "B"], ["alignment"]), "A", "alignment"
        )
    [shared] = [s for s in table["shared_notes"] if s["metric"].id == "al_r2"]
    assert shared["note"].startswith("undefined with two rounds")
