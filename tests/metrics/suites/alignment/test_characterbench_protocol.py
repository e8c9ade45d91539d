"""The CharacterBench judge protocol (``protocols/characterbench.toml``) and
criterion modes (``metrics/suites/alignment/criteria.py``): one mode per
dimension on the dimension's own scale; a live judge's scores beside the
recorded CharacterJudge's and the human labels, each judge's agreement
equal to scipy's on the same pairs (``docs/protocols.md``)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from dataset.characterbench import SCALES
from metrics import protocols
from metrics.protocol_checks import ProtocolError

SAMPLE = Path(__file__).parents[3] / "data" / "importers" / "characterbench"
PROTOCOL = protocols.builtin("characterbench")
# most released records have no user profile: the converter takes one given
PROFILE = ("--profile", "A user chatting with the character.")


def run_cli(app, *args: str):
    return app.test_cli_runner().invoke(args=["convert", *args])


def test_one_mode_per_dimension_on_its_own_scale():
    modes = PROTOCOL.criteria()
    assert sorted(modes) == sorted(SCALES)
    for name, mode in modes.items():
        assert (mode.verdict.low, mode.verdict.high) == SCALES[name]
        assert mode.verdict.integer
        user = mode.template.user.template
        assert {"$character", "$history", "$user_message", "$response"} <= {
            word for word in user.split() if word.startswith("$")
        }
    # the reference slot where the dimension has one
    with_reference = {
        n for n, m in modes.items() if "$reference" in m.template.user.template
    }
    assert with_reference == set(SCALES) - {
        "engagement",
        "human_likeness",
        "morality_robustness",
        "morality_stability",
    }


@pytest.mark.parametrize(
    ("reply", "value", "code"),
    [
        ("Reason: fine.\nScore: 3", 3.0, None),
        ("Reason: fine.\nScore: 5", None, "verdict_out_of_scale"),  # 1-4: never clipped
        ("Reason: fine.\nScore: 0", None, "verdict_out_of_scale"),
        ("Reason: fine.\nScore: 2.5", None, "verdict_out_of_scale"),  # whole points
        ("It is quite consistent.", None, "no_verdict"),  # never imputed
    ],
)
def test_a_verdict_off_the_declared_scale_is_no_verdict(reply, value, code):
    parsed = PROTOCOL.modes["memory_consistency"].parse(reply)
    if value is not None:
        assert parsed.score == value
    else:
        assert parsed.note.code == code


def test_a_criterion_mode_is_checked_like_any_mode():
    good = """name = "mine"
version = "1"
[modes.politeness]
kind = "criterion"
scale = { min = 1, max = 3 }
system = "Judge politeness."
user = "$character $reference $response"
format = "Score: <1 to 3>"
"""
    assert protocols.load(good).criteria()["politeness"].verdict.high == 3.0
    with pytest.raises(ProtocolError) as bad:
        protocols.load(
            good.replace("max = 3", "max = 3.5").replace("$reference", "$refrence")
        )
    said = str(bad.value.problems)
    assert "refrence" in said and "whole numbers" in said
    with pytest.raises(ProtocolError):  # a fixed mode name keeps its own kind
        protocols.load(good.replace("politeness", "alignment"))


def _records(name: str) -> list[dict]:
    return json.loads((SAMPLE / name).read_text("utf-8"))


# (human score, CharacterJudge/zh, CharacterJudge/en_sc, the live judge's score)
MEMORY = [
    (1, 1.0, 1.4, 1),
    (2, 3.0, 2.1, 2),
    (3, 2.0, 3.3, 4),
    (4, 4.0, 3.9, 4),
    (2, 1.0, 2.2, 1),
    (3, 3.0, 2.8, 3),
    (4, 3.0, 3.6, 3),
    (1, 2.0, 1.1, 2),
]
ENGAGEMENT = [
    (1, 2.0, 1.5, 1),
    (2, 2.0, 2.2, 3),
    (3, 4.0, 3.1, 3),
    (4, 4.0, 4.4, 5),
    (5, 5.0, 4.8, 4),
    (5, 3.0, 4.1, 5),
]


def _dimension_file(path: Path, template: str, quads) -> Path:
    """Invented records in the released layout: each reply scripts the live
    judge's score (``[[score=N]]``), the pred_* fields the recorded ones."""
    [first, *_] = _records(template)
    made = []
    for k, (score, zh, en_sc, live) in enumerate(quads, start=1):
        record = copy.deepcopy(first)
        record["id"] = 300 + k
        record["annotation_score"] = record["gold"] = score
        record["response_messages"]["model"] = "gpt" if k % 2 else "glm"
        record["response_messages"]["response"] = f"[[score={live}]] reply {k}"
        for field in [f for f in record if f.startswith("pred_")]:
            record[field] = float(score)
        record["pred_zh"], record["pred_en_sc"] = zh, en_sc
        made.append(record)
    path.write_text(json.dumps(made, ensure_ascii=False), "utf-8")
    return path


