"""A finished run's view-link pages (dashboard, replies grid) are served as
stored bytes with an ``ETag``, and a 304 to a reader who holds them
(``web/views/final_pages.py``, issue 61): never another language's,
another token's or an older version's page, and never for a running run or
the owner's page."""

from __future__ import annotations

from contextlib import contextmanager

import pytest
from sqlalchemy import event, update

from store.models import Run
from tests.web.views import test_shared_pages as shared
from web.presentation import dashboard, replies
from web.presentation.single_flight import SingleFlight
from web.views import final_pages

NONCE, header_nonce = shared.NONCE, shared.header_nonce
served = shared.served  # the fixture: a finished alignment + quality run


@pytest.fixture(autouse=True)
def fresh_pages(monkeypatch):
    monkeypatch.setattr(final_pages, "PAGES", SingleFlight(previous=False))


def routes(run, token=None):
    token = token or run.token
    return [f"/r/{token}?lang=en", f"/r/{token}/replies?lang=en"]


def nonce_of(page: str) -> set[str]:
    return set(NONCE.findall(page))


@pytest.mark.parametrize("route", [0, 1])
def test_a_reader_who_holds_the_page_gets_a_304_with_its_nonce(served, route):
    app, run = served
    client = app.test_client()
    url = routes(run)[route]
    first = client.get(url)
    assert first.status_code == 200 and first.headers["ETag"]
    assert first.headers["Cache-Control"] == "private, no-cache"
    page = first.get_data(as_text=True)
    assert nonce_of(page) == {header_nonce(first)}
    again = client.get(url, headers={"If-None-Match": first.headers["ETag"]})
    assert again.status_code == 304 and again.get_data() == b""
    assert again.headers["ETag"] == first.headers["ETag"]
    # the kept page's scripts still run: the 304 names the nonce it carries
    assert header_nonce(again) == header_nonce(first)
    other = client.get(url, headers={"If-None-Match": '"something-else"'})
    assert other.status_code == 200 and other.get_data(as_text=True) == page


def test_a_stored_page_is_not_built_again_and_asks_little_of_the_database(
    served, monkeypatch
):
    app, run = served
    client = app.test_client()
    built = []
    for module in (dashboard, replies):
        name = "context" if module is dashboard else "grid_context"
        original = getattr(module, name)

        def counting(*args, _original=original, **kwargs):
            built.append(_original)
            return _original(*args, **kwargs)

        monkeypatch.setattr(module, name, counting)
    engine = app.extensions["storage"].engine
    for url in routes(run):
        with queries(engine) as first:
            client.get(url)
        with queries(engine) as hit:
            assert client.get(url).status_code == 200
        # the token and the version (run, annotation queue): nothing else
        assert len(hit) <= 2 < len(first), (hit, first)
    assert len(built) == 2  # once per page


@contextmanager
def queries(engine):
    seen: list[str] = []

    def count(conn, cursor, statement, *args):
        seen.append(statement)

    event.listen(engine, "before_cursor_execute", count)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", count)


@pytest.mark.parametrize("route", [0, 1])
def test_another_language_is_another_page(served, route):
    app, run = served
    client = app.test_client()
    english = client.get(routes(run)[route])
    url = routes(run)[route].replace("lang=en", "lang=zh")
    chinese = client.get(url, headers={"If-None-Match": english.headers["ETag"]})
    assert chinese.status_code == 200
    assert chinese.headers["ETag"] != english.headers["ETag"]
    assert 'lang="zh' in chinese.get_data(as_text=True)
    # the language from the cookie or the browser, on the same URL
    bare = routes(run)[route].split("?")[0]
    by_header = client.get(bare, headers={"Accept-Language": "ko"})
    assert 'lang="ko' in by_header.get_data(as_text=True)
    by_header_en = client.get(bare, headers={"Accept-Language": "en"})
    assert 'lang="en' in by_header_en.get_data(as_text=True)


