"""Exploration pages: the sessions behind a number, the largest differences
between two methods, search over responses and judge replies, and the
word-level diff; each checked against a hand computation."""

from __future__ import annotations

import doctest
import html
import json
import re
from collections import defaultdict
from pathlib import Path
from statistics import fmean

import pytest

import web.presentation.explore
import web.views.explore_pages
from store import explore as queries
from testing.judge_server import ScriptedJudge
from tests import crafted
from tests.conftest import stop_embedded
from tests.pipeline_support import base_config, evaluate
from tests.worker_support import create_test_app
from web.presentation.explore import snippet
from web.presentation.word_diff import tokenize, word_diff

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / "sample_data.jsonl"
XSS = "</script><script>alert(1)</script>"
ROW = re.compile(r"<tr\b([^>]*\bdata-session=[^>]*)>")
ATTR = re.compile(r'data-([a-z]+)="([^"]*)"')

# the judged metrics of the alignment suite (not the facts stored beside them)
JUDGED = {
    "al",
    "al_style",
    "al_content",
    "al_naturalness",
    "al_personalization",
    "al_conversation",
    "binary",
}


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory):
    """sample_data.jsonl through the embedded app, quality and style suites."""
    tmp_path = tmp_path_factory.mktemp("explore")
    app = create_test_app(
        {
            **base_config(tmp_path),
            "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
            "REDIS_URL": None,
        }
    )
    document = evaluate(app, SAMPLE, None, suites=["quality", "style"])
    assert document["run"]["status"] in ("done", "partial")
    token = app.extensions["storage"].runs.get_run(document["run"]["id"]).token
    yield app, document, token
    stop_embedded(app)


def rows_of(page: str) -> list[dict[str, str]]:
    """The data-* attributes of every table row about a session."""
    return [
        {name: html.unescape(value) for name, value in ATTR.findall(attributes)}
        for attributes in ROW.findall(page)
    ]


def session_means(document: dict, metric: str, method: str) -> dict[str, tuple]:
    """By hand: {session: (mean of scored rows, n)} from the results document."""
    found = defaultdict(list)
    for row in document["rows"]:
        key = (row["metric"], row["method"], row["status"])
        if key == (metric, method, "ok") and row["value"] is not None:
            found[row["session_id"]].append(row["value"])
    return {sid: (fmean(values), len(values)) for sid, values in found.items()}


def get(app, url: str, status: int = 200) -> str:
    response = app.test_client().get(url)
    assert response.status_code == status, url
    return response.get_data(as_text=True)


def responses_containing(path: Path, needle: str) -> list[tuple]:
    wanted = needle.lower()
    return [
        (session["session_id"], round_["round"], method)
        for session in map(json.loads, path.read_text().splitlines())
        for round_ in session["rounds"]
        for method, response in round_["responses"].items()
        if wanted
        in (response if isinstance(response, str) else response["text"]).lower()
    ]