def _scipy(found: dict, judged, labels) -> None:
    from scipy import stats

    assert found["n"] == len(judged)
    assert found["pearson"] == pytest.approx(stats.pearsonr(judged, labels)[0])
    assert found["spearman"] == pytest.approx(stats.spearmanr(judged, labels)[0])
    assert found["kendall"] == pytest.approx(stats.kendalltau(judged, labels)[0])


def test_a_live_run_scores_each_dimension_on_its_scale_beside_the_recorded_judge(
    app_factory, judge_server, tmp_path
):
    """Converted with ``flask convert --from characterbench``, uploaded with
    the characterbench protocol: the live judge's rows are on each
    dimension's scale, and the judge audit gives its agreement with the
    human labels beside each recorded CharacterJudge variant's, each equal
    to scipy's on the same pairs, with κ's bootstrap interval and α between
    the recorded and the live judge."""
    import krippendorff
    import numpy as np
    from sklearn.metrics import cohen_kappa_score

    from metrics.correlation_ci import kappa_interval
    from tests.store.test_workspaces import upload
    from tests.web.views.test_api import wait_final

    folder = tmp_path / "cb"
    folder.mkdir()
    _dimension_file(
        folder / "memory_consistency_test.json", "memory_consistency_test.json", MEMORY
    )
    _dimension_file(folder / "engagement_test.json", "engagement_test.json", ENGAGEMENT)
    app = app_factory(JUDGE_API_URL=judge_server.url, JUDGE_MODEL="scripted")
    out = tmp_path / "cb.jsonl"
    converted = run_cli(app, "--from", "characterbench", str(folder), "--out", str(out))
    assert converted.exit_code == 0, converted.stderr
    client = app.test_client()
    client.get("/")
    answer = upload(
        client, out.read_bytes(), suites="alignment", protocol="characterbench"
    )
    assert answer.status_code == 202, answer.get_json()
    token = answer.get_json()["token"]
    final = wait_final(client, token)
    results = final["results"]
    assert results["run"]["status"] == "done", final
    # one request per reply: each session is asked its own dimension only
    assert results["run"]["counts"]["judge_calls"] == len(MEMORY) + len(ENGAGEMENT)
    scores = sorted(
        (r["metric"], r["value"])
        for r in results["rows"]
        if r["metric"].startswith("judge_score@")
    )
    assert [m for m, _ in scores] == ["judge_score@engagement:1-5"] * len(
        ENGAGEMENT
    ) + ["judge_score@memory_consistency:1-4"] * len(MEMORY)
    human = results["judge_validity"]["human"]
    for key, quads, scale in (
        ("memory_consistency:1-4", MEMORY, [1, 4]),
        ("engagement:1-5", ENGAGEMENT, [1, 5]),
    ):
        labels = [q[0] for q in quads]
        live = [q[3] for q in quads]
        mine = human["scripted"]["scores"][key]
        assert mine["source"] == "criterion" and mine["scale"] == scale
        _scipy(mine, live, labels)
        points = list(range(scale[0], scale[1] + 1))
        expected = cohen_kappa_score(live, labels, labels=points, weights="quadratic")
        assert mine["weighted_kappa"] == pytest.approx(expected)
        assert mine["weighted_kappa_ci"] == pytest.approx(
            kappa_interval(live, labels)[0]
        )
        low, high = mine["weighted_kappa_ci"]
        assert low <= mine["weighted_kappa"] <= high
        for judge, column in (("CharacterJudge/zh", 1), ("CharacterJudge/en_sc", 2)):
            recorded = human[judge]["scores"][key]
            judged = [q[column] for q in quads]
            _scipy(recorded, judged, labels)
            # α between the recorded verdicts and the live judge's scores
            alpha = recorded["alpha_with"]["scripted"]
            level = "ordinal" if column == 1 else "interval"
            assert alpha["level"] == level and alpha["n"] == len(quads)
            assert alpha["alpha"] == pytest.approx(
                krippendorff.alpha(
                    np.array([judged, live], dtype=float),
                    level_of_measurement=level,
                )
            )

    # the witness (tests/witness/reference.py, written from the docs) agrees
    from tests.witness.differences import validity_differences

    assert validity_differences(results) == []
    from tests.witness import reference

    witnessed = reference.judge_validity(results)["human"]
    assert witnessed["scripted"]["scores"]["engagement:1-5"]["source"] == "criterion"
    assert "weighted_kappa" in witnessed["scripted"]["scores"]["engagement:1-5"]
    zh_alpha = witnessed["CharacterJudge/zh"]["scores"]["engagement:1-5"]["alpha_with"]
    sc_alpha = witnessed["CharacterJudge/en_sc"]["scores"]["engagement:1-5"][
        "alpha_with"
    ]
    assert zh_alpha["scripted"]["level"] == "ordinal"
    assert sc_alpha["scripted"]["level"] == "interval"
    # the dashboard's judge audit: one table, recorded and live side by side
    from tests.dataset.test_characterbench import agreement_rows

    page = client.get(f"/r/{token}?lang=en").get_data(as_text=True)
    rows = {(row[0], row[1]): row for row in agreement_rows(page)}
    zh = human["CharacterJudge/zh"]["scores"]["memory_consistency:1-4"]
    live = human["scripted"]["scores"]["memory_consistency:1-4"]
    shown_live = rows[("memory_consistency (1–4)", "scripted")]
    shown_zh = rows[("memory_consistency (1–4)", "CharacterJudge/zh (recorded)")]
    assert shown_live[2] == shown_zh[2] == str(len(MEMORY))
    assert shown_live[4].startswith(f"{live['spearman']:.3f}")
    assert shown_zh[4].startswith(f"{zh['spearman']:.3f}")
    alpha = zh["alpha_with"]["scripted"]
    assert shown_zh[7] == f"scripted: {alpha['alpha']:.3f} (ordinal, n={len(MEMORY)})"
    keys = list(rows)  # per criterion, the run's judge first
    assert keys.index(("memory_consistency (1–4)", "scripted")) < keys.index(
        ("memory_consistency (1–4)", "CharacterJudge/zh (recorded)")
    )
    # and the exports' per-criterion agreement table
    markdown = client.get(f"/r/{token}/export.md").get_data(as_text=True)
    line = next(
        line
        for line in markdown.splitlines()
        if line.startswith("| memory\\_consistency (1–4) | scripted |")
    )
    assert f"{live['kendall']:.3f}" in line and f"{live['pearson']:.3f}" in line
    assert "| memory\\_consistency (1–4) | CharacterJudge/zh (recorded) |" in markdown
    methods = client.get(f"/r/{token}/methods.txt").get_data(as_text=True)
    assert "Agreement with the human scores was measured per criterion" in methods
    assert "Krippendorff's alpha between each recorded judge" in methods
    tex = client.get(f"/r/{token}/export.tex").get_data(as_text=True)
    assert "memory\\_consistency (1--4) & CharacterJudge/zh (recorded)" in tex