def test_another_run_s_token_is_another_page(served, judge_server):
    from pathlib import Path

    from tests.pipeline_support import evaluate

    app, run = served
    sample = Path(__file__).resolve().parents[3] / "sample_data.jsonl"
    document = evaluate(app, sample, judge_server, suites=["quality"])
    other = app.extensions["storage"].runs.get_run(document["run"]["id"])
    client = app.test_client()
    for mine, theirs in zip(routes(run), routes(other), strict=True):
        first = client.get(mine)
        second = client.get(theirs, headers={"If-None-Match": first.headers["ETag"]})
        assert second.status_code == 200
        assert other.token in second.get_data(as_text=True)
        assert run.token not in second.get_data(as_text=True)


def test_a_change_makes_a_new_page_and_a_new_etag(served):
    app, run = served
    client = app.test_client()
    for number, url in enumerate(routes(run)):
        first = client.get(url)
        name = f"renamed{number}"
        app.extensions["storage"].runs.update_run_fields(run.id, name=name)
        after = client.get(url, headers={"If-None-Match": first.headers["ETag"]})
        assert after.status_code == 200
        assert after.headers["ETag"] != first.headers["ETag"]
        if "replies" in url:  # the dashboard does not show the name
            assert name in after.get_data(as_text=True)


def test_a_label_makes_a_new_etag(served):
    from tests.pipeline.service.test_annotations import label, make_queue

    app, run = served
    client = app.test_client()
    url = routes(run)[0]
    first = client.get(url)
    make_queue(client, run, size=10)
    assert label(client, run, "ann", 0, 70, 1).status_code == 200
    after = client.get(url, headers={"If-None-Match": first.headers["ETag"]})
    assert after.status_code == 200
    assert after.headers["ETag"] != first.headers["ETag"]
    assert 'data-testid="annotations"' in after.get_data(as_text=True)


def test_a_running_run_is_never_stored_and_its_end_shows(served):
    """Viewed while it runs: rendered for each request, no ETag, no-store;
    once it has finished, the dashboard (a page not shown before)."""
    app, run = served
    client = app.test_client()
    engine = app.extensions["storage"].engine
    finished = {"status": run.status, "finished_at": run.finished_at}
    with engine.begin() as conn:
        conn.execute(
            update(Run)
            .where(Run.id == run.id)
            .values(status="running", finished_at=None)
        )
    for url in routes(run):
        response = client.get(url)
        assert response.status_code == 200
        assert "ETag" not in response.headers
        assert response.headers["Cache-Control"] == "no-store"
        held = client.get(url, headers={"If-None-Match": "*"})
        assert held.status_code == 200
    running = client.get(routes(run)[0]).get_data(as_text=True)
    with engine.begin() as conn:
        conn.execute(update(Run).where(Run.id == run.id).values(**finished))
    done = client.get(routes(run)[0])
    assert done.headers["ETag"]
    assert done.get_data(as_text=True) != running
    assert 'data-testid="protocol"' in done.get_data(as_text=True)
    assert 'data-testid="protocol"' not in running


def test_the_owner_s_pages_are_never_stored(served):
    app, run = served
    client = app.test_client()
    for url in routes(run, run.manage_token):
        response = client.get(url)
        assert response.status_code == 200
        assert "ETag" not in response.headers
        assert response.headers["Cache-Control"] == "no-store"


@pytest.mark.parametrize("route", [0, 1])
def test_a_reader_who_accepts_gzip_gets_the_stored_gzip_copy(served, route):
    import gzip

    app, run = served
    client = app.test_client()
    url = routes(run)[route]
    plain = client.get(url)
    packed = client.get(url, headers={"Accept-Encoding": "gzip, deflate"})
    assert packed.headers["Content-Encoding"] == "gzip"
    assert "Accept-Encoding" in packed.headers["Vary"]
    assert gzip.decompress(packed.get_data()) == plain.get_data()
    assert packed.headers["ETag"] != plain.headers["ETag"]
    held = {"Accept-Encoding": "gzip", "If-None-Match": packed.headers["ETag"]}
    assert client.get(url, headers=held).status_code == 304
