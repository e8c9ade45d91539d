"""The replies grid (issue 48): every reply with its scores per judge,
filtered and sorted on the server, and the exact prompt and raw reply
behind a judge's score, stored with the rows and shown escaped."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from core.status import RunStatus
from store.replies import write_exchanges
from testing.judge_server import ScriptedJudge
from tests.pipeline_support import base_config, submit, wait_for

ROOT = Path(__file__).resolve().parents[3]
MARKUP = '<script>alert("x")</script><b>bold</b>'


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The sample, one reply carrying markup, judged by a scripted judge."""
    from tests.conftest import stop_embedded
    from tests.worker_support import create_test_app

    tmp = tmp_path_factory.mktemp("replies")
    lines = (ROOT / "sample_data.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["rounds"][0]["responses"]["Base"]["text"] += " " + MARKUP
    path = tmp / "replies.jsonl"
    path.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
    app = create_test_app(
        {
            **base_config(tmp),
            "DATABASE_URL": f"sqlite:///{tmp / 'db.sqlite3'}",
            "REDIS_URL": None,
            "WATCHDOG_INTERVAL_S": 3600,
        }
    )
    with ScriptedJudge() as judge:
        run_id = submit(app, path, judge, suites=["alignment", "quality"])
        wait_for(app, run_id)
    storage = app.extensions["storage"]
    yield app, storage, storage.runs.get_run(run_id), first
    stop_embedded(app)
    storage.engine.dispose()


def lines_of(page: str) -> list[tuple[str, str, str]]:
    return re.findall(
        r'data-testid="grid-line" data-session="([^"]*)" data-round="([^"]*)" '
        r'data-method="([^"]*)"',
        page,
    )


def lines_key(storage, run) -> tuple[str, int, str]:
    row = storage.rows.rows(run.id, metric="al")[0]
    return row.session_id, row.round, row.method


def test_every_judged_reply_keeps_its_prompt_and_raw_reply(site):
    _app, storage, run, first = site
    assert run.status == RunStatus.DONE
    judged = storage.rows.rows(run.id, metric="al")
    assert judged
    for row in judged:
        key = (row.session_id, row.round, row.method)
        [exchange] = [
            found
            for found in storage.replies.exchanges_of(run.id, key)
            if "al" in found["metrics"]
        ]
        assert exchange["judge"] == row.judge == "scripted"
        assert exchange["reply"], "the raw reply is kept"
        sent = "\n".join(message["content"] for message in exchange["messages"])
        reply = first if row.session_id == first["session_id"] else None
        if reply is not None and row.round == 1 and row.method == "Base":
            assert MARKUP in sent, "the prompt as sent holds the reply judged"


def test_the_grid_lists_each_reply_once_with_its_scores(site):
    app, storage, run, _first = site
    page = app.test_client().get(f"/r/{run.token}/replies?metric=al").get_data(True)
    replies = {
        (r.session_id, r.round, r.method)
        for r in storage.rows.rows(run.id, metric="al")
    }
    assert f"Replies: {len(replies)}" in page
    shown = lines_of(page)
    assert len(shown) == min(len(replies), 25) == len(set(shown))
    assert 'data-testid="grid-score" data-metric="al"' in page
    assert 'data-metric="quality"' in page, "a metric no judge makes"


def test_filters_and_sorting_happen_on_the_server(site):
    app, storage, run, _first = site
    client = app.test_client()
    values = {
        (r.session_id, str(r.round), r.method): r.value
        for r in storage.rows.rows(run.id, metric="al")
        if r.value is not None
    }
    page = client.get(f"/r/{run.token}/replies?metric=al&order=high").get_data(True)
    ordered = [values[key] for key in lines_of(page) if key in values]
    assert ordered == sorted(ordered, reverse=True) and len(ordered) > 1
    page = client.get(
        f"/r/{run.token}/replies?metric=al&order=low&method=Base"
    ).get_data(True)
    shown = lines_of(page)
    assert shown and {method for _s, _r, method in shown} == {"Base"}
    ordered = [values[key] for key in shown if key in values]
    assert ordered == sorted(ordered)
    low = sorted(values.values())[len(values) // 2]
    page = client.get(f"/r/{run.token}/replies?metric=al&value_max={low}").get_data(
        True
    )
    assert all(values[key] <= low for key in lines_of(page))
    page = client.get(f"/r/{run.token}/replies?metric=al&status=error").get_data(True)
    assert lines_of(page) == [] and 'data-testid="grid-empty"' in page


def test_one_session_s_grid(site):
    app, _storage, run, first = site
    session_id = first["session_id"]
    page = app.test_client().get(f"/r/{run.token}/replies?session_id={session_id}")
    shown = lines_of(page.get_data(True))
    assert shown and {session for session, _r, _m in shown} == {session_id}
    session_page = app.test_client().get(f"/r/{run.token}/session?id={session_id}")
    assert f"/r/{run.token}/replies?session_id={session_id}" in session_page.get_data(
        True
    )


def test_the_exchange_is_shown_escaped(site):
    app, _storage, run, first = site
    query = (
        f"session_id={first['session_id']}&round=1&method=Base&judge=scripted&metric=al"
    )
    for part in ("", "&part=1"):
        page = app.test_client().get(f"/r/{run.token}/replies/exchange?{query}{part}")
        assert page.status_code == 200
        text = page.get_data(True)
        assert MARKUP not in text
        assert "&lt;script&gt;alert(" in text and "&lt;b&gt;bold&lt;/b&gt;" in text
        assert 'data-testid="exchange-reply"' in text
    assert "<html" not in app.test_client().get(
        f"/r/{run.token}/replies/exchange?{query}&part=1"
    ).get_data(True)
    missing = app.test_client().get(f"/r/{run.token}/replies/exchange?round=x")
    assert missing.status_code == 404


def test_deleting_a_run_deletes_its_exchanges(site):
    app, storage, run, _first = site
    other = storage.runs.create_run(
        file_name="x.jsonl",
        file_sha256="0" * 64,
        upload_id=run.upload_id,
        sessions=1,
        rounds=1,
        methods=["A"],
        suites=["alignment"],
        total=1,
    )
    exchange = {
        "session_id": "s",
        "round": 1,
        "method": "A",
        "judge": "j",
        "metric": "al",
        "seq": 0,
        "metrics": ["al"],
        "mode": "alignment",
        "prompt_version": "alignment_v1",
        "sample": 0,
        "messages": [{"role": "user", "content": "hi"}],
        "reply": "80",
        "status": "ok",
        "cached": False,
    }
    with storage.engine.begin() as conn:
        write_exchanges(conn, storage.replies.database, other.id, [exchange])
    assert storage.replies.exchanges_of(other.id, ("s", 1, "A"))
    storage.runs.delete_run(other, app.config["UPLOAD_FOLDER"])
    assert storage.replies.exchanges_of(other.id, ("s", 1, "A")) == []
    assert storage.replies.exchanges_of(run.id, lines_key(storage, run))


def test_reply_pages_on_either_database(any_storage):
    """Lines by the metric's mean over a panel's judges, missing last;
    every row of a page's replies; on SQLite and PostgreSQL alike."""
    storage = any_storage
    run = storage.runs.create_run(
        file_name="x.jsonl",
        file_sha256="0" * 64,
        upload_id="u",
        sessions=2,
        rounds=1,
        methods=["A", "B"],
        suites=["alignment"],
        total=4,
    )
    values = {
        ("s1", "A"): (60.0, 80.0),
        ("s1", "B"): (90.0, 90.0),
        ("s2", "A"): (None, None),
        ("s2", "B"): (10.0, 30.0),
    }
    rows = [
        {
            "run_id": run.id,
            "session_id": s,
            "round": 1,
            "method": m,
            "metric": metric,
            "judge": judge,
            "value": value,
            "status": "ok" if value is not None else "unscored",
        }
        for (s, m), pair in values.items()
        for judge, value in zip(("j1", "j2"), pair, strict=True)
        for metric in ("al", "al_style")
    ]
    storage.rows.upsert_rows(rows)
    high = storage.replies.reply_lines(run.id, {"metric": "al"}, 0, 10, True)
    assert high == [
        (("s1", 1, "B"), 90.0),
        (("s1", 1, "A"), 70.0),
        (("s2", 1, "B"), 20.0),
        (("s2", 1, "A"), None),
    ]
    low = storage.replies.reply_lines(
        run.id, {"metric": "al", "judge": "j1"}, 1, 2, False
    )
    assert low == [(("s1", 1, "A"), 60.0), (("s1", 1, "B"), 90.0)]
    ranged = {"metric": "al", "value_min": 20.0, "status": "ok"}
    assert storage.replies.count_reply_lines(run.id, ranged) == 3
    found = storage.replies.rows_of_replies(run.id, [("s2", 1, "B")])
    assert sorted((r["metric"], r["judge"], r["value"]) for r in found) == [
        ("al", "j1", 10.0),
        ("al", "j2", 30.0),
        ("al_style", "j1", 10.0),
        ("al_style", "j2", 30.0),
    ]
    # "as in the file": the methods in the run's order, not by name
    methods = ["B", "A"]
    in_file = storage.replies.reply_lines(
        run.id, {"metric": "al"}, 0, 10, None, methods
    )
    shown = [f"{session}/{method}" for (session, _r, method), _v in in_file]
    assert shown == ["s1/B", "s1/A", "s2/B", "s2/A"]


def test_as_in_the_file_is_the_file_s_order_of_methods(site):
    """The sample names its methods Base, RAG, Ours: the grid keeps that
    order (by name it would be Base, Ours, RAG)."""
    app, _storage, run, first = site
    in_the_file = list(first["rounds"][0]["responses"])
    assert run.methods == in_the_file == ["Base", "RAG", "Ours"]
    page = app.test_client().get(f"/r/{run.token}/replies?metric=al&order=reply")
    shown = lines_of(page.get_data(True))
    first_round = [m for s, r, m in shown if (s, r) == (first["session_id"], "1")]
    assert first_round == run.methods


def test_the_response_length_is_shown_once_and_is_no_judge_s_score(site):
    app, _storage, run, first = site
    page = app.test_client().get(f"/r/{run.token}/replies?metric=al").get_data(True)
    cells = re.findall(
        r'<div class="grid-score status-\w+" data-testid="grid-score" '
        r'data-metric="response_chars" data-judge="([^"]*)">(.*?)</div>',
        page,
        re.S,
    )
    assert len(cells) == len(lines_of(page)), "one length per reply"
    for judge, cell in cells:
        assert judge == "" and "exchange-link" not in cell and "<a" not in cell
    query = (
        f"session_id={first['session_id']}&round=1&method=Base"
        "&judge=scripted&metric=response_chars&part=1"
    )
    said = app.test_client().get(f"/r/{run.token}/replies/exchange?{query}")
    text = said.get_data(True)
    assert 'data-testid="exchange-not-judged"' in text
    assert "did not keep them" not in text