def test_the_sample_converts_and_a_live_run_scores_it(
    app_factory, judge_server, tmp_path
):
    """The shared sample's three dimension files: every record converts, a
    run with the protocol asks each session its own dimension and stores
    its score on that dimension's scale."""
    from tests.store.test_workspaces import upload
    from tests.web.views.test_api import wait_final

    app = app_factory(JUDGE_API_URL=judge_server.url, JUDGE_MODEL="scripted")
    out = tmp_path / "sample.jsonl"
    converted = run_cli(
        app, "--from", "characterbench", str(SAMPLE), "--out", str(out), *PROFILE
    )
    assert converted.exit_code == 0, converted.stderr
    sessions = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert len(sessions) == sum(len(_records(p.name)) for p in SAMPLE.glob("*.json"))
    client = app.test_client()
    client.get("/")
    answer = upload(
        client, out.read_bytes(), suites="alignment", protocol="characterbench"
    )
    results = wait_final(client, answer.get_json()["token"])["results"]
    assert results["run"]["status"] == "done"
    found = {
        r["session_id"]: r["metric"]
        for r in results["rows"]
        if r["metric"].startswith("judge_score@") and r["status"] == "ok"
    }
    assert set(found) == {s["session_id"] for s in sessions}
    for session_id, metric in found.items():
        dimension = session_id.partition(":")[0]
        low, high = SCALES[dimension]
        assert metric == f"judge_score@{dimension}:{low}-{high}"
    for row in results["rows"]:
        if row["metric"].startswith("judge_score@"):
            low, high = SCALES[row["session_id"].partition(":")[0]]
            assert low <= row["value"] <= high and row["value"] == int(row["value"])
    # the live judge's agreement per dimension: scipy's on the same pairs
    by = {}
    for row in results["rows"]:
        kind, _, key = row["metric"].partition("@")
        if kind in ("judge_score", "human_score") and row["status"] == "ok":
            by.setdefault(key, {}).setdefault(row["session_id"], {})[kind] = row[
                "value"
            ]
    human = results["judge_validity"]["human"]["scripted"]["scores"]
    for key, items in by.items():
        pairs = [(v["judge_score"], v["human_score"]) for v in items.values()]
        judged, labels = [p[0] for p in pairs], [p[1] for p in pairs]
        assert human[key]["n"] == len(pairs) and human[key]["source"] == "criterion"
        if len(set(judged)) > 1 and len(set(labels)) > 1:
            _scipy(human[key], judged, labels)


