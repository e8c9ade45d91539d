"""The judge report card and self-preference (issue 58, items 2 and 4):
each criterion against its threshold, the overall verdict, a protocol's own
thresholds, and the self-preference difference-in-differences checked
against an independent computation (numpy + scipy.stats)."""

from __future__ import annotations

import random

import pytest

from metrics import protocols, report_card, self_preference
from metrics.protocol_checks import ProtocolError
from metrics.suites.alignment import judge_checks
from metrics.validity import judge_validity
from tests import crafted
from tests.pipeline_support import evaluate
from tests.witness import reference


def card_of(found: dict, **context) -> dict:
    base = {"reasons": {}, "reason_codes": {}}
    suites = {"position_suite": "pairwise", "length_suite": "alignment"}
    return report_card.report_card({**base, **found}, {**suites, **context})


def rows_by(card: dict) -> dict:
    return {row["criterion"]: row for row in card["report_card"]}


def test_every_criterion_passes_fails_or_says_why():
    found = {
        "position_consistency": 0.7,
        "pairwise_comparisons": 30,
        "length_spearman": {"a": 0.1, "b": -0.35},
        "length_spearman_n": {"a": 50, "b": 48},
        "human": {
            "a": {
                "al_spearman": 0.7,
                "binary_kappa": 0.5,
                "n": 20,
                "n_al": 20,
                "n_binary": 18,
                "binary_base_rate": 0.8,
            },
            "b": {
                "al_spearman": 0.65,
                "binary_kappa": 0.61,
                "n": 20,
                "n_al": 20,
                "n_binary": 18,
                "binary_base_rate": 0.8,
            },
        },
        "inter_judge_alpha": 0.9,
        "inter_judge_alpha_n": 50,
        "samples_alpha": None,
    }
    card = card_of(found, suites=["alignment", "pairwise"], judges=2, samples=1)
    rows = rows_by(card)
    assert rows["position_consistency"]["verdict"] == "fail"
    assert rows["position_consistency"]["n"] == 30
    # a panel: each judge held to the threshold, the worst shown
    assert (
        rows["length_spearman"].items()
        >= {
            "value": -0.35,
            "judge": "b",
            "n": 48,
            "verdict": "fail",
            "threshold": 0.3,
        }.items()
    )
    assert rows["human_al_spearman"]["verdict"] == "pass"
    assert rows["human_al_spearman"]["value"] == 0.65
    kappa = rows["human_binary_kappa"]
    assert (kappa["verdict"], kappa["judge"], kappa["base_rate"]) == ("fail", "a", 0.8)
    assert rows["inter_judge_alpha"]["verdict"] == "pass"
    # one sample: does not apply, says why, does not hold the verdict back
    assert rows["samples_alpha"]["verdict"] == "not_measured"
    assert not rows["samples_alpha"]["applies"]
    assert rows["samples_alpha"]["reason_code"] == "validity_one_sample"
    # the length-controlled pairwise effect: not computed yet, says so
    assert rows["length_pairwise_effect"]["verdict"] == "not_measured"
    assert rows["length_pairwise_effect"]["reason"]
    assert rows["self_preference"]["reason_code"] == "card_no_families"
    assert card["report_card_verdict"] == "not_fit"
    assert card["report_card_failing"] == [
        "position_consistency",
        "length_spearman",
        "human_binary_kappa",
    ]
    for row in card["report_card"]:
        assert row["verdict"] in ("pass", "fail", "not_measured")
        assert set(row) >= {"criterion", "value", "n", "threshold", "verdict"}
        if row["verdict"] == "not_measured":
            assert row["reason"], row


def test_overall_verdict_fit_and_not_enough_evidence():
    alone = {"length_spearman": {"j": 0.05}, "length_spearman_n": {"j": 40}}
    card = card_of(alone, suites=["alignment"], judges=1, samples=1)
    assert card["report_card_verdict"] == "fit"
    # a panel whose α could not be computed: a criterion that applies is missing
    card = card_of(alone, suites=["alignment"], judges=2, samples=1)
    assert card["report_card_verdict"] == "not_enough_evidence"
    assert card["report_card_unmeasured"] == ["inter_judge_alpha"]
    # nothing measured at all
    assert card_of({}, suites=[])["report_card_verdict"] == "not_enough_evidence"


