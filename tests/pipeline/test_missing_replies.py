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

ROOT = Path(__file__).resolve().parents[2]
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
    from testing.judge_server import ScriptedJudge
    from tests.conftest import stop_embedded
    from tests.pipeline_support import base_config
    from tests.worker_support import create_test_app

    tmp = tmp_path_factory.mktemp("missing")
    with ScriptedJudge() as judge:
        app = create_test_app(
            {
                **base_config(tmp),
                "DATABASE_URL": f"sqlite:///{tmp / 'db.sqlite3'}",
                "REDIS_URL": None,
            }
        )
        try:
            complete = evaluate(
                app, write(tmp / "complete.jsonl", sample()), judge, suites=EVERY_SUITE
            )
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
    assert lacking["run"]["counts"]["missing"] == lacks  # replies, not rows
    assert lacking["run"]["counts"]["missing_rows"] == len(missing)
    assert complete["run"]["counts"]["missing"] == 0
    assert {row["note_code"] for row in missing} == {"reply_missing"}
    assert Counter(row["metric"] for row in missing) == Counter(
        {registry.get(name).headline.id: lacks for name in EVERY_SUITE}
    )
    # no reply, no value: nothing scored for a missing (session, round, method)
    gone = {(r["session_id"], r["round"], r["method"]) for r in missing}
    scored = [
        row
        for row in lacking["rows"]
        if row["status"] != "missing"
        and row["round"] is not None
        and (row["session_id"], row["round"], row["method"]) in gone
    ]
    assert scored == []


def test_untouched_sessions_are_evaluated_exactly_as_before(documents):
    complete, lacking, _ = documents

    def kept(document, exclude_methods=("New",)):
        return sorted(
            (
                r["session_id"],
                r["round"] or 0,
                r["method"],
                r["metric"],
                r["judge"],
                r["status"],
                r["value"],
            )
            for r in document["rows"]
            if r["session_id"] not in TOUCHED
            and r["method"] not in exclude_methods
            and not r["metric"].startswith("pairwise@New")
        )

    assert kept(lacking) == kept(complete)


def test_pairwise_skips_pairs_with_a_missing_side(documents):
    _, lacking, _ = documents
    pairs = [r for r in lacking["rows"] if r["metric"].startswith("pairwise@")]
    pairs_in = {(r["session_id"], r["round"], r["method"], r["metric"]) for r in pairs}
    assert ("ps-en-002", 2, "Ours", "pairwise@Base") not in pairs_in
    assert ("ps-en-002", 2, "Base", "pairwise@RAG") in pairs_in
    assert ("ps-zh-001", 1, "New", "pairwise@Base") in pairs_in
    assert not any(
        r["metric"] == "pairwise@RAG" and r["session_id"] == "ps-zh-001" for r in pairs
    )


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
    run = app.extensions["storage"].runs.get_run(lacking["run"]["id"])
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
    for page_url in (
        f"/r/{run.token}/diff?id=ps-zh-001&a=Base&b=RAG",
        f"/r/{run.token}/differences?metric=al&a=Base&b=New",
        f"/r/{run.token}/export.tex",
        f"/r/{run.token}/summary.csv",
    ):
        assert client.get(page_url).status_code == 200, page_url
    methods = client.get(f"/r/{run.token}/methods.txt").get_data(as_text=True)
    assert "replies missing in the file (null or absent; one row per suite" in methods
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


def random_file(seed: int = 7) -> list[dict]:
    """20 sessions x 4 rounds x A, B, C with scripted scores; about 10% of
    the replies missing at random (null or absent) and C absent from the
    first four sessions."""
    import random

    pick = random.Random(seed)
    sessions = []
    for s in range(20):
        rounds = []
        for k in range(1, 5):
            responses = {}
            for method in "ABC":
                if method == "C" and s < 4:
                    continue  # absent from whole sessions
                if pick.random() < 0.1:
                    if pick.random() < 0.5:
                        responses[method] = None  # null; else left out
                    continue
                al, binary = pick.randrange(0, 101), pick.randrange(2)
                responses[method] = f"{method}{s}.{k} [[al={al}]] [[binary={binary}]]"
            rounds.append(
                {
                    "round": k,
                    "user_message": f"m{k}",
                    "responses": responses or {"A": None},
                }
            )
        sessions.append(
            {
                "session_id": f"s{s:02}",
                "user_profile": "p",
                "user_personality": "q",
                "rounds": rounds,
            }
        )
    return sessions


