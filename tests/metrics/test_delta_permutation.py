"""Δ's test on the value's own basis (issue 58, finding 1): the paired
permutation test of ``metrics/basis.py`` (``delta_permutation_p``) against
scipy's permutation test and a brute force written here, and the table marks
that follow it."""

from __future__ import annotations

import itertools
import json
import math
import random
from types import SimpleNamespace

import numpy as np
import pytest
from scipy import stats as scipy_stats

from metrics import basis, engine
from metrics.stats import at_resolution
from reports import tables


def brute_force_p(a: dict, b: dict) -> float:
    """Every keep/swap assignment of the sessions, each value recomputed as
    the mean over strata of Σ numerator / Σ denominator, in plain Python."""
    sessions = sorted(set(a) | set(b))

    def value(parts: list[dict]) -> float | None:
        totals: dict = {}
        for strata in parts:
            for stratum, (num, den) in strata.items():
                total = totals.setdefault(stratum, [0.0, 0.0])
                total[0] += num
                total[1] += den
        ratios = [num / den for num, den in totals.values() if den > 0]
        return sum(ratios) / len(ratios) if ratios else None

    def delta(swaps) -> float | None:
        mine = [
            b.get(s, {}) if x else a.get(s, {})
            for s, x in zip(sessions, swaps, strict=True)
        ]
        theirs = [
            a.get(s, {}) if x else b.get(s, {})
            for s, x in zip(sessions, swaps, strict=True)
        ]
        va, vb = value(mine), value(theirs)
        return None if va is None or vb is None else va - vb

    observed = abs(delta([0] * len(sessions)))
    found = [delta(s) for s in itertools.product((0, 1), repeat=len(sessions))]
    kept = [abs(d) for d in found if d is not None]
    hits = sum(at_resolution(d) >= at_resolution(observed) for d in kept)
    return hits / len(kept)