def test_the_length_pairwise_effect_is_read_when_present():
    found = {
        "position_consistency": 1.0,
        "pairwise_comparisons": 10,
        "length_pairwise_effect": {
            "value": 0.42,
            "n": 10,
            "ci_low": 0.3,
            "ci_high": 0.5,
        },
    }
    card = card_of(found, suites=["pairwise"])
    row = rows_by(card)["length_pairwise_effect"]
    assert (row["verdict"], row["n"], row["ci_low"]) == ("fail", 10, 0.3)
    assert card["report_card_verdict"] == "not_fit"
    assert card["report_card_failing"] == ["length_pairwise_effect"]


def test_a_protocol_sets_its_own_thresholds():
    text = protocols.builtin("mt-bench").text + (
        "\n[report_card]\nlength_spearman = 0.5\nposition_consistency = 0.9\n"
    )
    protocol = protocols.load(text)
    assert protocol.report_card == {"length_spearman": 0.5, "position_consistency": 0.9}
    found = {"length_spearman": {"j": 0.4}, "length_spearman_n": {"j": 9}}
    card = card_of(found, suites=["alignment"], thresholds=protocol.report_card)
    assert rows_by(card)["length_spearman"]["verdict"] == "pass"
    assert rows_by(card)["length_spearman"]["threshold"] == 0.5
    with pytest.raises(ProtocolError) as raised:
        protocols.load(text + "samples_alpha = 1.5\nspeed = 2\n")
    keys = [key for _, key, _, _ in raised.value.problems]
    assert keys == ["report_card.samples_alpha", "report_card.speed"]


def test_base_rate_beside_kappa():
    assert judge_checks.base_rate([0.0, 0.0, 0.0, 1.0]) == 0.75
    rows = [
        {
            "session_id": "s",
            "round": k,
            "method": "M",
            "metric": metric,
            "value": value,
            "status": "ok",
        }
        for k, (judge, human) in enumerate([(1, 1), (1, 1), (0, 1), (0, 0)], start=1)
        for metric, value in (("binary", judge), ("human_binary", human))
    ]
    human = judge_checks.validity(rows)["human"]
    assert human[""]["binary_base_rate"] == 0.75


def random_rows(seed: int):
    """A panel of three judges of three families scoring three methods, the
    judge 'gpt' giving its family's method a bonus drawn per session."""
    draw = random.Random(seed)
    rows = []
    for s in range(draw.randint(3, 9)):
        bonus = draw.gauss(5, 4)
        for k in range(1, draw.randint(2, 4)):
            for method in ("Ours", "Base", "Other"):
                for judge in ("gpt", "claude", "llama"):
                    value = draw.uniform(30, 70) + (
                        bonus if (judge, method) == ("gpt", "Ours") else 0
                    )
                    if draw.random() < 0.1:
                        continue  # a missing score
                    rows.append(
                        {
                            "session_id": f"s{s}",
                            "round": k,
                            "method": method,
                            "judge": judge,
                            "metric": "al",
                            "value": value,
                            "status": "ok",
                        }
                    )
    return rows


FAMILIES = {
    "methods": {"Ours": "OpenAI", "Base": "meta", "Other": "mistral"},
    "judges": {"gpt": "openai", "claude": "anthropic", "llama": "Meta"},
}


