"""Plotly's own words (box hover labels, zoom hints) come from our catalogs."""

from __future__ import annotations

import json

import pytest

from web.presentation.plotly_locale import plotly_locale


def locale_block(html: str):
    blob = html.split('id="plotly-locale">', 1)[1].split("</script>", 1)[0]
    return json.loads(blob)


@pytest.mark.parametrize(("lang", "median"), [("zh", "中位数"), ("ko", "중앙값")])
def test_the_dashboard_carries_plotly_words_in_the_readers_language(
    app_factory, lang, median
):
    app = app_factory()
    with app.test_request_context(f"/?lang={lang}"):
        locale = plotly_locale()
    assert locale["name"] == lang
    assert locale["dictionary"]["median"] == median
    assert all(text for text in locale["dictionary"].values())


def test_english_needs_no_locale(app_factory):
    with app_factory().test_request_context("/?lang=en"):
        assert plotly_locale() is None
