"""Missing replies end to end (``docs/input-format.md#missing-replies``):
the shipped sample with a failed generation (null), a method left out of
one session and a method evaluated on one session only, through every
suite with the scripted judge over HTTP."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from metrics import registry
from tests.pipeline_support import evaluate

ROOT = Path(__file__).resolve().parents[1]
EVERY_SUITE = [suite.name for suite in registry.suites()]
TOUCHED = {"ps-en-002", "ps-zh-001"}  # the sessions that lose replies


def sample() -> list[dict]:
    lines = (ROOT / "sample_data.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def with_missing_replies() -> list[dict]:
    """Ours fails round 2 of ps-en-002 (null); RAG is absent from every
    round of ps-zh-001; New replies only in ps-zh-001."""
    sessions = sample()
    for session in sessions:
        if session["session_id"] == "ps-en-002":
            session["rounds"][1]["responses"]["Ours"] = None
        if session["session_id"] == "ps-zh-001":
            for round_ in session["rounds"]:
                del round_["responses"]["RAG"]
                round_["responses"]["New"] = "新的回复"
    return sessions


def write(path: Path, sessions: list[dict]) -> Path:
    lines = (json.dumps(session, ensure_ascii=False) for session in sessions)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def documents(tmp_path_factory):
    """The complete sample and the one with missing replies, evaluated by
    every suite on one app (a module fixture: two full runs)."""
    from app import create_app
    from bench.judge_server import ScriptedJudge
    from tests.conftest import stop_embedded
    from tests.pipeline_support import base_config

    tmp = tmp_path_factory.mktemp("missing")
    with ScriptedJudge() as judge:
        app = create_app({
            **base_config(tmp), "DATABASE_URL": f"sqlite:///{tmp / 'db.sqlite3'}",
            "REDIS_URL": None,
        })  # fmt: skip
        try:
            complete = evaluate(app, write(tmp / "complete.jsonl", sample()), judge,
                                suites=EVERY_SUITE)  # fmt: skip
            missing = write(tmp / "missing.jsonl", with_missing_replies())
            lacking = evaluate(app, missing, judge, suites=EVERY_SUITE)
            yield complete, lacking, app
        finally:
            stop_embedded(app)


def test_missing_replies_are_counted_apart_and_never_make_a_run_partial(documents):
    complete, lacking, _ = documents
    assert complete["run"]["status"] == lacking["run"]["status"] == "done"
    assert lacking["run"]["file"]["methods"] == ["Base", "RAG", "Ours", "New"]
    missing = [row for row in lacking["rows"] if row["status"] == "missing"]
    sessions = {s["session_id"]: len(s["rounds"]) for s in sample()}
    # Ours: 1 round; RAG: ps-zh-001's rounds; New: every round but ps-zh-001's
    lacks = 1 + sessions["ps-zh-001"] + sum(sessions.values()) - sessions["ps-zh-001"]
    assert len(missing) == lacks * len(EVERY_SUITE)
    assert lacking["run"]["counts"]["missing"] == len(missing)
    assert complete["run"]["counts"]["missing"] == 0
    assert {row["note_code"] for row in missing} == {"reply_missing"}
    assert Counter(row["metric"] for row in missing) == Counter(
        {registry.get(name).headline.id: lacks for name in EVERY_SUITE}
    )
    # no reply, no value: nothing scored for a missing (session, round, method)
    gone = {(r["session_id"], r["round"], r["method"]) for r in missing}
    scored = [
        row for row in lacking["rows"]
        if row["status"] != "missing" and row["round"] is not None
        and (row["session_id"], row["round"], row["method"]) in gone
    ]  # fmt: skip
    assert scored == []


def test_untouched_sessions_are_evaluated_exactly_as_before(documents):
    complete, lacking, _ = documents

    def kept(document, exclude_methods=("New",)):
        return sorted(
            (r["session_id"], r["round"] or 0, r["method"], r["metric"], r["judge"],
             r["status"], r["value"])
            for r in document["rows"]
            if r["session_id"] not in TOUCHED and r["method"] not in exclude_methods
            and not r["metric"].startswith("pairwise@New")
        )  # fmt: skip

    assert kept(lacking) == kept(complete)


def test_pairwise_skips_pairs_with_a_missing_side(documents):
    _, lacking, _ = documents
    pairs = [r for r in lacking["rows"] if r["metric"].startswith("pairwise@")]
    pairs_in = {(r["session_id"], r["round"], r["method"], r["metric"]) for r in pairs}
    assert ("ps-en-002", 2, "Ours", "pairwise@Base") not in pairs_in
    assert ("ps-en-002", 2, "Base", "pairwise@RAG") in pairs_in
    assert ("ps-zh-001", 1, "New", "pairwise@Base") in pairs_in
    assert not any(r["metric"] == "pairwise@RAG" and r["session_id"] == "ps-zh-001"
                   for r in pairs)  # fmt: skip


def test_comparisons_pair_present_sessions_and_count_what_they_left_out(documents):
    complete, lacking, _ = documents
    al = {(c["a"], c["b"]): c for c in lacking["comparisons"] if c["metric"] == "al"}
    sessions = len(sample())
    assert al[("Base", "RAG")]["n"] == sessions - 1
    assert (
        al[("Base", "RAG")]["unpaired_a"] == 1
        and "unpaired_b" not in al[("Base", "RAG")]
    )
    assert al[("Base", "New")]["n"] == 1
    assert al[("Base", "New")]["unpaired_a"] == sessions - 1
    assert al[("Base", "Ours")]["n"] == sessions  # one round less is still a session
    assert not any(
        "unpaired_a" in c or "unpaired_b" in c for c in complete["comparisons"]
    )
    # AL(k) per round: n counts the replies there are
    curve = {p["k"]: p["n"] for p in lacking["curves"]["al"]["Ours"]}
    full = {p["k"]: p["n"] for p in complete["curves"]["al"]["Ours"]}
    assert curve[2] == full[2] - 1 and curve[1] == full[1]


def test_the_dashboard_and_paper_say_what_is_missing(documents):
    _, lacking, app = documents
    client = app.test_client()
    run = app.extensions["storage"].get_run(lacking["run"]["id"])
    page = client.get(f"/r/{run.token}?lang=en").get_data(as_text=True)
    assert 'data-testid="count-missing"' in page
    assert 'data-testid="unpaired-caption"' in page
    zh = client.get(f"/r/{run.token}?lang=zh").get_data(as_text=True)
    assert "Replies missing in the file" not in zh
    for session in TOUCHED:
        shown = client.get(f"/r/{run.token}/session?id={session}&lang=en")
        assert shown.status_code == 200
        assert "no reply in the file" in shown.get_data(as_text=True)
    rows = client.get(f"/r/{run.token}?status=missing&lang=ko").get_data(as_text=True)
    assert "응답 누락" in rows and "파일에 이 응답이 없음" in rows  # status, note
    methods = client.get(f"/r/{run.token}/methods.txt").get_data(as_text=True)
    assert "of replies missing in the file" in methods
    markdown = client.get(f"/r/{run.token}/export.md").get_data(as_text=True)
    assert "sessions with a value of one of the two methods only" in markdown


def test_validation_names_each_method_that_lacks_replies(documents, tmp_path):
    import dataset

    report = dataset.validate_file(write(tmp_path / "m.jsonl", with_missing_replies()))
    assert report.valid
    warned = {w["path"]: w for w in report.to_dict()["warnings"]}
    total = sum(len(s["rounds"]) for s in sample())
    assert warned["Ours"]["message"] == (
        f"Ours: 1 of {total} replies missing (null or absent); they are counted "
        "apart and never scored."
    )
    assert warned["New"]["params"]["missing"] == total - 5
