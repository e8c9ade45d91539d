"""Rank groups (metrics/rank_groups.py, issue 58 item 5b): a method's rank is
1 + the methods whose interval lies entirely on the better side of its own;
in the results document, summary.csv, export.md/.tex and the dashboard."""

from __future__ import annotations

import csv
import doctest
import io
import re
from pathlib import Path
from types import SimpleNamespace

from metrics import rank_groups
from metrics.results import summary_notes
from reports import paper, paper_summary
from tests.pipeline_support import evaluate

ROOT = Path(__file__).resolve().parents[2]


def test_doctests():
    result = doctest.testmod(rank_groups, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_overlap_is_not_chained():
    # A overlaps B, B overlaps C, A lies above C: A and B share rank 1 and C
    # is 2 (chaining overlaps would give all three rank 1)
    intervals = {"A": (0.60, 0.80), "B": (0.50, 0.70), "C": (0.30, 0.55)}
    assert rank_groups.rank_groups(intervals) == {"A": 1, "B": 1, "C": 2}
    # the order the methods come in does not matter
    backwards = dict(reversed(intervals.items()))
    assert rank_groups.rank_groups(backwards) == {"C": 2, "B": 1, "A": 1}


def test_lower_is_better_inverts():
    intervals = {"A": (0.60, 0.80), "B": (0.50, 0.70), "C": (0.30, 0.55)}
    assert rank_groups.rank_groups(intervals, higher_is_better=False) == {
        "A": 2,
        "B": 1,
        "C": 1,
    }


def test_separated_methods_get_distinct_ranks_and_touching_ones_share():
    intervals = {"A": (3.0, 4.0), "B": (1.0, 2.0), "C": (2.0, 3.0)}
    # B touches C (2.0 = 2.0) and C touches A: no interval lies above another
    # except A above B
    assert rank_groups.rank_groups(intervals) == {"A": 1, "B": 2, "C": 1}
    # noise below the resolution is no gap
    noisy = {"A": (1 - 2 / 3 + 1e-13, 1.0), "B": (0.0, 1 / 3)}
    assert rank_groups.rank_groups(noisy) == {"A": 1, "B": 1}


def test_a_null_interval_has_no_rank_and_says_why():
    summary = {
        "A": {"pas_avg": 0.8, "pas_ci_low": 0.7, "pas_ci_high": 0.9},
        "B": {"pas_avg": 0.2, "pas_ci_low": 0.1, "pas_ci_high": 0.3},
        "C": {"pas_avg": 0.5, "pas_ci_low": None, "pas_ci_high": None},  # n = 1
        "D": {"pas_avg": None, "pas_ci_low": None, "pas_ci_high": None},
    }
    found, why = rank_groups.ranks({"summary": summary}, list(summary), ["simulation"])
    assert {m: found[m]["pas_avg"] for m in summary} == {
        "A": 1,
        "B": 2,
        "C": None,
        "D": None,
    }
    assert why["C"]["pas_avg"]["code"] == "rank_no_interval"
    assert why["D"]["pas_avg"]["code"] == "rank_no_value"
    assert "pas_avg" not in why["A"] and "pas_avg" not in why["B"]
    # a value without any interval in its suite is not ranked at all
    assert "al_avg" not in found["A"]


def test_an_interval_of_no_width_says_so():
    values = {"pairwise_winrate": 0.5, "pairwise_winrate_ci_low": None}
    aggregates = {
        "summary": {"A": values, "B": {"pairwise_winrate": 0.5}},
        "panels": {
            "pairwise": {
                "notes": {
                    "A": {
                        "pairwise_winrate_ci_low": {"code": "ci_no_spread"},
                        "pairwise_winrate_ci_high": {"code": "ci_no_spread"},
                    }
                }
            }
        },
    }
    said = summary_notes(aggregates)
    found, why = rank_groups.ranks(aggregates, ["A", "B"], ["pairwise"], said)
    assert found["A"]["pairwise_winrate"] is None
    assert why["A"]["pairwise_winrate"]["code"] == "rank_ci_no_spread"
    assert why["B"]["pairwise_winrate"]["code"] == "rank_no_interval"


def test_bradley_terry_strengths_rank_on_their_own_intervals():
    """The baseline A (strength 0 in every resample) has no interval, so no
    rank (issue 58: its [0, 0] was ranked before)."""
    summary = {
        "A": {"bt_score": 0.0, "bt_ci_low": None, "bt_ci_high": None},
        "B": {"bt_score": 1.2, "bt_ci_low": 0.4, "bt_ci_high": 2.0},
        "C": {"bt_score": 0.5, "bt_ci_low": -0.3, "bt_ci_high": 1.1},
        "D": {"bt_score": -1.5, "bt_ci_low": -2.5, "bt_ci_high": -0.5},
    }
    said = {"A": {"bt_ci_low": {"code": "ci_no_spread"}}}
    found, why = rank_groups.ranks(
        {"summary": summary}, list(summary), ["pairwise"], said
    )
    assert {m: found[m]["bt_score"] for m in summary} == {
        "A": None,
        "B": 1,
        "C": 1,
        "D": 3,
    }
    assert why["A"]["bt_score"]["code"] == "rank_ci_no_spread"


def small_run():
    """Three methods on simulation's PAS: A and B overlap, B and C overlap,
    A lies above C."""
    intervals = {"A": (0.6, 0.8), "B": (0.5, 0.7), "C": (0.3, 0.55)}
    summary = {
        m: {"pas_avg": (low + high) / 2, "pas_ci_low": low, "pas_ci_high": high}
        for m, (low, high) in intervals.items()
    }
    return SimpleNamespace(
        id="0123456789abcdef",
        methods=list(intervals),
        suites=["simulation"],
        aggregates={"summary": summary, "comparisons": []},
        judge=None,
    )


def test_exports_show_the_rank_column():
    run = small_run()
    md = paper.to_markdown(run, "A")
    lines = md.splitlines()
    assert lines[0].startswith("| Method | Rank | Persona adherence (PAS) ↑ |")
    assert lines[2].startswith("| A | 1 |") and lines[4].startswith("| C | 2 |")
    assert "Rank (by Persona adherence (PAS)): 1 + the number of methods" in md
    tex = paper.to_latex(run, "A")
    assert "Method & Rank &" in tex and "\nC & 2 & " in tex
    rows = list(csv.DictReader(io.StringIO(paper_summary.summary_csv(run))))
    pas = {row["method"]: row for row in rows if row["metric"] == "pas_avg"}
    assert [pas[m]["rank"] for m in "ABC"] == ["1", "1", "2"]
    bvs = next(row for row in rows if row["metric"] == "bvs_avg")
    assert bvs["rank"] == "" and "no rank" in bvs["rank_note"]


def test_a_run_carries_its_ranks_everywhere(embedded_app):
    document = evaluate(
        embedded_app, ROOT / "sample_data.jsonl", None, suites=["simulation"]
    )
    ranks = document["ranks"]
    assert set(ranks) == {"Base", "RAG", "Ours"}
    summary = document["summary"]
    for metric in ("pas_avg", "crrs_avg"):
        intervals = {
            m: (
                summary[m][metric.replace("_avg", "_ci_low")],
                summary[m][metric.replace("_avg", "_ci_high")],
            )
            for m in ranks
        }
        assert {m: ranks[m][metric] for m in ranks} == rank_groups.rank_groups(
            intervals
        )
    # sample_data.jsonl: every session of Base has the same BVS (and so
    # on): a normal interval of width 0, null with ci_no_variation, so no
    # rank (issue 58: before, [v, v] was shown and ranked)
    assert document["rank_notes"]
    for method, said in document["rank_notes"].items():
        for metric, why in said.items():
            assert why["code"] == "rank_ci_no_spread"
            low = metric.replace("_avg", "_ci_low")
            assert summary[method][low] is None
            assert document["summary_notes"][method][low]["code"] == "ci_no_variation"
    run = embedded_app.extensions["storage"].runs.get_run(document["run"]["id"])
    client = embedded_app.test_client()
    csv_text = client.get(f"/r/{run.token}/summary.csv").get_data(as_text=True)
    rows = list(csv.DictReader(io.StringIO(csv_text)))
    for row in rows:
        if row["metric"] in ranks[row["method"]]:
            rank = ranks[row["method"]][row["metric"]]
            assert row["rank"] == ("" if rank is None else str(rank))
    md = client.get(f"/r/{run.token}/export.md").get_data(as_text=True)
    assert "| Method | Rank | Persona adherence (PAS) ↑ |" in md
    base = ranks["Base"]["pas_avg"]
    assert re.search(rf"^\| Base \| {base} \| ", md, re.M)
    tex = client.get(f"/r/{run.token}/export.tex").get_data(as_text=True)
    assert "Method & Rank &" in tex
    html = client.get(f"/r/{run.token}?lang=en").get_data(as_text=True)
    table = re.search(r'data-suite="simulation".*?</table>', html, re.S).group(0)
    assert 'data-testid="rank-heading">Rank</th>' in table
    assert f'data-testid="rank" data-sort-value="{base}">{base}</td>' in table
    assert 'data-testid="rank-caption">Rank (by Persona adherence (PAS))' in html
    for lang, word in (("zh", "排名"), ("ko", "순위")):
        page = client.get(f"/r/{run.token}?lang={lang}").get_data(as_text=True)
        assert f'data-testid="rank-heading">{word}</th>' in page
