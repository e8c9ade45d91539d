"""Static assets: plotly.js gzipped once and served with the right headers,
and the site icon (linked from every page, and at /favicon.ico)."""

from __future__ import annotations

import gzip

import plotly
import pytest

from web.views import assets

PLOTLY_URL = f"/vendor/plotly-{plotly.__version__}.min.js"


@pytest.fixture
def fresh_gzip(monkeypatch):
    """A cold cache that counts how often it compresses."""
    calls = []
    real = gzip.compress

    def counting(data, *args, **kwargs):
        calls.append(len(data))
        return real(data, *args, **kwargs)

    monkeypatch.setattr(assets, "PLOTLY_GZ", assets.Precompressed(assets.PLOTLY_JS))
    monkeypatch.setattr(assets.gzip, "compress", counting)
    return calls


def test_plotly_is_gzipped_once_for_clients_that_accept_it(client, fresh_gzip):
    original = assets.PLOTLY_JS.read_bytes()
    for _ in range(3):
        response = client.get(PLOTLY_URL, headers={"Accept-Encoding": "gzip, br"})
        assert response.status_code == 200
        assert response.headers["Content-Encoding"] == "gzip"
        assert "Accept-Encoding" in response.headers["Vary"]
        assert response.headers["Cache-Control"] == (
            f"public, max-age={assets.ONE_YEAR}, immutable"
        )
        assert response.mimetype == "text/javascript"
        assert gzip.decompress(response.data) == original
        assert len(response.data) < len(original) / 2
    assert fresh_gzip == [len(original)]  # compressed once, not per request


def test_plotly_gzip_answers_conditional_requests(client, fresh_gzip):
    headers = {"Accept-Encoding": "gzip"}
    etag = client.get(PLOTLY_URL, headers=headers).headers["ETag"]
    again = client.get(PLOTLY_URL, headers={**headers, "If-None-Match": etag})
    assert again.status_code == 304


@pytest.mark.parametrize("accept", [None, "identity", "gzip;q=0", "br"])
def test_plotly_is_sent_plain_to_clients_without_gzip(client, fresh_gzip, accept):
    headers = {"Accept-Encoding": accept} if accept else {}
    with client.get(PLOTLY_URL, headers=headers) as response:
        assert response.status_code == 200
        assert "Content-Encoding" not in response.headers
        assert "Accept-Encoding" in response.headers["Vary"]
        assert "immutable" in response.headers["Cache-Control"]
        assert response.data == assets.PLOTLY_JS.read_bytes()
    assert fresh_gzip == []


def test_unknown_plotly_version_is_404(client):
    headers = {"Accept-Encoding": "gzip"}
    assert client.get("/vendor/plotly-0.0.0.min.js", headers=headers).status_code == 404


def test_every_page_links_the_svg_icon_and_favicon_ico_is_served(client):
    page = client.get("/").get_data(as_text=True)
    assert '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">' in page
    with client.get("/static/favicon.svg") as icon:
        assert icon.status_code == 200 and icon.mimetype == "image/svg+xml"
        assert icon.data.startswith(b"<svg")
    with client.get("/favicon.ico") as legacy:
        assert legacy.status_code == 200
        assert legacy.mimetype == "image/svg+xml"
        assert "max-age" in legacy.headers["Cache-Control"]
