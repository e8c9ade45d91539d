"""One basis per table (metrics/basis.py, reports/tables.py, the exports) and
panel means over the items every judge scored (metrics/panel_items.py)."""

from __future__ import annotations

import csv
import io
import re
from statistics import fmean
from types import SimpleNamespace

import pytest

from metrics import basis, engine, stats
from reports import paper, paper_summary, tables


# -- panel means over common items ------------------------------------------------
def panel_rows() -> list[dict]:
    """Two judges 10 points apart; "flaky" failed round 2 of session s2."""
    rows = []
    for session, base in (("s1", 50.0), ("s2", 70.0)):
        for k in (1, 2):
            for judge, offset in (("steady", 0.0), ("flaky", 10.0)):
                failed = judge == "flaky" and session == "s2" and k == 2
                rows.append(
                    {
                        "session_id": session,
                        "round": k,
                        "method": "M",
                        "metric": "al",
                        "value": None if failed else base + k + offset,
                        "status": "unscored" if failed else "ok",
                        "judge": judge,
                    }
                )
    return rows


def test_panel_mean_uses_only_items_every_judge_scored_and_says_so():
    found = engine.aggregate(lambda suite: panel_rows(), ["alignment"], ["M"])
    summary = found["summary"]["M"]
    # common items: (s1, 1), (s1, 2), (s2, 1), each with both judges
    al_1 = fmean([51.0, 61.0, 71.0, 81.0])
    al_2 = fmean([52.0, 62.0])
    # round 2 rests on one of the two sessions (sparse rounds, issue 58):
    # left out of al_avg, kept in al_avg_all_rounds
    assert summary["al_avg"] == pytest.approx(al_1, abs=1e-12)
    assert summary["al_avg_all_rounds"] == pytest.approx(fmean([al_1, al_2]), abs=1e-12)
    # each judge's own value reads all of its rows
    assert summary["al_avg@steady"] == pytest.approx(fmean([61.0, 62.0]))
    # flaky's own round 2 rests on one of its two sessions: left out
    assert summary["al_avg@flaky"] == pytest.approx(fmean([61.0, 81.0]))
    note = found["summary_notes"]["M"]["al_avg"]
    assert note == {
        "code": "panel_common_items",
        "params": {"judges": "flaky", "items": 1},
    }


def test_a_single_judge_run_is_not_restricted():
    rows = [r for r in panel_rows() if r["judge"] == "steady"]
    found = engine.aggregate(lambda suite: rows, ["alignment"], ["M"])
    assert found["summary"]["M"]["al_avg"] == fmean([61.0, 62.0])
    # no panel note (these rows have no binary row: the keep-chatting rate
    # says only that, metrics/nothing_scored.py)
    assert found["summary_notes"]["M"] == {
        "binary_rate": {"code": "none_scored_no_rows"}
    }


# -- Δ on the value's basis ------------------------------------------------------
def unbalanced_rows() -> list[dict]:
    """Sessions of different lengths: the round-weighted AL average and the
    mean of per-session means differ."""
    rows = []
    for s, rounds in enumerate((1, 1, 1, 3, 3, 3, 2, 2)):
        for k in range(1, rounds + 1):
            for method, base in (("Base", 40.0), ("Ours", 55.0)):
                value = base + 7 * k - 3 * (s % 3) + (s if method == "Ours" else 0)
                rows.append(
                    {
                        "session_id": f"s{s}",
                        "round": k,
                        "method": method,
                        "metric": "al",
                        "value": value,
                        "status": "ok",
                        "judge": "",
                    }
                )
    return rows


def aggregated():
    return engine.aggregate(
        lambda suite: unbalanced_rows(), ["alignment"], ["Base", "Ours"]
    )


def test_delta_is_the_difference_of_the_values_and_its_interval_brackets_it():
    found = aggregated()
    [al] = [c for c in found["comparisons"] if c["metric"] == "al"]
    summary = found["summary"]
    assert al["value_metric"] == "al_avg"
    assert al["delta"] == summary["Base"]["al_avg"] - summary["Ours"]["al_avg"]
    assert al["delta_ci_low"] <= al["delta"] <= al["delta_ci_high"]
    # the paired session-level difference is another number: the test's basis
    assert abs(al["diff"] - al["delta"]) > 0.1


