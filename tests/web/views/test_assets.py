"""Static assets: plotly.js (the set-up's bundle of the trace types we draw,
else the wheel's full one) gzipped once and served with the right headers,
and the site icon (linked from every page, and at /favicon.ico)."""

from __future__ import annotations

import gzip
import json
import logging
import os
import re
from pathlib import Path

import plotly
import pytest

from web.views import assets

ROOT = Path(__file__).resolve().parents[3]

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


def wheel_plotly_js() -> str:
    version = assets.plotly_js_version(assets.PLOTLY_JS)
    assert version and version[0].isdigit()
    return version


def fake_bundle(path: Path, version: str) -> Path:
    path.write_text(
        f"/*! plotly.js v{version} (scatter, bar) | MIT */\n"
        "var Plotly=(()=>({newPlot(){}}))();\n" + "// padding\n" * 2000
    )
    return path


@pytest.fixture
def charts(monkeypatch, tmp_path):
    """A built bundle of the wheel's plotly.js version, in place of the set-up's."""
    path = fake_bundle(tmp_path / "plotly-charts.min.js", wheel_plotly_js())
    monkeypatch.setattr(assets, "CHARTS", assets.ChartsBundle(path))
    return path


def page_script(app) -> str:
    with app.test_request_context("/"):
        return assets.plotly_src()


def test_pages_load_the_charts_bundle_gzipped_and_immutable(app, client, charts):
    src = page_script(app)
    assert src.startswith("/vendor/charts/plotly-")
    response = client.get(src, headers={"Accept-Encoding": "gzip"})
    assert response.status_code == 200 and response.mimetype == "text/javascript"
    assert response.headers["Content-Encoding"] == "gzip"
    assert gzip.decompress(response.data) == charts.read_bytes()
    assert response.headers["Cache-Control"] == assets.IMMUTABLE
    assert "Accept-Encoding" in response.headers["Vary"]
    etag = response.headers["ETag"]
    again = client.get(src, headers={"Accept-Encoding": "gzip", "If-None-Match": etag})
    assert again.status_code == 304
    with client.get(src, headers={"Accept-Encoding": "identity"}) as plain:
        assert "Content-Encoding" not in plain.headers
        assert plain.data == charts.read_bytes()
        assert plain.headers["Cache-Control"] == assets.IMMUTABLE
    # another build is another URL: the old one is gone, never a stale copy
    assert (
        client.get("/vendor/charts/plotly-0123456789abcdef.min.js").status_code == 404
    )


def test_the_full_plotly_js_when_configured(app, charts, monkeypatch):
    monkeypatch.setitem(app.config, "PLOTLY_BUNDLE", "full")
    assert page_script(app) == PLOTLY_URL


def test_without_the_bundle_pages_fall_back_to_the_wheel_and_say_so(
    app, client, monkeypatch, tmp_path, caplog
):
    missing = tmp_path / "dist" / "plotly-charts.min.js"
    monkeypatch.setattr(assets, "CHARTS", assets.ChartsBundle(missing))
    with caplog.at_level(logging.WARNING, logger=assets.__name__):
        assert page_script(app) == PLOTLY_URL
        assert page_script(app) == PLOTLY_URL
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1  # once per process, not per page
    assert "bootstrap.sh install" in warnings[0] and "full plotly.js" in warnings[0]
    with client.get(PLOTLY_URL) as full:
        assert full.status_code == 200


def test_a_bundle_of_another_plotly_js_is_not_served(
    app, monkeypatch, tmp_path, caplog
):
    """Figures are made for the wheel's plotly.js: a bundle left from before
    an upgrade of the wheel is not used."""
    stale = fake_bundle(tmp_path / "plotly-charts.min.js", "0.9.0")
    monkeypatch.setattr(assets, "CHARTS", assets.ChartsBundle(stale))
    with caplog.at_level(logging.WARNING, logger=assets.__name__):
        assert page_script(app) == PLOTLY_URL
    assert "holds plotly.js 0.9.0" in caplog.text


def test_the_bundle_is_pinned_to_the_wheels_plotly_js():
    package = json.loads((ROOT / "frontend/package.json").read_text())
    lock = json.loads((ROOT / "frontend/package-lock.json").read_text())
    assert package["devDependencies"]["plotly.js"] == wheel_plotly_js()
    assert lock["packages"]["node_modules/plotly.js"]["version"] == wheel_plotly_js()
    assert all("integrity" in entry for name, entry in lock["packages"].items() if name)


def test_the_bundle_holds_every_trace_type_the_charts_draw():
    drawn = set()
    for module in (ROOT / "web/presentation").glob("*.py"):
        drawn |= {
            name.lower() for name in re.findall(r"go\.([A-Z]\w*)\(", module.read_text())
        }
    drawn -= {"figure"}
    entry = (ROOT / "frontend/plotly_charts.js").read_text()
    bundled = {"scatter"} | set(re.findall(r'require\("plotly\.js/lib/(\w+)"\)', entry))
    assert drawn >= {"scatter", "bar", "heatmap"}  # the scan found the builders
    assert drawn <= bundled


def test_the_set_up_built_the_bundle():
    """``scripts/bootstrap.sh install`` builds it (CI runs that first)."""
    if not assets.CHARTS_JS.exists() and not os.environ.get("CI"):
        pytest.skip("the set-up has not built frontend/dist here")
    assert assets.plotly_js_version(assets.CHARTS_JS) == wheel_plotly_js()
    assert assets.CHARTS_JS.stat().st_size < assets.PLOTLY_JS.stat().st_size / 2