def independent(rows, judge, method, own):
    """The difference-in-differences as docs/metrics/report-card.md says,
    with numpy arrays (NaN: no score) and scipy.stats."""
    import numpy as np
    from scipy import stats

    sessions = sorted({r["session_id"] for r in rows})
    methods, judges = list(FAMILIES["methods"]), list(FAMILIES["judges"])
    cells = {}
    for r in rows:
        key = (r["session_id"], r["method"], r["judge"])
        cells.setdefault(key, []).append(r["value"])
    means = np.full((len(sessions), len(methods), len(judges)), np.nan)
    for (s, m, j), values in cells.items():
        means[sessions.index(s), methods.index(m), judges.index(j)] = np.mean(values)
    others = [
        judges.index(j) for j, f in FAMILIES["judges"].items() if f.lower() != own
    ]
    baseline = [
        methods.index(m) for m, f in FAMILIES["methods"].items() if f.lower() != own
    ]
    with np.errstate(all="ignore"):
        import warnings

        warnings.simplefilter("ignore", RuntimeWarning)
        gap = means[:, :, judges.index(judge)] - np.nanmean(means[:, :, others], axis=2)
        rest = np.nanmean(gap[:, baseline], axis=1)
    d = gap[:, methods.index(method)] - rest
    d = d[~np.isnan(d)]
    low, high = stats.t.interval(0.95, len(d) - 1, loc=d.mean(), scale=stats.sem(d))
    return d.mean(), len(d), low, high


@pytest.mark.parametrize("seed", range(8))
def test_self_preference_matches_an_independent_computation(seed):
    rows = random_rows(seed)
    found = self_preference.estimates(rows, FAMILIES)
    pairs = {(e["judge"], e["method"]): e for e in found}
    assert set(pairs) == {("gpt", "Ours"), ("llama", "Base")}
    for (judge, method), estimate in pairs.items():
        value, n, low, high = independent(
            rows, judge, method, FAMILIES["judges"][judge].lower()
        )
        assert estimate["n"] == n
        assert estimate["value"] == pytest.approx(value, abs=1e-9)
        assert estimate["ci_low"] == pytest.approx(low, abs=1e-9)
        assert estimate["ci_high"] == pytest.approx(high, abs=1e-9)


def test_a_judge_favouring_its_family_fails_the_card():
    rows = [
        {
            "session_id": f"s{s}",
            "round": 1,
            "method": m,
            "judge": j,
            "metric": "al",
            "value": 50.0 + (10 + s % 3 if (j, m) == ("gpt", "Ours") else 0) + s,
            "status": "ok",
        }
        for s in range(6)
        for m in ("Ours", "Base")
        for j in ("gpt", "claude")
    ]
    families = {
        "methods": {"Ours": "openai", "Base": "meta"},
        "judges": {"gpt": "openai", "claude": "anthropic"},
    }
    measured = {"self_preference": self_preference.estimates(rows, families)}
    found = judge_validity(
        measured, ["alignment"], "gpt", {"judges": 2, "families": families}
    )
    row = rows_by(found)["self_preference"]
    assert row["verdict"] == "fail" and row["ci_low"] > 0
    assert row["shared"] == [{"judge": "gpt", "method": "Ours", "family": "openai"}]
    assert "self_preference" in found["report_card_failing"]
    [estimate] = found["self_preference"]
    assert estimate["judge_score"] == pytest.approx(
        estimate["other_families_score"] + 11
    )


def test_one_judge_sharing_a_family_is_flagged_and_not_measured():
    rows = [
        {
            "session_id": f"s{s}",
            "round": 1,
            "method": m,
            "metric": "al",
            "value": 50.0 + s,
            "status": "ok",
        }
        for s in range(4)
        for m in ("A", "B")
    ]
    families = {"methods": {"A": "qwen"}, "judges": {"qwen-72b": "Qwen"}}
    measured = {
        "self_preference": self_preference.estimates(rows, families, "qwen-72b")
    }
    found = judge_validity(
        measured, ["alignment"], "qwen-72b", {"judges": 1, "families": families}
    )
    row = rows_by(found)["self_preference"]
    assert row["verdict"] == "not_measured" and row["applies"]
    assert row["reason_code"] == "self_preference_no_other_family"
    assert row["shared"] == [{"judge": "qwen-72b", "method": "A", "family": "Qwen"}]
    assert found["self_preference"][0]["judge_score"] == pytest.approx(51.5)
    assert found["report_card_verdict"] == "not_enough_evidence"


