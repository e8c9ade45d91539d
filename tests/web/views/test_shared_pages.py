"""A view link's dashboard is rendered once per results version, language
and query and shared by its readers (``web/views/pages.py``,
``web/views/final_pages.py``): that is only true if the page is the same
for every reader."""

from __future__ import annotations

import re

import pytest

from web.presentation.single_flight import SingleFlight
from web.views import final_pages

NONCE = re.compile(r'nonce="([^"]+)"')


def judge_sample(make) -> str:
    from pathlib import Path

    from testing.judge_server import ScriptedJudge
    from tests.pipeline_support import evaluate

    sample = Path(__file__).resolve().parents[3] / "sample_data.jsonl"
    with ScriptedJudge(timeout_sleep=12.0) as judge:
        app = make(JUDGE_API_URL=judge.url, JUDGE_MODEL="scripted")
        document = evaluate(app, sample, judge, suites=["alignment", "quality"])
    return document["run"]["id"]


@pytest.fixture
def served(app_factory, judge_server, evaluated_copy):
    """The sample judged by alignment and quality (once a session, copied
    for each test: tests/conftest.py, EvaluatedRuns); its app and run."""
    run_id = evaluated_copy("sample-alignment-quality", judge_sample)
    app = app_factory(JUDGE_API_URL=judge_server.url, JUDGE_MODEL="scripted")
    return app, app.extensions["storage"].runs.get_run(run_id)


def header_nonce(response) -> str:
    return re.search(r"'nonce-([^']+)'", response.headers["Content-Security-Policy"])[1]


def test_readers_get_the_same_page_and_the_nonce_it_was_built_with(served, monkeypatch):
    """The page is stored as bytes (``web/views/final_pages.py``): its
    readers share its nonce, which the CSP header names; each worker renders
    the same one, and another page has another."""
    app, run = served
    client = app.test_client()
    url = f"/r/{run.token}?lang=zh&baseline={run.methods[1]}"
    monkeypatch.setattr(final_pages, "PAGES", SingleFlight(previous=False))
    first = client.get(url)
    monkeypatch.setattr(final_pages, "PAGES", SingleFlight(previous=False))
    second = client.get(url)  # built again
    shared = client.get(url)  # from the build of the second
    pages_seen = [r.get_data(as_text=True) for r in (first, second, shared)]
    for response, page in zip((first, second, shared), pages_seen, strict=True):
        assert set(NONCE.findall(page)) == {header_nonce(response)}
    # two workers (each its own stored pages) render the same bytes
    assert pages_seen[0] == pages_seen[1] == pages_seen[2]
    assert first.headers["ETag"] == second.headers["ETag"]
    # another language, another query: another rendering, another nonce
    nonces = {header_nonce(first)}
    for other in (url.replace("lang=zh", "lang=ko"), f"{url}&page=2"):
        nonces.add(header_nonce(client.get(other)))
    assert len(nonces) == 3


def test_a_label_makes_a_new_page(served):
    """Labels change what readers see (the agreement, or that a worker is
    computing it): the shared page is built again."""
    from tests.pipeline.service.test_annotations import label, make_queue

    app, run = served
    client = app.test_client()
    url = f"/r/{run.token}?lang=en"
    assert 'data-testid="annotations"' not in client.get(url).get_data(as_text=True)
    make_queue(client, run, size=10)
    assert label(client, run, "ann", 0, 70, 1).status_code == 200
    assert 'data-testid="annotations"' in client.get(url).get_data(as_text=True)


def test_the_owner_s_page_is_never_shared(served):
    app, run = served
    client = app.test_client()
    owner = client.get(f"/r/{run.manage_token}?lang=en").get_data(as_text=True)
    reader = client.get(f"/r/{run.token}?lang=en").get_data(as_text=True)
    assert 'name="csrf_token"' in owner and 'name="csrf_token"' not in reader