def test_parts_reproduce_the_round_weighted_value():
    rows = unbalanced_rows()
    parts: dict = {}
    for row in rows:
        if row["method"] == "Ours":
            strata = parts.setdefault(row["session_id"], {})
            num, den = strata.get(row["round"], (0.0, 0.0))
            strata[row["round"]] = (num + row["value"], den + 1.0)
    value = aggregated()["summary"]["Ours"]["al_avg"]
    assert basis.value(parts) == pytest.approx(value, abs=1e-12)


def test_session_mean_interval_matches_the_paired_bootstrap():
    a = {f"s{i}": float(i % 5) for i in range(30)}
    b = {f"s{i}": float((i * 7) % 4) for i in range(30)}
    low, high = basis.delta_ci(basis.of_session_values(a), basis.of_session_values(b))
    diffs = [a[s] - b[s] for s in sorted(a)]  # in id order, as both draw
    expected = stats.paired_bootstrap_ci(diffs)
    assert (low, high) == pytest.approx(expected, abs=1e-12)


def test_the_interval_is_deterministic():
    found = [
        basis.delta_ci(
            {"a": {1: (1.0, 1.0)}, "b": {1: (3.0, 2.0), 2: (5.0, 1.0)}},
            {"a": {1: (2.0, 1.0)}, "b": {2: (1.0, 1.0)}},
        )
        for _ in range(2)
    ]
    assert found[0] == found[1]


def run_of(found) -> SimpleNamespace:
    return SimpleNamespace(
        id="0123456789abcdef",
        token="t",
        methods=["Base", "Ours"],
        suites=["alignment"],
        aggregates=found,
        sessions=8,
        rounds=16,
        judge=None,
        options={},
        file_sha256="ab" * 32,
        finished_at=None,
    )


def test_each_table_delta_equals_the_difference_of_its_values(app):
    run = run_of(aggregated())
    with app.test_request_context("/?lang=en"):
        table = tables.comparison_table(run, "Base", "alignment")
    rows = {row["method"]: row for row in table["rows"]}
    shown = 0
    for base_cell, cell in zip(
        rows["Base"]["cells"], rows["Ours"]["cells"], strict=True
    ):
        if cell["versus"] and cell["versus"]["diff"] is not None:
            assert cell["versus"]["diff"] == cell["value"] - base_cell["value"]
            shown += 1
    assert shown >= 1


def test_the_summary_csv_carries_delta_p_and_basis():
    run = run_of(aggregated())
    rows = list(csv.DictReader(io.StringIO(paper_summary.summary_csv(run, "Base"))))
    values = {(r["method"], r["metric"]): r for r in rows}
    ours, base = values[("Ours", "al_avg")], values[("Base", "al_avg")]
    assert {
        "delta",
        "delta_ci_low",
        "delta_ci_high",
        "p",
        "p_holm",
        "basis",
    } <= ours.keys()
    assert float(ours["delta"]) == pytest.approx(
        float(ours["value"]) - float(base["value"])
    )
    assert ours["basis"].startswith("mean over rounds k of AL(k)")
    assert ours["baseline"] == "Base"
    assert (
        float(ours["delta_ci_low"])
        <= float(ours["delta"])
        <= float(ours["delta_ci_high"])
    )
    assert base["delta"] == "" and base["basis"] == ours["basis"]


def test_markdown_delta_is_the_difference_of_the_shown_values():
    run = run_of(aggregated())
    md = paper.to_markdown(run, "Base")
    line = next(x for x in md.splitlines() if x.startswith("| Ours"))
    base = next(x for x in md.splitlines() if x.startswith("| Base"))
    header = next(x for x in md.splitlines() if x.startswith("| Method"))
    column = [h.strip() for h in header.split("|")].index("AL average ↑")
    ours_cell = line.split("|")[column]
    base_value = float(re.sub(r"[*]", "", base.split("|")[column]).strip())
    ours_value = float(re.match(r"\s*\**([\d.]+)", ours_cell).group(1))
    delta = float(re.search(r"Δ ([+−-][\d.]+)", ours_cell).group(1).replace("−", "-"))
    assert delta == pytest.approx(ours_value - base_value, abs=0.011)  # two decimals
    assert "mean over rounds k of AL(k)" in md