def test_a_panel_run_with_families_reports_self_preference(
    app_factory, tmp_path, judge_server
):
    """Families named through the request reach the run, its header and the
    card: judge-b+10 scores every method 10 higher, which is no
    self-preference (the difference-in-differences is 0)."""
    judges = ["scripted", "scripted+10"]
    sessions = [
        crafted.session(
            f"s{n}",
            {
                "Base": crafted.scores([40 + n, 45], [0, 1]),
                "Ours": crafted.scores([50 + n, 60 - n], [1, 1]),
            },
        )
        for n in range(5)
    ]
    app = app_factory(JUDGE_MODELS=",".join(judges))
    path = crafted.write(tmp_path / "families.jsonl", sessions)
    families = {
        "methods": {"Ours": "acme", "Base": "meta"},
        "judges": {"scripted+10": "ACME", "scripted": "other"},
    }
    document = evaluate(
        app,
        path,
        judge_server,
        suites=["alignment"],
        judge_models=judges,
        families=families,
    )
    assert document["run"]["families"] == families
    validity = document["judge_validity"]
    [estimate] = validity["self_preference"]
    assert (estimate["judge"], estimate["method"], estimate["n"]) == (
        "scripted+10",
        "Ours",
        5,
    )
    assert estimate["value"] == pytest.approx(0.0, abs=1e-9)
    assert estimate["judge_score"] == pytest.approx(
        estimate["other_families_score"] + 10
    )
    row = rows_by(validity)["self_preference"]
    assert row["verdict"] == "pass"
    # the witness, written from report-card.md, agrees on the whole card
    from tests.witness.differences import validity_differences

    assert validity_differences(document) == []
    assert reference.judge_validity(document)["report_card"][-1]["verdict"] == "pass"


def test_the_witness_agrees_on_a_judge_favouring_its_family():
    """A crafted panel document: the witness's self-preference and card
    (docs only) against the product's, on a judge that favours its family."""
    rows = []
    for s in range(7):
        for method, bonus in (("Ours", 6 + s % 4), ("Base", 0), ("Alt", 1)):
            for judge in ("gpt", "claude", "llama"):
                for k in (1, 2):
                    value = 40.0 + 3 * s + k + (bonus if judge == "gpt" else 0)
                    value += {"Alt": 2 * (judge == "claude"), "Base": 0}.get(method, 0)
                    rows.append(reference.row(f"s{s}", k, method, "al", value, judge))
    doc = reference.tiny_doc(
        rows, ["Ours", "Base", "Alt"], models=("gpt", "claude", "llama")
    )
    doc["run"]["families"] = FAMILIES_THREE
    measured = {
        **judge_checks.validity(rows),
        "self_preference": self_preference.estimates(rows, FAMILIES_THREE),
    }
    doc["judge_validity"] = judge_validity(
        measured, ["alignment"], "gpt", {"judges": 3, "families": FAMILIES_THREE}
    )
    mine = reference.judge_validity(doc)
    from tests.witness.differences import differences

    for key in ("self_preference", "report_card", "report_card_verdict"):
        assert differences(mine[key], doc["judge_validity"][key], key) == []
    assert doc["judge_validity"]["report_card_verdict"] == "not_fit"
    assert "self_preference" in doc["judge_validity"]["report_card_failing"]


FAMILIES_THREE = {
    "methods": {"Ours": "openai", "Base": "meta", "Alt": "anthropic"},
    "judges": {"gpt": "OpenAI", "claude": "Anthropic", "llama": "other"},
}


def test_unknown_family_names_are_refused(client):
    from tests.web.views.test_api import sample_bytes, upload

    bad = upload(client, sample_bytes(), method_families="Nobody=acme")
    assert bad.status_code == 400
    assert bad.get_json()["errors"][0]["code"] == "family_unknown_method"
    pair = upload(client, sample_bytes(), method_families="Ours")
    assert pair.status_code == 400
    assert pair.get_json()["errors"][0]["code"] == "family_pair"