def _expected(records_by_dimension: dict) -> dict:
    """``{(variant, dimension): (pred values, human scores)}`` read from the
    released-layout records themselves."""
    found: dict = {}
    for dimension, records in records_by_dimension.items():
        for record in records:
            for field, value in record.items():
                if field.startswith("pred_"):
                    key = (f"CharacterJudge/{field.removeprefix('pred_')}", dimension)
                    judged, labels = found.setdefault(key, ([], []))
                    judged.append(value)
                    labels.append(record["annotation_score"])
    return found


@pytest.mark.slow
def test_recorded_judges_evaluate_with_no_judge_through_the_cli(tmp_path):
    """The path a user takes, with no judge configured: ``flask convert
    --from characterbench`` on the dimension files, then ``flask evaluate``:
    done, no judge call, and each recorded CharacterJudge variant's
    agreement with the human scores per dimension, equal to scipy's."""
    from tests.cli.test_commands import clean_env, flask_command

    folder = tmp_path / "cb"
    folder.mkdir()
    made = {
        "memory_consistency": _dimension_file(
            folder / "memory_consistency_test.json",
            "memory_consistency_test.json",
            MEMORY,
        ),
        "engagement": _dimension_file(
            folder / "engagement_test.json", "engagement_test.json", ENGAGEMENT
        ),
    }
    env = {
        key: value
        for key, value in clean_env(tmp_path).items()
        if not key.startswith("JUDGE_")
    }
    converted = tmp_path / "cb.jsonl"
    done = flask_command(
        "convert",
        "--from",
        "characterbench",
        str(folder),
        "--out",
        str(converted),
        env=env,
    )
    assert done.returncode == 0, done.stderr
    out = tmp_path / "results.json"
    done = flask_command(
        "evaluate", str(converted), "--suite", "alignment", "--out", str(out), env=env
    )
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads(out.read_text("utf-8"))
    assert results["run"]["status"] == "done"
    assert results["run"]["counts"]["judge_calls"] == 0
    human = results["judge_validity"]["human"]
    expected = _expected(
        {name: json.loads(path.read_text("utf-8")) for name, path in made.items()}
    )
    assert {judge for judge, _ in expected} == set(human) and len(human) == 16
    for (judge, dimension), (judged, labels) in expected.items():
        low, high = SCALES[dimension]
        found = human[judge]["scores"][f"{dimension}:{low}-{high}"]
        assert human[judge]["recorded"] is True
        _scipy(found, judged, labels)