# -- the pages and exports of real runs --------------------------------------------
def table_cells(html: str) -> list[list[dict]]:
    """Per comparison table, its cells as {method, column, value, delta}."""
    tables = []
    for table in re.findall(
        r'<table class="[^"]*\bcomparison-table\b[^"]*".*?</table>', html, re.S
    ):
        cells = []
        for row in re.findall(r"<tr.*?</tr>", table, re.S)[1:]:
            method = re.search(r'<th scope="row">([^<]*)', row).group(1).strip()
            for column, td in enumerate(re.findall(r"<td[^>]*>", row)):
                value = re.search(r'data-value="([^"]+)"', td)
                delta = re.search(r'data-delta="([^"]+)"', td)
                cells.append(
                    {
                        "method": method,
                        "column": column,
                        "value": float(value.group(1)) if value else None,
                        "delta": float(delta.group(1)) if delta else None,
                    }
                )
        tables.append(cells)
    return tables


def assert_deltas_are_differences(html: str, baseline: str) -> int:
    checked = 0
    for cells in table_cells(html):
        base = {c["column"]: c["value"] for c in cells if c["method"] == baseline}
        for cell in cells:
            if cell["delta"] is not None:
                assert cell["delta"] == pytest.approx(
                    cell["value"] - base[cell["column"]], rel=1e-12, abs=1e-12
                )
                checked += 1
    return checked


def test_dashboard_compare_page_and_csv_show_delta_on_the_values_basis(
    app_factory, judge_server, tmp_path
):
    from tests import crafted
    from tests.store.test_workspaces import upload
    from tests.web.views.test_api import settled, wait_final

    app = app_factory(JUDGE_API_URL=judge_server.url, JUDGE_MODEL="scripted")
    client = app.test_client()
    client.get("/")
    data = crafted.write(
        tmp_path / "a.jsonl", crafted.alignment_sessions()
    ).read_bytes()
    tokens = []
    for name in ("first", "second"):
        answer = upload(client, data, suites="alignment,quality", name=name).get_json()
        tokens.append(answer["token"])
        assert wait_final(client, answer["token"])["status"] == "done"

    page = client.get(f"/r/{tokens[0]}?lang=en").get_data(as_text=True)
    assert assert_deltas_are_differences(page, "Base") >= 2
    assert "Holm-adjusted within each column over its comparisons with Base" in page
    compared = settled(client, f"/compare?runs={','.join(tokens)}&lang=en").get_data(
        as_text=True
    )
    assert assert_deltas_are_differences(compared, "first/Base") >= 2
    for url, baseline in (
        (f"/r/{tokens[0]}/summary.csv", "Base"),
        (f"/compare/export.csv?runs={','.join(tokens)}", "first/Base"),
    ):
        rows = list(
            csv.DictReader(io.StringIO(settled(client, url).get_data(as_text=True)))
        )
        values = {(r["method"], r["metric"]): r for r in rows}
        deltas = [r for r in rows if r["delta"]]
        assert deltas
        for row in deltas:
            base = values[(baseline, row["metric"])]
            assert float(row["delta"]) == pytest.approx(
                float(row["value"]) - float(base["value"]), abs=1e-12
            )
            assert row["basis"] and (row["p"] == "") == (row["p_holm"] == "")
    # a value link opens a page showing the same number
    [(link, number)] = re.findall(
        r'href="(/r/[^"]+/values\?metric=al_avg&amp;method=Ours[^"]*)"[^>]*>(?:<strong>)?([^<]+)',
        page,
    )
    values_page = client.get(link.replace("&amp;", "&") + "&lang=en").get_data(
        as_text=True
    )
    shown = (
        re.search(r'data-testid="table-value">([^<]+)', values_page).group(1).strip()
    )
    assert shown == number.strip() and "mean over rounds k of AL(k)" in values_page


def test_exports_carry_the_summary_notes():
    found = engine.aggregate(lambda suite: panel_rows(), ["alignment"], ["M"])
    run = SimpleNamespace(**{**vars(run_of(found)), "methods": ["M"]})
    rows = list(csv.DictReader(io.StringIO(paper_summary.summary_csv(run))))
    [al] = [r for r in rows if r["metric"] == "al_avg"]
    assert al["note"].startswith("over the items every panel judge scored: 1 item(s)")
    assert (
        "Notes: M, AL average: over the items every panel judge"
        in paper.to_markdown(run, "M")
    )
