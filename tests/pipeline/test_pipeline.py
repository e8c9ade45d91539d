"""End to end through the queue, real workers and real HTTP to the scripted
judge: once on the embedded worker, once on Redis + PostgreSQL with a worker
started as a separate ``celery -A app:celery_app worker`` process. The
queue (``pipeline/worker/queue.py``) on the local broker and on Redis
(``pipeline/worker/redis_broker.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.service import reuse
from testing.judge_server import ScriptedJudge
from tests import crafted
from tests.pipeline_support import evaluate, submit, wait_for


def rows_by(document, **match):
    return [r for r in document["rows"] if all(r[k] == v for k, v in match.items())]


def test_alignment_statistics_are_exact(web_app, judge_server, tmp_path):
    path = crafted.write(tmp_path / "crafted.jsonl", crafted.alignment_sessions())
    document = evaluate(web_app, path, judge_server)
    assert document["run"]["status"] == "done"
    ours, base = document["summary"]["Ours"], document["summary"]["Base"]
    assert ours["al_slope"] == pytest.approx(10.0)
    assert ours["al_intercept"] == pytest.approx(30.0)
    assert ours["al_r2"] == pytest.approx(1.0)
    assert ours["al_avg"] == pytest.approx(60.0)
    assert ours["binary_rate"] == pytest.approx(0.8)
    assert ours["al_session_slope"] == pytest.approx(10.0)
    assert base["al_slope"] == pytest.approx(0.0)
    assert base["al_r2"] is None  # constant AL(k): nothing to explain
    assert base["binary_rate"] == 0.0
    curve = document["curves"]["al"]["Ours"]
    assert [(p["k"], p["mean"], p["n"]) for p in curve] == [
        (1, 40.0, 2),
        (2, 50.0, 2),
        (3, 60.0, 2),
        (4, 70.0, 2),
        (5, 80.0, 2),
    ]
    assert curve[0]["ci_low"] < 40.0 < curve[0]["ci_high"]
    assert [p["mean"] for p in document["curves"]["nal"]["Ours"]] == [
        0,
        0.25,
        0.5,
        0.75,
        1,
    ]
    assert document["curves"]["nal"]["Base"] == []  # max = min: undefined
    [comparison] = [c for c in document["comparisons"] if c["metric"] == "al"]
    assert (comparison["a"], comparison["b"], comparison["n"]) == ("Base", "Ours", 2)
    assert comparison["diff"] == pytest.approx(-20.0)
    assert document["run"]["counts"]["judge_calls"] == 40
    assert len(rows_by(document, metric="al")) == 20


def test_rerun_of_the_same_file_makes_zero_judge_calls(
    web_app, judge_server, tmp_path, monkeypatch
):
    path = crafted.write(tmp_path / "crafted.jsonl", crafted.alignment_sessions())
    first = evaluate(web_app, path, judge_server)
    calls = judge_server.state.calls
    second = evaluate(web_app, path, judge_server)  # identical: the rows are copied
    assert judge_server.state.calls == calls
    assert second["run"]["reused"] is True
    assert second["run"]["counts"]["judge_calls"] == 0
    assert second["summary"] == first["summary"]
    # evaluated again (other code), every verdict comes from the judge cache
    monkeypatch.setattr(reuse, "code_fingerprint", lambda: "another release")
    third = evaluate(web_app, path, judge_server)
    assert judge_server.state.calls == calls
    assert third["run"]["reused"] is False
    assert third["run"]["counts"]["judge_calls"] == 0
    assert third["run"]["counts"]["cache_hits"] == first["run"]["counts"]["judge_calls"]
    assert third["summary"] == first["summary"]


def test_judge_faults_are_visible_and_never_imputed(web_app, judge_server, tmp_path):
    path = crafted.write(tmp_path / "faults.jsonl", crafted.fault_sessions())
    document = evaluate(web_app, path, judge_server)
    assert document["run"]["status"] == "partial"
    ours = {r["round"]: r for r in rows_by(document, method="Ours", metric="al")}
    assert {k: ours[k]["status"] for k in ours} == {
        1: "ok",
        2: "ok",
        3: "unscored",
        4: "ok",
        5: "error",
        6: "error",
    }
    assert all(ours[k]["value"] == 70.0 for k in (1, 2, 4))
    assert all(ours[k]["value"] is None for k in (3, 5, 6))
    assert ours[3]["note_code"] == "no_verdict"  # asked twice, no verdict read
    assert ours[6]["note"] == "judge answered HTTP 401"
    assert document["summary"]["Ours"]["al_avg"] == pytest.approx(70.0)
    counts = document["run"]["counts"]
    assert counts["unscored"] == 7  # al, five dimensions, binary
    assert counts["errors"] == 14


def test_without_a_judge_metrics_are_not_configured(embedded_app, tmp_path):
    path = crafted.write(tmp_path / "crafted.jsonl", crafted.alignment_sessions())
    document = evaluate(embedded_app, path, None)
    assert document["run"]["status"] == "done"
    assert document["run"]["judge"] is None
    judged = [r for r in document["rows"] if r["metric"] in ("al", "binary")]
    assert {r["status"] for r in judged} == {"not_configured"}
    assert document["run"]["counts"]["not_configured"] == 40
    assert document["summary"]["Ours"]["al_avg"] is None
    quality = [r for r in document["rows"] if r["metric"] == "quality"]
    assert len(quality) == 20 and {r["status"] for r in quality} == {"ok"}


def test_cancel_stops_a_running_run(embedded_app, tmp_path):
    path = crafted.write(tmp_path / "crafted.jsonl", crafted.alignment_sessions() * 1)
    with ScriptedJudge(latency=0.3) as slow:
        run_id = submit(embedded_app, path, slow)
        wait_for(embedded_app, run_id, statuses=("running",))
        service = embedded_app.extensions["runs"]
        run = embedded_app.extensions["storage"].runs.get_run(run_id)
        assert service.cancel(run) is True
        assert service.cancel(run) is False
        document = wait_for(embedded_app, run_id)
    assert document["run"]["status"] == "cancelled"
    assert len(document["rows"]) < 40 * 7 / 2


def test_deterministic_suites_run_without_a_judge(embedded_app, tmp_path):
    """Judge suites become not_configured; a suite that needs no judge still
    scores every row, and the alignment suite still records each response's
    length (a fact, not a judgement)."""
    from metrics import registry

    path = crafted.write(tmp_path / "crafted.jsonl", crafted.alignment_sessions())
    document = evaluate(embedded_app, path, None, suites=["alignment", "quality"])
    statuses = {(r["metric"], r["status"]) for r in document["rows"]}
    quality = registry.get("quality").metrics
    assert statuses == {
        ("al", "not_configured"),
        ("binary", "not_configured"),
        ("response_chars", "ok"),
        *((m.id, "ok") for m in quality if m.level == "row"),
    }
    assert document["run"]["suites"] == ["alignment", "quality"]


def test_the_judge_key_never_reaches_logs_or_results(
    app_factory, judge_server, tmp_path, caplog
):
    import logging

    caplog.set_level(logging.DEBUG)
    app = app_factory(
        JUDGE_API_URL=judge_server.url,
        JUDGE_MODEL="scripted",
        JUDGE_API_KEY="sk-secret-123",
    )
    path = crafted.write(tmp_path / "crafted.jsonl", crafted.alignment_sessions())
    document = evaluate(app, path, None)
    assert document["run"]["counts"]["judge_calls"] == 40
    assert "sk-secret-123" not in caplog.text
    assert "sk-secret-123" not in json.dumps(document)


def roleplay_session(session_id: str, marker: str) -> dict:
    session = crafted.session(
        session_id,
        {
            "Base": [f"Hi. {marker}", "Sure."],
            "Ours": [f"Hehe, stargazing tonight? {marker}", "Orion is up!"],
        },
    )
    session["attributes"] = ["cheerful", "sarcastic", "happy", "loves astronomy"]
    session["sample_dialogues"] = [
        "Hehe~ did you see the moon tonight?",
        "Ugh, Mondays.",
    ]
    return session


def test_roleplay_suite_through_the_scripted_judge(
    embedded_app, judge_server, tmp_path
):
    scripted = "[[jera=7]] [[attr=Cheerful]] [[attr=sarcastik]] [[implied=glad]]"
    sessions = [
        roleplay_session("good", scripted),
        roleplay_session("broken", "[[fault=garbage]]"),
    ]
    path = crafted.write(tmp_path / "roleplay.jsonl", sessions)
    document = evaluate(embedded_app, path, judge_server, suites=["roleplay"])
    rows = {(r["session_id"], r["method"], r["metric"]): r for r in document["rows"]}
    good = rows[("good", "Ours", "jera")]
    assert (good["status"], good["value"], good["round"]) == ("ok", 210.0, None)
    assert rows[("good", "Ours", "jera_creativity")]["value"] == 70.0
    assert (
        rows[("good", "Ours", "almp")]["value"] == 0.75
    )  # exact, fuzzy, WordNet, one miss
    for metric in ("jera", "almp"):
        broken = rows[("broken", "Ours", metric)]
        assert (broken["status"], broken["value"]) == ("unscored", None)
    assert document["run"]["status"] == "partial"
    assert document["run"]["judge"]["prompts"] == {
        "jera": "jera_v2",
        "almp_extract": "almp_extract_v2",
        "almp_infer": "almp_infer_v2",
    }
    assert (
        document["summary"]["Ours"]["jera_avg"] == 210.0
    )  # the unscored session is excluded


def test_sample_data_with_a_judge_that_answers_everything_ends_done(
    embedded_app, judge_server
):
    """The shipped sample, every suite, a judge that answers every prompt: the
    run is done; ERTD cannot read the Chinese and Korean sessions, so those
    rows are not_applicable (with the reason), never unscored."""
    from metrics import registry

    sample = Path(__file__).resolve().parents[2] / "sample_data.jsonl"
    document = evaluate(embedded_app, sample, judge_server, suites=registry.names())
    assert document["run"]["status"] == "done"
    statuses = {row["status"] for row in document["rows"]}
    assert statuses == {"ok", "not_applicable"}
    ertd = rows_by(document, metric="ertd")
    for row in ertd:
        multilingual = row["session_id"].startswith(("ps-zh-", "ps-ko-"))
        expected = "not_applicable" if multilingual else "ok"
        assert row["status"] == expected, row
        assert bool(row["note"]) == multilingual
    assert {r["session_id"][:5] for r in ertd if r["status"] == "ok"} == {"ps-en"}