def test_a_judge_that_prefers_longer_replies_is_not_fit(
    app_factory, tmp_path, judge_server
):
    """The issue's crafted run: within each method the longer reply gets the
    higher AL, so the card fails the judge on length bias (not fit)."""
    sessions = [
        crafted.session(
            f"s{n}",
            {
                method: [
                    "word " * (5 + 7 * k + n)
                    + f"[[al={40 + 7 * k + n + shift}]] [[binary=1]]"
                    for k in range(3)
                ]
                for method, shift in (("Base", 0), ("Ours", 2))
            },
        )
        for n in range(4)
    ]
    app = app_factory()
    path = crafted.write(tmp_path / "longer.jsonl", sessions)
    document = evaluate(app, path, judge_server, suites=["alignment"])
    validity = document["judge_validity"]
    row = rows_by(validity)["length_spearman"]
    assert row["value"] > 0.9 and row["verdict"] == "fail"
    assert validity["report_card_verdict"] == "not_fit"
    assert validity["report_card_failing"] == ["length_spearman"]
    client = app.test_client()
    run = app.extensions["storage"].runs.get_run(document["run"]["id"])
    methods = client.get(f"/r/{run.token}/methods.txt").get_data(as_text=True)
    assert "the judge is not fit to publish with: failing length bias" in methods
    exported = client.get(f"/r/{run.token}/export.md").get_data(as_text=True)
    assert "| Length bias within methods (abs. ρ) |" in exported


def test_a_zero_width_self_preference_interval_is_null_with_a_note():
    """Every session's difference the same (+6): the t interval has width 0,
    so both ends are null with ci_no_variation (the t interval's note, as
    every t interval of the platform; ci_no_spread, "every resample of the
    sessions", was wrong for it before), and the card still fails on the
    value; the witness agrees. Before: [6.0, 6.0] was published as an
    interval."""
    rows = [
        reference.row(
            f"s{s}",
            1,
            m,
            "al",
            50.0 + s + (6 if (j, m) == ("gpt", "Ours") else 0),
            j,
        )
        for s in range(5)
        for m in ("Ours", "Base")
        for j in ("gpt", "claude")
    ]
    families = {
        "methods": {"Ours": "openai", "Base": "meta"},
        "judges": {"gpt": "openai", "claude": "anthropic"},
    }
    [estimate] = self_preference.estimates(rows, families)
    assert estimate["value"] == pytest.approx(6.0) and estimate["n"] == 5
    assert estimate["ci_low"] is None and estimate["ci_high"] is None
    assert estimate["ci_note"] == "ci_no_variation"
    assert "t interval has width 0" in estimate["ci_reason"]
    found = judge_validity(
        {"self_preference": [estimate]},
        ["alignment"],
        "gpt",
        {"judges": 2, "families": families},
    )
    row = rows_by(found)["self_preference"]
    assert row["verdict"] == "fail" and row["ci_note"] == "ci_no_variation"
    assert row["ci_low"] is None and row["ci_high"] is None
    doc = reference.tiny_doc(rows, ["Ours", "Base"], models=("gpt", "claude"))
    doc["run"]["families"] = families
    doc["judge_validity"] = found
    mine = reference.judge_validity(doc)
    from tests.witness.differences import differences

    assert differences(mine["self_preference"], [estimate], "sp") == []
    assert mine["report_card"][-1]["verdict"] == "fail"