@pytest.mark.slow
def test_the_sample_evaluates_with_no_judge(tmp_path):
    """The shared sample as released: converted and evaluated with no judge,
    each recorded variant's agreement per dimension where two items or more
    give one, equal to scipy's."""
    from tests.cli.test_commands import clean_env, flask_command

    env = {
        key: value
        for key, value in clean_env(tmp_path).items()
        if not key.startswith("JUDGE_")
    }
    converted = tmp_path / "sample.jsonl"
    done = flask_command(
        "convert",
        "--from",
        "characterbench",
        str(SAMPLE),
        "--out",
        str(converted),
        *PROFILE,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    out = tmp_path / "results.json"
    done = flask_command(
        "evaluate", str(converted), "--suite", "alignment", "--out", str(out), env=env
    )
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads(out.read_text("utf-8"))
    assert results["run"]["status"] == "done"
    assert results["run"]["counts"]["judge_calls"] == 0
    human = results["judge_validity"]["human"]
    expected = _expected(
        {
            path.name.removesuffix("_test.json"): json.loads(path.read_text("utf-8"))
            for path in SAMPLE.glob("*_test.json")
        }
    )
    assert len({judge for judge, _ in expected}) == 16
    for (judge, dimension), (judged, labels) in expected.items():
        low, high = SCALES[dimension]
        found = human[judge]["scores"][f"{dimension}:{low}-{high}"]
        assert found["n"] == len(judged)
        if len(judged) >= 2 and len(set(judged)) > 1 and len(set(labels)) > 1:
            _scipy(found, judged, labels)


def test_judge_check_asks_each_dimension_on_its_scale(app_factory, judge_server):
    """``flask judge-check --protocol characterbench``: one request per
    dimension, the example's character and reference filled in, the verdict
    read on the dimension's scale."""
    app = app_factory(JUDGE_API_URL=judge_server.url, JUDGE_MODEL="scripted")
    result = app.test_cli_runner().invoke(
        args=["judge-check", "--protocol", "characterbench", "--json"]
    )
    assert result.exit_code == 0, result.output
    found = {r["mode"]: r for r in json.loads(result.output)}
    assert set(found) == set(SCALES)
    for name, checked in found.items():
        low, high = SCALES[name]
        assert low <= checked["verdict"] <= high, checked


def test_the_cost_estimate_counts_one_request_per_reply_with_its_context():
    """A converted record is asked its own dimension only, and the estimate
    counts the character, reference and earlier turns the prompt shows."""
    from dataset.characterbench import characterbench
    from dataset.importers import Options
    from metrics.judging import judge_items
    from metrics.prompt_fields import prompt_fields
    from metrics.suites.alignment import estimate
    from metrics.suites.alignment.criteria import asked

    [record] = _records("memory_consistency_test.json")[:1]
    session = characterbench(
        record, 1, Options(source="memory_consistency_test.json", profile="A user.")
    )
    [method] = session["rounds"][0]["responses"]
    options = {"protocol": PROTOCOL.stored()}
    calls, chars = estimate(session, [method], None, options)
    assert calls == 1
    [mode] = asked(session, PROTOCOL.criteria())
    [item] = judge_items(mode, 1, **prompt_fields(session, method, 0, None))
    sent = sum(len(message["content"]) for message in item.messages)
    assert 0.9 * sent <= chars <= 1.1 * sent, (chars, sent)