# -- pure parts -----------------------------------------------------------
def test_the_pure_helpers_doctests_pass():
    result = doctest.testmod(web.presentation.explore, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 5 and result.failed == 0


def test_word_diff_marks_exactly_the_changed_words():
    diff = word_diff(
        "The chai latte is warm and gentle.", "The matcha latte is warm, gentle."
    )
    assert re.findall(r"<del>(.*?)</del>", diff.a) == ["chai", "warm and"]
    assert re.findall(r"<ins>(.*?)</ins>", diff.b) == ["matcha", "warm,"]
    assert re.sub(r"</?del>", "", diff.a) == "The chai latte is warm and gentle."
    cjk = word_diff("我想喝一杯热茶", "我想喝一杯冰咖啡")
    assert re.findall(r"<del>(.*?)</del>", cjk.a) == ["热茶"]
    assert re.findall(r"<ins>(.*?)</ins>", cjk.b) == ["冰咖啡"]
    korean = word_diff("따뜻한 라떼 주세요", "차가운 라떼 주세요")
    assert re.findall(r"<ins>(.*?)</ins>", korean.b) == ["차가운"]
    hostile = word_diff("ok", f"ok {XSS}")
    assert "<script>" not in hostile.b and "&lt;/script&gt;&lt;script&gt;" in hostile.b


def test_tokens_keep_the_text_and_snippets_escape_it():
    text = "  Hi,\n there!  我喜欢tea\t"
    lead, tokens = tokenize(text)
    assert lead + "".join(word + space for word, space in tokens) == text
    marked = snippet(f"x {XSS} y", "alert")
    assert "<script>" not in marked and "<mark>alert</mark>" in marked
    long = snippet("a" * 200 + "needle" + "b" * 200, "NEEDLE")
    assert long == "…" + "a" * 80 + "<mark>needle</mark>" + "b" * 80 + "…"


# -- the sessions behind a number -----------------------------------------
@pytest.mark.parametrize(("metric", "method"), [("quality", "Ours"), ("ertd", "Base")])
def test_values_are_the_per_session_means_sorted(sample_run, metric, method):
    app, document, token = sample_run
    expected = session_means(document, metric, method)
    assert len(expected) >= 5
    page = get(app, f"/r/{token}/values?metric={metric}&method={method}")
    shown = rows_of(page)
    assert {r["session"]: (float(r["value"]), int(r["n"])) for r in shown} == {
        sid: (pytest.approx(mean), n) for sid, (mean, n) in expected.items()
    }
    values = [float(r["value"]) for r in shown]
    worst_first = sorted(values, reverse=metric == "ertd")  # ERTD: lower is better
    assert values == worst_first
    for sid in expected:
        assert f"/r/{token}/session?id={sid}" in page
    other = rows_of(
        get(app, f"/r/{token}/values?metric={metric}&method={method}&order=desc")
    )
    assert [float(r["value"]) for r in other] == sorted(values, reverse=True)


def test_values_of_a_summary_metric_come_from_its_rows(sample_run):
    app, document, token = sample_run
    shown = rows_of(get(app, f"/r/{token}/values?metric=quality_avg&method=RAG"))
    expected = session_means(document, "quality", "RAG")
    assert {r["session"] for r in shown} == set(expected)


def test_values_are_paginated(sample_run, monkeypatch):
    app, _document, token = sample_run
    monkeypatch.setattr(web.views.explore_pages, "PAGE_SIZE", 4)
    url = f"/r/{token}/values?metric=nvcs&method=Ours"
    pages = [rows_of(get(app, f"{url}&page={n}")) for n in (1, 2, 3)]
    assert [len(rows) for rows in pages] == [4, 4, 1]
    values = [float(r["value"]) for rows in pages for r in rows]
    assert values == sorted(values)
    assert "page 1 of 3" in get(app, url)
    assert rows_of(get(app, f"{url}&page=99")) == pages[2]  # clamped to the last


@pytest.mark.parametrize(
    "query",
    [
        "metric=no_such_metric&method=Ours",
        "metric=quality&method=Nobody",
        "metric=quality",
        "method=Ours",
    ],
)
def test_values_reject_unknown_metrics_and_methods(sample_run, query):
    app, _document, token = sample_run
    get(app, f"/r/{token}/values?{query}", status=404)
    get(app, "/r/no-such-token/values?metric=quality&method=Ours", status=404)


# -- largest differences --------------------------------------------------
def test_differences_are_sorted_by_their_size_and_exact(sample_run):
    app, document, token = sample_run
    page = get(app, f"/r/{token}/differences?metric=nvcs&a=Ours&b=Base")
    a, b = (
        session_means(document, "nvcs", "Ours"),
        session_means(document, "nvcs", "Base"),
    )
    expected = {sid: a[sid][0] - b[sid][0] for sid in a.keys() & b.keys()}
    shown = rows_of(page)
    assert {r["session"]: float(r["diff"]) for r in shown} == {
        sid: pytest.approx(diff) for sid, diff in expected.items()
    }
    sizes = [abs(float(r["diff"])) for r in shown]
    assert sizes == sorted(sizes, reverse=True)
    first = shown[0]["session"]
    assert f"/r/{token}/diff?id={first}&amp;a=Ours&amp;b=Base&amp;metric=nvcs" in page
    assert f"/r/{token}/session?id={first}" in page


def test_differences_default_to_the_first_metric_and_methods(sample_run):
    app, document, token = sample_run
    page = get(app, f"/r/{token}/differences")
    a, b = (
        session_means(document, "coherence", "Base"),
        session_means(document, "coherence", "RAG"),
    )
    shown = rows_of(page)
    assert {r["session"]: float(r["diff"]) for r in shown} == {
        sid: pytest.approx(a[sid][0] - b[sid][0]) for sid in a.keys() & b.keys()
    }
    assert '<option value="coherence" selected>' in page
    assert '<option value="nvcs" >' in page or '<option value="nvcs">' in page


def test_differences_are_computed_in_sql_with_top_50(sample_run):
    app, _document, token = sample_run
    storage = app.extensions["storage"]
    run = storage.runs.get_run_by_token(token)
    top = queries.largest_differences(
        storage, run.id, "quality", "Ours", "Base", limit=3
    )
    every = queries.largest_differences(storage, run.id, "quality", "Ours", "Base")
    assert top == every[:3] and len(every) == 9
    assert queries.difference_totals(storage, run.id, "quality", "Ours", "Base") == (
        9,
        pytest.approx(fmean(d.diff for d in every)),
    )


@pytest.mark.parametrize(
    "query", ["metric=no_such&a=Ours&b=Base", "metric=nvcs&a=Ours&b=Nobody", "a=Nobody"]
)
def test_differences_reject_unknown_metrics_and_methods(sample_run, query):
    app, _document, token = sample_run
    get(app, f"/r/{token}/differences?{query}", status=404)


# -- search ---------------------------------------------------------------
def test_search_finds_a_word_of_the_responses(sample_run):
    app, _document, token = sample_run
    expected = responses_containing(SAMPLE, "medal")
    assert expected == [("ps-en-001", 1, "Ours")]
    page = get(app, f"/r/{token}/search?q=MEDAL")
    hits = [(r["session"], int(r["round"]), r["method"]) for r in rows_of(page)]
    assert hits == expected
    assert "You deserve a <mark>medal</mark> and" in page
    assert f"/r/{token}/session?id=ps-en-001" in page
    cjk = responses_containing(SAMPLE, "龙井")
    assert (
        cjk
        and [
            (r["session"], int(r["round"]), r["method"])
            for r in rows_of(get(app, f"/r/{token}/search?q=龙井"))
        ]
        == cjk
    )


def test_search_text_must_have_a_sensible_length(sample_run):
    app, _document, token = sample_run
    assert 'data-testid="search-problem"' in get(app, f"/r/{token}/search?q=a", 400)
    get(app, f"/r/{token}/search?q={'x' * 201}", 400)
    page = get(app, f"/r/{token}/search")
    assert "search-problem" not in page and "response-hits" not in page


def test_search_stops_after_its_limit(sample_run, monkeypatch):
    app, _document, token = sample_run
    expected = responses_containing(SAMPLE, "the")
    assert len(expected) > 5
    monkeypatch.setattr(web.presentation.explore, "MAX_HITS", 5)
    page = get(app, f"/r/{token}/search?q=the")
    section = page.split('data-testid="judge-hits"')[0]
    hits = [(r["session"], int(r["round"]), r["method"]) for r in rows_of(section)]
    assert hits == expected[:5] and "Showing the first 5 matches." in section
    assert "search-problem" in get(app, f"/r/{token}/search?q=e%20", 400)  # stripped


@pytest.fixture
def judged(app_factory, tmp_path):
    with ScriptedJudge() as judge:
        # our own reply format, whose reasoning says "scripted verdict"
        app = app_factory(JUDGE_API_URL=judge.url, JUDGE_MODEL="scripted-style-strict")
        sessions = crafted.alignment_sessions()
        sessions.append(
            crafted.session(
                "faulty",
                {
                    "Base": ["fine [[al=50]] [[binary=1]]"],
                    "Ours": ["[[fault=garbage]]"],
                },
            )
        )
        path = crafted.write(tmp_path / "crafted.jsonl", sessions)
        document = evaluate(app, path, None, suites=["alignment"])
        token = app.extensions["storage"].runs.get_run(document["run"]["id"]).token
        yield app, document, token


def test_search_finds_judge_reasoning_and_raw_replies(judged):
    app, document, token = judged
    page = get(app, f"/r/{token}/search?q=Scripted%20VERDICT")
    section = page.split('data-testid="judge-hits"')[1]
    hits = {
        (r["session"], int(r["round"]), r["method"], r["metric"])
        for r in rows_of(section)
    }
    expected = {
        (row["session_id"], row["round"], row["method"], "al")
        for row in document["rows"]
        if row["metric"] == "al" and row["status"] == "ok"
    }
    assert len(expected) == 21 and hits == expected
    assert "<mark>scripted verdict</mark>" in section
    raw = get(app, f"/r/{token}/search?q=quite%20good").split(
        'data-testid="judge-hits"'
    )[1]
    [failed] = rows_of(raw)  # one entry for the call's reply on every metric
    assert (failed["session"], failed["method"]) == ("faulty", "Ours")
    assert (
        sorted(failed["metric"].split())
        == sorted(
            r["metric"]
            for r in document["rows"]
            if (r["session_id"], r["method"]) == ("faulty", "Ours")
            and r["metric"] in JUDGED
        )
        and len(failed["metric"].split()) == 7
    )  # al, its five dimensions, binary
    assert all(
        r["status"] == "unscored"
        for r in document["rows"]
        if r["session_id"] == "faulty"
        and r["method"] == "Ours"
        and r["metric"] in JUDGED
    )
    assert "reply is <mark>quite good</mark> overall!" in raw
    # keys of the detail JSON are not its text
    assert (
        rows_of(
            get(app, f"/r/{token}/search?q=prompt_version").split(
                'data-testid="judge-hits"'
            )[1]
        )
        == []
    )


def detail_row(run_id: str, session_id: str, detail: dict, metric: str = "al") -> dict:
    return {
        "run_id": run_id,
        "session_id": session_id,
        "round": 1,
        "method": "M",
        "metric": metric,
        "sample": 0,
        "value": 1.0,
        "status": "ok",
        "detail": detail,
    }


def test_detail_search_takes_percent_and_underscore_literally(any_storage):
    run = any_storage.runs.create_run(
        file_name="x.jsonl", file_sha256="0" * 64, upload_id="u", methods=["M"]
    )
    any_storage.chunks.record_sessions(
        run.id, [(0, "s1", 0, 1), (1, "s2", 1, 2), (2, "s3", 2, 3), (3, "s4", 3, 4)]
    )
    any_storage.rows.upsert_rows(
        [
            detail_row(run.id, "s1", {"reasoning": "a 50%_off deal", "samples": [1]}),
            detail_row(run.id, "s2", {"reasoning": "a 50 off deal, 5000 offers"}),
            detail_row(run.id, "s3", {"raw": '看起来很好 "quoted" 50%_OFF'}),
            detail_row(
                run.id, "s4", {"reasoning": None, "raw": None, "note": "50%_off"}
            ),
        ]
    )
    found = list(queries.iter_detail_hits(any_storage, run.id, "50%_off"))
    assert [hit.session_id for hit in found] == ["s1", "s3"]
    assert [
        h.session_id for h in queries.iter_detail_hits(any_storage, run.id, "很好")
    ] == ["s3"]
    assert [
        h.session_id for h in queries.iter_detail_hits(any_storage, run.id, '"quoted"')
    ] == ["s3"]
    assert list(queries.iter_detail_hits(any_storage, run.id, "reasoning")) == []
    assert (
        len(list(queries.iter_detail_hits(any_storage, run.id, "deal", limit=1))) == 1
    )


def test_response_search_takes_percent_and_underscore_literally(app_factory, tmp_path):
    app = app_factory()
    session = crafted.session(
        "pct",
        {"A": ["a 50%_off deal", "nothing"], "B": ["a 50 off deal", "50%_OFF again"]},
    )
    path = crafted.write(tmp_path / "pct.jsonl", [session])
    document = evaluate(app, path, None, suites=["quality"])
    token = app.extensions["storage"].runs.get_run(document["run"]["id"]).token
    page = get(app, f"/r/{token}/search?q=50%25_off")
    hits = [
        (r["round"], r["method"])
        for r in rows_of(page.split('data-testid="judge-hits"')[0])
    ]
    assert hits == [("1", "A"), ("2", "B")]


# -- word diff ------------------------------------------------------------
def test_diff_page_marks_the_words_each_method_alone_has(sample_run):
    app, _document, token = sample_run
    session = json.loads(SAMPLE.read_text().splitlines()[0])
    first = session["rounds"][0]["responses"]
    page = get(app, f"/r/{token}/diff?id=ps-en-001&a=Base&b=Ours")
    expected = word_diff(first["Base"]["text"], first["Ours"]["text"])
    assert str(expected.a) in page and str(expected.b) in page
    assert page.count('class="card round"') == len(session["rounds"])
    scored = get(app, f"/r/{token}/diff?id=ps-en-001&a=Base&b=Ours&metric=quality_avg")
    assert "Overall quality" in scored or "quality" in scored
    default = get(app, f"/r/{token}/diff?id=ps-en-001")
    assert str(word_diff(first["Base"]["text"], first["RAG"]["text"]).b) in default


@pytest.mark.parametrize(
    "query",
    [
        "id=nope",
        "id=ps-en-001&a=Nobody",
        "id=ps-en-001&b=Nobody",
        "id=ps-en-001&metric=no_such",
        "a=Base",
    ],
)
def test_diff_rejects_unknown_sessions_methods_and_metrics(sample_run, query):
    app, _document, token = sample_run
    get(app, f"/r/{token}/diff?{query}", status=404)


def test_hostile_text_is_escaped_in_search_and_diff(app_factory, tmp_path):
    app = app_factory()
    session = crafted.session(
        "x<script>",
        {f"M{XSS}": ["hello there", "b"], "Base": [f"hello {XSS} there", "b"]},
    )
    path = crafted.write(tmp_path / "hostile.jsonl", [session])
    document = evaluate(app, path, None, suites=["quality"])
    token = app.extensions["storage"].runs.get_run(document["run"]["id"]).token
    client = app.test_client()
    pages = [
        client.get(f"/r/{token}/search", query_string={"q": XSS}),
        client.get(f"/r/{token}/search", query_string={"q": "alert"}),
        client.get(
            f"/r/{token}/diff",
            query_string={"id": "x<script>", "a": "Base", "b": f"M{XSS}"},
        ),
        client.get(
            f"/r/{token}/differences",
            query_string={"metric": "quality", "a": "Base", "b": f"M{XSS}"},
        ),
        client.get(
            f"/r/{token}/values",
            query_string={"metric": "quality", "method": f"M{XSS}"},
        ),
    ]
    for response in pages:
        assert response.status_code == 200
        body = response.get_data(as_text=True)
        assert "<script>alert" not in body and "x<script>" not in body
    search = pages[0].get_data(as_text=True)
    assert "<mark>&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;</mark>" in search
    diff = pages[2].get_data(as_text=True)
    assert "<del>&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;</del>" in diff


def test_session_queries_on_both_databases(any_storage):
    run = any_storage.runs.create_run(
        file_name="x.jsonl", file_sha256="0" * 64, upload_id="u", methods=["A", "B"]
    )

    def row(session_id, round_, method, value, status="ok", metric="m"):
        return {
            "run_id": run.id,
            "session_id": session_id,
            "round": round_,
            "method": method,
            "metric": metric,
            "value": value,
            "status": status,
        }

    any_storage.rows.upsert_rows(
        [
            row("s1", 1, "A", 0.2),
            row("s1", 2, "A", 0.4),
            row("s1", 3, "A", None, "unscored"),
            row("s1", 4, "A", 9.0, "error"),
            row("s1", 1, "B", 0.9),
            row("s2", 1, "A", 0.5),
            row("s2", 1, "B", 0.45),
            row("s3", 0, "A", 1.0),
            row("s4", 1, "B", 0.1),
            row("s1", 1, "A", 5.0, metric="n"),
        ]
    )
    values = queries.session_values(any_storage, run.id, "m", "A")
    assert [(v.session_id, v.n) for v in values] == [("s1", 2), ("s2", 1), ("s3", 1)]
    assert [v.value for v in values] == pytest.approx([0.3, 0.5, 1.0])
    assert [
        v.session_id
        for v in queries.session_values(
            any_storage, run.id, "m", "A", offset=1, limit=1, descending=True
        )
    ] == ["s2"]
    sessions, mean, scored = queries.session_value_totals(any_storage, run.id, "m", "A")
    assert (sessions, scored) == (3, 4) and mean == pytest.approx(0.6)
    found = queries.largest_differences(any_storage, run.id, "m", "A", "B")
    assert [(d.session_id, d.n_a, d.n_b) for d in found] == [("s1", 2, 1), ("s2", 1, 1)]
    assert [d.diff for d in found] == pytest.approx([-0.6, 0.05])
    paired, mean_diff = queries.difference_totals(any_storage, run.id, "m", "A", "B")
    assert paired == 2 and mean_diff == pytest.approx(-0.275)


def test_the_diff_page_compares_a_bounded_number_of_words():
    from web.presentation import explore
    from web.presentation.word_diff import MAX_DIFF_PAGE_TOKENS, MAX_DIFF_TOKENS

    long_a = " ".join(f"a{i}" for i in range(MAX_DIFF_TOKENS + 500))
    long_b = " ".join(f"b{i}" for i in range(MAX_DIFF_TOKENS + 500))
    rounds = [
        {
            "round": k,
            "user_message": "m",
            "responses": {"A": {"text": long_a}, "B": {"text": long_b}},
        }
        for k in range(1, 9)
    ]
    views = explore.diff_rounds(rounds, "A", "B", {})
    per_page = MAX_DIFF_PAGE_TOKENS // MAX_DIFF_TOKENS
    assert [v["compared"] for v in views[:per_page]] == [MAX_DIFF_TOKENS] * per_page
    assert all(v["compared"] == 0 and v["similarity"] is None for v in views[per_page:])
    # every word is still shown, once
    assert (
        str(views[0]["a"]["text"]).replace("<del>", "").replace("</del>", "") == long_a
    )
    assert str(views[-1]["b"]["text"]) == long_b


def test_search_reads_the_upload_a_part_at_a_time(tmp_path, monkeypatch):
    import json

    import dataset
    from web.presentation import explore

    path = tmp_path / "x.jsonl"
    lines = [
        {
            "session_id": f"s{i}",
            "rounds": [{"round": 1, "responses": {"A": f"needle {i}"}}],
        }
        for i in range(50)
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    size, seen, start = path.stat().st_size, [], 0
    while start < size:
        ends = []
        for session, end in dataset.sessions_from(path, start, size // 5):
            seen.append(session["session_id"])
            ends.append(end)
        assert ends and ends[-1] - start < size // 5 + 200  # about the budget
        start = ends[-1]
    assert seen == [f"s{i}" for i in range(50)]  # every session once, in order
    assert list(dataset.sessions_from(path, 3, size)) == []  # not a line start
    assert explore.SEARCH_BYTES >= 1024 * 1024