def test_recorded_judges_are_rows_of_the_card_and_hold_no_verdict():
    """A recorded judge (verdicts a file carried) gets its own rows: its
    lowest ρ with the human scores over the criteria, and its lowest α with
    the run's judges, marked recorded; a failing recorded judge does not
    make the run's judge unfit. Before: no such rows."""
    human = {
        "live": {"n": 20, "al_spearman": 0.9, "n_al": 20, "scores": {}},
        "CJ/zh": {
            "recorded": True,
            "n": 9,
            "scores": {
                "engagement:1-5": {
                    "criterion": "engagement",
                    "scale": [1, 5],
                    "spearman": 0.41,
                    "spearman_ci": [0.1, 0.7],
                    "n": 9,
                    "alpha_with": {"live": {"alpha": 0.5, "n": 9, "level": "ordinal"}},
                },
                "memory:1-3": {
                    "criterion": "memory",
                    "scale": [1, 3],
                    "spearman": 0.8,
                    "n": 8,
                },
            },
        },
        "CJ/en": {
            "recorded": True,
            "n": 3,
            "scores": {
                "memory:1-3": {
                    "criterion": "memory",
                    "scale": [1, 3],
                    "spearman": None,
                    "n": 1,
                }
            },
        },
    }
    found = judge_validity({"human": human}, ["alignment"], "live", {"judges": 1})
    recorded = [r for r in found["report_card"] if r.get("recorded")]
    shown = [
        (r["criterion"], r["judge"], r["value"], r["n"], r["verdict"]) for r in recorded
    ]
    assert shown == [
        ("recorded_human_spearman", "CJ/en", None, 1, "not_measured"),
        ("recorded_human_spearman", "CJ/zh", 0.41, 9, "fail"),
        ("recorded_inter_judge_alpha", "CJ/zh", 0.5, 9, "fail"),
    ]
    assert recorded[1]["scale_criterion"] == "engagement (1–5)"
    assert (recorded[1]["ci_low"], recorded[1]["ci_high"]) == (0.1, 0.7)
    assert recorded[2]["with"] == "live"
    assert recorded[0]["reason_code"] == "agreement_too_few"
    # the run's own judge passes; the recorded judge's failures are its own
    assert rows_by(found)["human_al_spearman"]["verdict"] == "pass"
    assert found["report_card_verdict"] != "not_fit"
    assert found["report_card_failing"] == []


def test_recorded_judges_in_the_card_of_a_run_without_a_judge(app_factory, tmp_path):
    """A CharacterBench file evaluated with no judge configured: the card
    (results, dashboard in en/zh/ko, export.md, export.tex) has a row per
    recorded variant, marked recorded, whose ρ is scipy's on the same pairs;
    the witness agrees on the card. Before: no card (no judge of the run)."""
    from scipy import stats

    from tests.dataset.test_characterbench import _recorded_file, run_cli
    from tests.store.test_workspaces import upload
    from tests.web.views.test_api import wait_final
    from tests.witness.differences import validity_differences

    triples = [
        (1, 1.0, 1.4),
        (2, 3.0, 2.1),
        (3, 2.0, 3.3),
        (4, 4.0, 3.9),
        (2, 1.0, 2.2),
    ]
    folder = tmp_path / "cb"
    folder.mkdir()
    _recorded_file(folder / "memory_consistency_test.json", triples)
    app = app_factory()
    out = tmp_path / "cb.jsonl"
    assert run_cli(app, str(folder), "--out", str(out)).exit_code == 0
    client = app.test_client()
    client.get("/")
    answer = upload(client, out.read_bytes(), suites="alignment")
    assert answer.status_code == 202, answer.get_json()
    token = answer.get_json()["token"]
    results = wait_final(client, token)["results"]
    validity = results["judge_validity"]
    rows = [r for r in validity["report_card"] if r.get("recorded")]
    assert len(rows) == 16 and {r["criterion"] for r in rows} == {
        "recorded_human_spearman"
    }
    zh = next(r for r in rows if r["judge"] == "CharacterJudge/zh")
    labels = [t[0] for t in triples]
    rho = stats.spearmanr([t[1] for t in triples], labels)[0]
    assert zh["value"] == pytest.approx(rho) and zh["n"] == 5
    assert zh["scale_criterion"] == "memory_consistency (1–4)"
    assert validity_differences(results) == []
    for lang, said in (("en", " (recorded)"), ("zh", "（记录）"), ("ko", " (기록됨)")):
        page = client.get(f"/r/{token}?lang={lang}").get_data(as_text=True)
        assert 'data-testid="report-card"' in page
        assert f"CharacterJudge/zh{said}: {rho:.3f}" in page
        assert 'data-testid="card-recorded-note"' in page
    markdown = client.get(f"/r/{token}/export.md").get_data(as_text=True)
    assert (
        "| Recorded judge: agreement with human scores (ρ) · memory\\_consistency "
        f"(1–4) | CharacterJudge/zh (recorded) | {rho:.3f}"
    ) in markdown
    tex = client.get(f"/r/{token}/export.tex").get_data(as_text=True)
    assert r"CharacterJudge/zh (recorded) & \raggedright " + f"{rho:.3f}" in tex