def test_aggregates_equal_a_hand_computation_on_the_present_replies(
    app_factory, judge_server, tmp_path
):
    import re
    from statistics import fmean

    sessions = random_file()
    scores: dict[str, dict] = {m: {} for m in "ABC"}  # method -> (s, k) -> (al, b)
    for session in sessions:
        for round_ in session["rounds"]:
            for method, text in round_["responses"].items():
                if text:
                    al, b = map(int, re.findall(r"=(\d+)", text))
                    scores[method][(session["session_id"], round_["round"])] = (al, b)
    present = sum(map(len, scores.values()))
    assert 0.05 < 1 - present / (20 * 4 * 3 - 16) < 0.2  # about 10% missing

    document = evaluate(
        app_factory(),
        write(tmp_path / "r.jsonl", sessions),
        judge_server,
        suites=["alignment"],
    )
    assert document["run"]["status"] == "done"
    for method, items in scores.items():
        curve = {
            k: [al for (_, kk), (al, _) in items.items() if kk == k]
            for k in range(1, 5)
        }
        shown = document["curves"]["al"][method]
        assert [(p["k"], p["n"]) for p in shown] == [(k, len(curve[k])) for k in curve]
        for point in shown:
            assert point["mean"] == pytest.approx(fmean(curve[point["k"]]))
        summary = document["summary"][method]
        means = [fmean(curve[k]) for k in range(1, 5)]
        assert summary["al_avg"] == pytest.approx(fmean(means))
        slope = sum(
            (k - 2.5) * (m - fmean(means))
            for k, m in zip(range(1, 5), means, strict=True)
        )
        assert summary["al_slope"] == pytest.approx(slope / 5.0)  # Σ(k - k̄)² = 5
        binaries = [b for _, b in items.values()]
        assert summary["binary_rate"] == pytest.approx(sum(binaries) / len(binaries))

    # paired: only the sessions where both methods have a value
    def session_means(method):
        by_session: dict[str, list[int]] = {}
        for (sid, _), (al, _) in scores[method].items():
            by_session.setdefault(sid, []).append(al)
        return {sid: fmean(values) for sid, values in by_session.items()}

    al = {(c["a"], c["b"]): c for c in document["comparisons"] if c["metric"] == "al"}
    for a, b in (("A", "B"), ("A", "C"), ("B", "C")):
        first, second = session_means(a), session_means(b)
        both = [sid for sid in first if sid in second]
        assert al[(a, b)]["n"] == len(both)
        assert al[(a, b)]["diff"] == pytest.approx(
            fmean(first[sid] - second[sid] for sid in both)
        )
        assert al[(a, b)].get("unpaired_a", 0) == len(first) - len(both)
    missing = sum(1 for r in document["rows"] if r["status"] == "missing")
    assert missing == 20 * 4 * 3 - present  # one per missing reply (one suite)


def test_a_run_that_stored_one_suites_rows_counts_its_missing_replies(any_storage):
    """A cancelled run stored the alignment rows of a session and not the
    pairwise ones: one reply is missing, and counts.missing said 0 (its
    missing rows over its suites: 1 // 2). Found by the witness, issue 56."""
    from config import DEFAULTS
    from metrics.results import run_header
    from pipeline.worker import interim

    storage = any_storage
    run = storage.runs.create_run(
        file_name="f.jsonl",
        file_sha256="0" * 64,
        upload_id="none",
        sessions=1,
        rounds=1,
        methods=["A", "B"],
        suites=["alignment", "pairwise"],
        status="cancelled",
    )
    key = {"run_id": run.id, "session_id": "s", "round": 1, "judge": ""}
    rows = [
        {**key, "method": "B", "metric": "al", "value": None, "status": "missing"},
        {**key, "method": "A", "metric": "al", "value": 50.0, "status": "ok"},
    ]
    storage.rows.upsert_rows(rows)
    interim.summarize_cancelled(storage, storage.runs.get_run(run.id), dict(DEFAULTS))
    run = storage.runs.get_run(run.id)
    assert storage.rows.missing_replies(run.id) == 1
    counts = run_header(run, storage.rows.run_status_counts(run))["counts"]
    assert (counts["missing"], counts["missing_rows"]) == (1, 1)
