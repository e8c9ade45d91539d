"""Edge cases a reviewer checks (issue 26): floating-point noise in paired
differences, and agreement with a rater that never changes its answer."""

from __future__ import annotations

from scipy import stats as scipy_stats

from metrics.agreement import cohen_kappa
from metrics.stats import wilcoxon_p


def test_wilcoxon_treats_float_noise_as_a_zero_difference():
    noisy = [(0.1 + 0.2) - 0.3, 1.0, -2.0, 3.0, 4.0]  # 5.55e-17 is no difference
    clean = [0.0, 1.0, -2.0, 3.0, 4.0]
    assert noisy[0] != 0.0
    assert wilcoxon_p(noisy) == wilcoxon_p(clean)
    expected = scipy_stats.wilcoxon(
        clean,
        zero_method="pratt",
        method=scipy_stats.PermutationMethod(n_resamples=float("inf")),
    ).pvalue
    assert wilcoxon_p(noisy) == float(expected)


def test_wilcoxon_of_noise_only_is_null():
    assert wilcoxon_p([1e-12, -1e-12, 0.0]) is None


def test_differences_equal_on_paper_are_tied_not_ranked_by_float_noise():
    """Issue 56: binary rates over three rounds; 8 sessions +1/3 (computed
    1 - 2/3) and 5 sessions -1/3 (0 - 1/3). Ranked as distinct, the p was
    0.0195 and the paper table starred an interval holding 0."""
    from fractions import Fraction

    from metrics.stats import compare_paired

    a = {f"s{i}": 1.0 for i in range(8)} | {f"t{i}": 0.0 for i in range(5)}
    b = {f"s{i}": 2 / 3 for i in range(8)} | {f"t{i}": 1 / 3 for i in range(5)}
    diffs = [a[key] - b[key] for key in a]
    assert len({abs(d) for d in diffs}) == 2  # the float noise is there
    exact = [Fraction(1, 3)] * 8 + [Fraction(-1, 3)] * 5
    expected = scipy_stats.wilcoxon([float(d) for d in exact]).pvalue
    comparison = compare_paired("binary", "A", "B", a, b)
    assert comparison["p_value"] == float(expected)
    assert round(comparison["p_value"], 3) == 0.581


def test_kappa_with_a_constant_rater_is_null_not_zero():
    assert cohen_kappa([1.0, 1.0, 1.0, 1.0], [1.0, 0.0, 1.0, 0.0]) is None
    assert cohen_kappa([1.0, 0.0, 1.0, 0.0], [1.0, 0.0, 1.0, 1.0]) is not None


def test_an_empty_chart_gives_its_true_reason_not_no_judge(app):
    from types import SimpleNamespace

    from metrics import registry
    from web.presentation import panels

    reasons = {
        "nal_curve": {"code": "nal_undefined"},
        "radar": {"code": "no_dimensions"},
    }
    flat = [{"k": 1, "mean": 50.0, "n": 2, "ci_low": 40.0, "ci_high": 60.0}]
    run = SimpleNamespace(
        methods=["M"],
        suites=["alignment"],
        aggregates={
            "summary": {"M": {}},
            "curves": {"al": {"M": flat}, "nal": {"M": []}},
            "panels": {"alignment": {"reasons": reasons}},
        },
    )
    with app.test_request_context("/?lang=en"):
        section = panels.section(registry.get("alignment"), run)
    said = {chart["title"]: chart["reason"] for chart in section["missing"]}
    assert any("N-AL(k) is undefined" in reason for reason in said.values())
    assert any("no dimension scores" in reason for reason in said.values())
    assert not any("configured judge" in reason for reason in said.values())


def test_validity_reasons_are_the_runs_own():
    from types import SimpleNamespace

    from metrics.validity import judge_validity, run_context

    three = SimpleNamespace(judge={"model": "m", "samples": 3}, status="done")
    found = judge_validity({}, ["alignment"], "m", run_context(three))
    assert found["reason_codes"]["samples_alpha"] == "validity_no_variance"
    assert found["reason_codes"]["inter_judge_alpha"] == "validity_one_judge"
    panel = SimpleNamespace(
        judge={"model": "a", "models": ["a", "b"], "samples": 1}, status="done"
    )
    found = judge_validity({}, ["alignment"], "a", run_context(panel))
    assert found["reason_codes"]["inter_judge_alpha"] == "validity_no_variance"
    assert found["reason_codes"]["samples_alpha"] == "validity_one_sample"
    cancelled = SimpleNamespace(judge={"model": "m", "samples": 1}, status="cancelled")
    found = judge_validity({}, ["alignment"], "m", run_context(cancelled))
    # the run named no model families: true whether or not it was cancelled
    assert found["reason_codes"].pop("self_preference") == "card_no_families"
    assert set(found["reason_codes"].values()) <= {
        "validity_run_cancelled",
        "validity_suite_missing",
    }