@pytest.mark.parametrize("seed", range(12))
def test_a_mean_over_sessions_is_scipys_paired_permutation_test(seed):
    rng = random.Random(seed)
    n = rng.randint(2, 10)
    x = [float(rng.randint(0, 6)) for _ in range(n)]
    y = [float(rng.randint(0, 6)) for _ in range(n)]
    a = basis.of_session_values({f"s{i}": v for i, v in enumerate(x)})
    b = basis.of_session_values({f"s{i}": v for i, v in enumerate(y)})
    p, test, assignments = basis.delta_permutation_p(a, b)
    expected = scipy_stats.permutation_test(
        (np.array(x), np.array(y)),
        lambda u, v, axis: np.mean(u, axis=axis) - np.mean(v, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=np.inf,
        alternative="two-sided",
    ).pvalue
    assert (test, assignments) == ("permutation_exact", 2**n)
    assert p == pytest.approx(min(1.0, expected), abs=1e-12)


@pytest.mark.parametrize("seed", range(8))
def test_pooled_rates_and_round_strata_match_a_brute_force(seed):
    rng = random.Random(100 + seed)
    n = rng.randint(2, 9)
    pooled = {}, {}
    rounds = {}, {}
    for i in range(n):
        verdicts = rng.randint(1, 12)  # different verdict counts per session
        for parts in pooled:
            parts[f"s{i}"] = {None: (float(rng.randint(0, verdicts)), float(verdicts))}
        length = rng.randint(1, 4)  # unbalanced rounds per session
        for parts in rounds:
            parts[f"s{i}"] = {
                k: (float(rng.randint(20, 90)), 1.0) for k in range(1, length + 1)
            }
    for a, b in (pooled, rounds):
        p = basis.delta_permutation_p(a, b)[0]
        assert p == pytest.approx(brute_force_p(a, b), abs=1e-12)


def test_a_session_one_method_lacks_is_swapped_too():
    a = {"s1": {None: (3.0, 4.0)}, "s2": {None: (1.0, 2.0)}, "s3": {None: (2.0, 2.0)}}
    b = {"s1": {None: (0.0, 4.0)}, "s2": {None: (0.0, 2.0)}}
    assert basis.delta_permutation_p(a, b)[0] == pytest.approx(brute_force_p(a, b))


def test_beyond_the_exact_bound_the_sampled_p_is_within_its_monte_carlo_error():
    rng = random.Random(7)
    n = basis.PERMUTATION_EXACT_UP_TO + 2  # 32,768 assignments for the brute force
    a = {f"s{i}": {None: (float(rng.randint(0, 5) + 1), 6.0)} for i in range(n)}
    b = {f"s{i}": {None: (float(rng.randint(0, 5)), 6.0)} for i in range(n)}
    p, test, draws = basis.delta_permutation_p(a, b)
    exact = brute_force_p(a, b)
    assert (test, draws) == ("permutation_sampled", basis.PERMUTATION_DRAWS)
    error = math.sqrt(exact * (1 - exact) / draws)
    assert abs(p - exact) <= 4 * error + 1 / (draws + 1)
    assert basis.delta_permutation_p(a, b) == (p, test, draws)  # fixed seed


def test_too_few_sessions_have_no_p():
    one = {"s1": {None: (1.0, 1.0)}}
    assert basis.delta_permutation_p(one, {"s1": {None: (0.0, 1.0)}}) == (None, None, 0)
    # no difference at all: every assignment reaches it
    same = basis.of_session_values({"s1": 1.0, "s2": 2.0})
    assert basis.delta_permutation_p(same, same)[0] == 1.0


# -- the marks follow the value's basis ------------------------------------------
def verdict_rows() -> list[dict]:
    """Nine one-round sessions where Ours keeps the user and Base does not,
    and one 20-round session where Base always does and Ours never: the
    per-session means favour Ours in nine of ten sessions (Wilcoxon p =
    0.021, a mark), the pooled keep-chatting rate favours Base, 20/29
    against 9/29, and no keep/swap assignment gives a smaller |Δ|: p = 1."""
    rows = []
    for s in range(10):
        for k in range(1, (20 if s == 9 else 1) + 1):
            for method in ("Base", "Ours"):
                kept = (method == "Ours") != (s == 9)
                rows.append(
                    {
                        "session_id": f"s{s}",
                        "round": k,
                        "method": method,
                        "metric": "binary",
                        "value": 1.0 if kept else 0.0,
                        "status": "ok",
                        "judge": "",
                    }
                )
    return rows


def test_the_mark_follows_the_pooled_rate_not_the_session_means(app):
    # before: the cell showed Δ −0.38 (Base better) with a "*" from the
    # Wilcoxon test of the per-session means, which favour Ours
    found = engine.aggregate(
        lambda suite: verdict_rows(), ["alignment"], ["Base", "Ours"]
    )
    [binary] = [c for c in found["comparisons"] if c["metric"] == "binary"]
    assert binary["p_value"] == pytest.approx(0.021484375)  # the Wilcoxon p, kept
    assert (binary["a"], binary["b"]) == ("Base", "Ours")
    assert binary["delta"] == pytest.approx(20 / 29 - 9 / 29)
    assert binary["delta_p"] == 1.0 and binary["delta_test"] == "permutation_exact"
    assert binary["delta_p_assignments"] == 1024
    run = SimpleNamespace(methods=["Base", "Ours"], aggregates=found)
    with app.test_request_context("/?lang=en"):
        table = tables.comparison_table(run, "Base", "alignment")
        ours = next(row for row in table["rows"] if row["method"] == "Ours")
        [cell] = [c for c in ours["cells"] if c["metric"].id == "binary_rate"]
        assert cell["versus"]["diff"] == pytest.approx(9 / 29 - 20 / 29)
        assert cell["versus"]["p_value"] == 1.0 and cell["versus"]["p_holm"] == 1.0
        assert cell["versus"]["wilcoxon_p"] == pytest.approx(0.021484375)
        assert cell["mark"] == ""
        title = tables.delta_title(cell, "Ours", "Base")
    assert "Paired permutation test of Δ" in title and "all 1,024 assignments" in title
    assert "Wilcoxon signed-rank p on the per-session" in title


def test_a_stored_comparison_without_the_value_test_gets_no_mark(app):
    found = engine.aggregate(
        lambda suite: verdict_rows(), ["alignment"], ["Base", "Ours"]
    )
    for comparison in found["comparisons"]:  # a run aggregated before the test
        for key in ("delta_p", "delta_p_holm", "delta_test", "delta_p_assignments"):
            comparison.pop(key, None)
        comparison["p_value"] = comparison["p_holm"] = 0.0001
    run = SimpleNamespace(methods=["Base", "Ours"], aggregates=found)
    with app.test_request_context("/?lang=en"):
        table = tables.comparison_table(run, "Base", "alignment")
    marks = [cell["mark"] for row in table["rows"] for cell in row["cells"]]
    assert set(marks) == {""}


# -- the Holm family of a table (issue 58, finding 5) ------------------------------
def test_a_table_family_adjusts_across_every_column(app):
    found = engine.aggregate(
        lambda suite: verdict_rows() + al_rows(), ["alignment"], ["Base", "Ours"]
    )
    run = SimpleNamespace(methods=["Base", "Ours"], aggregates=found)
    with app.test_request_context("/?lang=en"):
        by_metric = tables.comparison_table(run, "Base", "alignment")
        by_table = tables.comparison_table(run, "Base", "alignment", holm="table")
        caption = tables.table_caption(by_table, "Base")["delta"]
        default_caption = tables.table_caption(by_metric, "Base")["delta"]
    cells = [
        (one["versus"], other["versus"])
        for one, other in zip(
            by_metric["rows"][1]["cells"], by_table["rows"][1]["cells"], strict=True
        )
        if one["versus"] and one["versus"]["p_value"] is not None
    ]
    assert len(cells) >= 2  # AL average and the keep-chatting rate at least
    ps = [mine["p_value"] for mine, _ in cells]
    for (mine, wide), expected in zip(cells, stats_holm(ps), strict=True):
        assert mine["p_holm"] == mine["p_value"]  # one comparison per column
        assert wide["p_holm"] == expected and wide["family_size"] == len(cells)
    assert by_table["holm_family"] == "table"
    assert "every comparison with Base in this table" in caption
    assert "each column's comparisons with Base" in default_caption


def stats_holm(ps):
    from metrics.stats import holm

    return holm(ps)


def al_rows() -> list[dict]:
    """Ours 10 points above Base in each of the ten sessions' one round."""
    return [
        {
            "session_id": f"s{s}",
            "round": 1,
            "method": method,
            "metric": "al",
            "value": 50.0 + s + (10.0 if method == "Ours" else 0.0),
            "status": "ok",
            "judge": "",
        }
        for s in range(10)
        for method in ("Base", "Ours")
    ]


def test_the_results_document_states_its_holm_family():
    found = engine.aggregate(
        lambda suite: verdict_rows() + al_rows(), ["alignment"], ["Base", "Ours"]
    )
    document = {"summary": found["summary"], "comparisons": found["comparisons"]}
    plain = basis.with_holm_family(document)
    wide = basis.with_holm_family(document, "table")
    assert list(plain) == ["summary", "holm_family", "comparisons"]
    assert (plain["holm_family"], wide["holm_family"]) == ("metric", "table")
    tested = [c for c in wide["comparisons"] if c.get("delta_p") is not None]
    assert len(tested) >= 2
    assert [c["delta_p_holm"] for c in tested] == stats_holm(
        [c["delta_p"] for c in tested]
    )
    assert [c["p_holm"] for c in wide["comparisons"]] == [
        c["p_holm"] for c in plain["comparisons"]
    ]  # the Wilcoxon family is untouched


@pytest.fixture
def two_runs(app_factory, tmp_path, judge_server):
    from tests import crafted
    from tests.pipeline_support import evaluate

    app = app_factory(JUDGE_API_URL=judge_server.url, JUDGE_MODEL="scripted")
    path = crafted.write(tmp_path / "a.jsonl", crafted.alignment_sessions())
    runs = [
        evaluate(app, path, judge_server, suites=["alignment"])["run"]["id"]
        for _ in range(2)
    ]
    return app, [app.extensions["storage"].runs.get_run(run) for run in runs]


def test_holm_table_on_the_urls_and_the_cli(two_runs):
    # before: ?holm= was ignored and no document said its family
    app, (run, other) = two_runs
    client = app.test_client()
    token = run.token
    body = client.get(f"/api/v1/runs/{token}/results?holm=table").get_json()
    assert body["holm_family"] == "table"
    assert client.get(f"/api/v1/runs/{token}/results").get_json()["holm_family"] == (
        "metric"
    )
    bad = client.get(f"/api/v1/runs/{token}/results?holm=everything")
    assert bad.status_code == 400
    [error] = bad.get_json()["errors"]
    assert (error["code"], error["path"]) == ("bad_holm", "holm")
    page = client.get(f"/r/{token}?holm=table&lang=en").get_data(as_text=True)
    assert "every comparison with Base in this table" in page
    # the picker shows the family, and the exports keep it
    assert '<option value="table" selected>' in page
    assert f"/r/{token}/export.md?baseline=Base&amp;holm=table" in page
    assert f"/r/{token}/summary.csv?holm=table" in page
    for lang, said in (
        ("zh", "本表中与 Base 的全部比较"),
        ("ko", "이 표의 Base와의 모든 비교"),
    ):
        shown = client.get(f"/r/{token}?holm=table&lang={lang}").get_data(as_text=True)
        assert said in shown, lang
    assert "each column&#39;s comparisons with Base" in client.get(
        f"/r/{token}?lang=en"
    ).get_data(as_text=True)
    for url in (
        f"/r/{token}?holm=all",
        f"/r/{token}/export.md?holm=all",
        f"/r/{token}/summary.csv?holm=all",
        f"/r/{token}/export.json?holm=all",
        f"/compare?runs={token},{other.token}&holm=all",
        f"/compare/export.md?runs={token},{other.token}&holm=all",
    ):
        refused = client.get(url + "&lang=en" if "?" in url else url)
        assert refused.status_code == 400, url
        assert "holm" in refused.get_data(as_text=True), url
    markdown = client.get(f"/r/{token}/export.md?holm=table").get_data(as_text=True)
    assert "Holm-adjusted across every comparison with Base in this table" in markdown
    exported = client.get(f"/r/{token}/export.json?holm=table").get_json()
    assert exported["holm_family"] == "table"
    runner = app.test_cli_runner()
    result = runner.invoke(args=["report", token, "--format", "md", "--holm", "table"])
    assert result.exit_code == 0, result.output
    assert "Holm-adjusted across every comparison with Base in this table" in (
        result.stdout
    )
    result = runner.invoke(
        args=["report", token, "--format", "json", "--holm", "table"]
    )
    assert json.loads(result.stdout)["holm_family"] == "table"
    compared = runner.invoke(args=["compare", token, other.token, "--holm", "table"])
    assert compared.exit_code == 0, compared.output
    assert "in this table (all columns together)" in compared.stdout
    refused = runner.invoke(args=["report", token, "--holm", "everything"])
    assert refused.exit_code == 2 and "--holm" in refused.output


@pytest.mark.parametrize(
    ("n", "said"),
    [
        (9, "the exact bootstrap distribution of the 9 paired sessions"),
        (10, "2000 paired resamples of the sessions"),
    ],
)
def test_the_delta_title_says_how_its_interval_was_drawn(app, n, said):
    # before: "2000 paired resamples" whatever the n, though below 10
    # sessions the interval is the exact bootstrap distribution
    from metrics import registry

    cell = {
        "metric": registry.spec("binary_rate"),
        "versus": {"ci_low": -0.1, "ci_high": 0.1, "n": n},
    }
    with app.test_request_context("/?lang=en"):
        assert said in tables.delta_title(cell, "Ours", "Base")


def test_the_count_reaching_the_bar_is_the_rounded_count():
    """Issue 61 item 3: |Δ*| are compared with the bar in numpy, and only
    those within ``BAR_BAND`` of it are rounded one by one: the count is
    the plain count of at_resolution(|Δ*|) >= bar, ties at 12 digits
    (1 − 2/3 against 1/3) and the zero rule included."""
    rng = np.random.default_rng(58)
    for bar_from in (1 / 3, 1 - 2 / 3, 0.25, 1e-9, 1.0000000000001e-9, 0.0, 7.5):
        bar = at_resolution(bar_from)
        around = bar * (1 + rng.normal(size=400) * 1e-11)
        spread = bar * rng.random(400) * 3
        steps = np.array([np.nextafter(bar, 0.0), bar, np.nextafter(bar, 1.0)])
        sizes = np.abs(np.concatenate([around, spread, steps, [1 - 2 / 3, 1 / 3, 0.0]]))
        expected = sum(at_resolution(float(s)) >= bar for s in sizes)
        assert basis.reaching_count(sizes, bar) == expected, bar_from
