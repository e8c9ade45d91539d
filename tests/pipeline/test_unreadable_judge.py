"""A run whose judge was asked and not one of its replies could be read
(issue 56) ends ``failed`` with ``no_readable_verdict`` and the counts, not
``partial`` with every judge value null; the rows of the metrics that need
no judge stay stored and shown."""

from __future__ import annotations

from core.status import RowStatus
from tests import crafted
from tests.pipeline_support import FAST_JUDGE, evaluate

GARBAGE = "[[fault=garbage]] the judge's reply to this is unreadable"


def _unreadable_file(tmp_path):
    sessions = [crafted.session("a", {"A": [GARBAGE] * 2, "B": [GARBAGE] * 2})]
    return crafted.write(tmp_path / "garbage.jsonl", sessions)


def test_a_run_whose_every_judge_reply_is_unreadable_fails_with_the_counts(
    any_database_url, app_factory, tmp_path, judge_server
):
    # the judge metrics' rows are counted in SQL: on both databases (the
    # database is set up before the app, so it is torn down after it)
    app = app_factory(DATABASE_URL=any_database_url, DB_AUTO_UPGRADE=True)
    path = _unreadable_file(tmp_path)
    document = evaluate(app, path, judge_server, suites=["alignment", "quality"])
    assert document["run"]["status"] == "failed"
    run = app.extensions["storage"].runs.get_run(document["run"]["id"])
    # 4 replies: al, binary and the five dimensions each, none read
    assert run.failure["code"] == "no_readable_verdict"
    params = run.failure["params"]
    assert (params["unscored"], params["errors"]) == (28, 0)
    # the quality suite needs no judge: its rows and values stay
    quality = [r for r in document["rows"] if r["metric"] == "quality"]
    assert len(quality) == 4 and {r["status"] for r in quality} == {RowStatus.OK}
    assert document["summary"]["A"]["quality_avg"] is not None
    assert document["summary"]["A"]["al_avg"] is None

    client = app.test_client()
    for lang, words in (
        ("en", "No judge reply could be read"),
        ("zh", "无法读取评审模型的任何回复"),
        ("ko", "읽을 수 있는 평가 모델 응답이 없습니다"),
    ):
        page = client.get(f"/r/{run.token}?lang={lang}").get_data(as_text=True)
        assert words in page, lang


def test_the_cli_exits_1_and_says_why(app_factory, tmp_path, judge_server):
    app = app_factory(
        JUDGE_API_URL=judge_server.url, JUDGE_MODEL="scripted", **FAST_JUDGE
    )
    result = app.test_cli_runner().invoke(
        args=[
            "evaluate",
            str(_unreadable_file(tmp_path)),
            "--suite",
            "alignment",
            "--suite",
            "quality",
            "--out",
            str(tmp_path / "r.json"),
        ]
    )
    assert result.exit_code == 1, result.stderr
    assert "status: failed" in result.stderr
    assert "failed: No judge reply could be read" in result.stderr
    assert "28 are unscored" in result.stderr


def test_one_readable_reply_keeps_the_run_partial(app_factory, tmp_path, judge_server):
    sessions = [
        crafted.session(
            "a", {"A": [GARBAGE, "fine [[al=50]] [[binary=1]]"], "B": [GARBAGE] * 2}
        )
    ]
    path = crafted.write(tmp_path / "one.jsonl", sessions)
    document = evaluate(app_factory(), path, judge_server, suites=["alignment"])
    assert document["run"]["status"] == "partial"