def inverse_length_rows() -> list[dict]:
    """Within each method longer replies score lower (ρ = −1), but the
    better method writes longer: pooled, length looks like a bonus."""
    rows = []
    for method, base_chars, base_al in (("Short", 100, 30), ("Long", 1000, 80)):
        for k in range(1, 6):
            key = {"session_id": "s", "round": k, "method": method, "status": "ok"}
            rows.append({**key, "metric": "al", "value": float(base_al - k)})
            rows.append(
                {**key, "metric": "response_chars", "value": float(base_chars + k)}
            )
    return rows


def test_length_bias_is_measured_within_methods():
    from scipy import stats as scipy_stats

    from metrics.suites.alignment.judge_checks import validity

    rows = inverse_length_rows()
    pooled = scipy_stats.spearmanr(
        [r["value"] for r in rows if r["metric"] == "response_chars"],
        [r["value"] for r in rows if r["metric"] == "al"],
    ).statistic
    assert pooled > 0.4  # what pooling reported: a bias that is not there
    found = validity(rows)
    assert found["length_spearman"] == {"": -1.0}
    assert found["length_spearman_by_method"] == {"": {"Long": -1.0, "Short": -1.0}}


def test_length_bias_within_methods_from_the_database(any_storage):
    from config import DEFAULTS
    from pipeline.worker import finalizer

    storage = any_storage
    run = storage.runs.create_run(
        file_name="f.jsonl",
        file_sha256="0" * 64,
        upload_id="none",
        sessions=1,
        rounds=5,
        methods=["Short", "Long"],
        suites=["alignment"],
        status="running",
    )
    storage.rows.upsert_rows({**row, "run_id": run.id} for row in inverse_length_rows())
    finalizer.finalize(storage, run.id, dict(DEFAULTS))
    found = storage.runs.get_run(run.id).aggregates["judge_validity"]
    assert found["length_spearman"] == {"": -1.0}
    assert found["length_spearman_by_method"] == {"": {"Long": -1.0, "Short": -1.0}}


def test_a_panel_judge_that_scored_nothing_nulls_the_panel_value_with_a_note():
    from metrics import engine

    rows = []
    for session in ("s1", "s2"):
        for k in (1, 2):
            for judge, status, value in (
                ("good", "ok", 60.0 + k),
                ("down", "error", None),
            ):
                rows.append(
                    {
                        "session_id": session,
                        "round": k,
                        "method": "M",
                        "metric": "al",
                        "value": value,
                        "status": status,
                        "judge": judge,
                    }
                )
    found = engine.aggregate(lambda suite: rows, ["alignment"], ["M"])
    summary = found["summary"]["M"]
    assert summary["al_avg@good"] == 61.5 and summary["al_avg@down"] is None
    assert summary["al_avg"] is None  # not the panel's: one judge's
    note = found["summary_notes"]["M"]["al_avg"]
    assert note == {"code": "panel_no_common_items", "params": {"judges": "down"}}
    assert summary["al_avg_n"] == 0  # no session behind a value there is not


def test_a_null_panel_value_shows_its_reason_in_the_table(app):
    from types import SimpleNamespace

    from reports import tables

    note = {"code": "panel_judge_missing", "params": {"judges": "down"}}
    run = SimpleNamespace(
        methods=["M"],
        aggregates={
            "summary": {"M": {"al_avg": None}},
            "summary_notes": {"M": {"al_avg": note}},
        },
    )
    with app.test_request_context("/?lang=en"):
        table = tables.comparison_table(run, "M", "alignment")
    [cell] = [c for c in table["rows"][0]["cells"] if c["metric"].id == "al_avg"]
    assert cell["value"] is None and "down" in cell["note"]


def test_t_quantiles_without_scipy_stats_equal_scipy_stats_to_the_bit():
    from scipy import special
    from scipy import stats as scipy_stats

    for level in (0.9, 0.95, 0.99):
        p = 0.5 + level / 2
        assert all(
            special.stdtrit(df, p) == scipy_stats.t.ppf(p, df) for df in range(1, 3000)
        )


def test_welch_p_without_scipy_stats_equals_scipy_stats_to_the_bit():
    """``welch_t`` computes its two-sided p with ``scipy.special.stdtr``, as
    it did with ``scipy.stats.t.sf``: the same bits for every t and df."""
    import numpy as np
    from scipy import special
    from scipy import stats as scipy_stats

    rng = np.random.default_rng(7)
    for _ in range(5000):
        t = abs(rng.standard_normal()) * rng.choice([0.1, 1.0, 5.0, 50.0])
        df = rng.uniform(1.0, 500.0) * rng.choice([0.01, 1.0, 10.0]) + 0.5
        assert 2 * special.stdtr(df, -t) == 2 * scipy_stats.t.sf(t, df)
