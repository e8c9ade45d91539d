"""Catalogs complete, in sync with the code, and locale selection."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

import translations
from core.problems import MESSAGES, Problem

ROOT = Path(__file__).resolve().parents[1]
PLACEHOLDER = re.compile(r"%\([a-z_]+\)s|\{[a-z_]+\}|%%")


def catalog(lang: str):
    with (ROOT / "locales" / lang / "LC_MESSAGES" / "messages.po").open("rb") as po:
        return read_po(po)


@pytest.mark.parametrize("lang", ["zh", "ko"])
def test_every_message_is_translated_with_its_placeholders(lang):
    empty, broken = [], []
    for message in catalog(lang):
        if not message.id:
            continue
        # a plural message (ngettext): its forms, each with the placeholders
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        forms = (
            message.string if isinstance(message.string, tuple) else (message.string,)
        )
        if not all(forms):
            empty.append(message.id)
        elif any(
            sorted(PLACEHOLDER.findall(ids[-1])) != sorted(PLACEHOLDER.findall(form))
            for form in forms
        ):
            broken.append(message.id)
    assert empty == [], f"untranslated in {lang}"
    assert broken == [], f"placeholders differ in {lang}"


def test_catalogs_hold_every_message_in_the_code(tmp_path):
    pot = tmp_path / "messages.pot"
    pybabel = Path(sys.executable).with_name("pybabel")
    subprocess.run(
        [str(pybabel), "extract", "-F", "babel.cfg", "-k", "_l", "-o", str(pot), "."],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    with pot.open("rb") as extracted:
        wanted = {m.id for m in read_po(extracted) if m.id}
    for lang in ("zh", "ko"):
        missing = wanted - {m.id for m in catalog(lang) if m.id}
        assert missing == set(), (
            f"run pybabel update: {lang} lacks {sorted(missing)[:5]}"
        )


def test_every_problem_message_formats_with_its_placeholders():
    for code, template in MESSAGES.items():
        names = set(re.findall(r"%\((\w+)\)s", template.msgid)) - {"path"}
        problem = Problem.make(None, "rounds[0]", code, **dict.fromkeys(names, "X"))
        assert "%(" not in problem.message and problem.message, code


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("zh-CN,zh;q=0.9,en;q=0.5", "zh"),
        ("ko-KR,ko;q=0.9", "ko"),
        ("fr-FR", "en"),
        ("", "en"),
    ],
)
def test_accept_language_picks_the_primary_subtag(client, header, expected):
    page = client.get("/", headers={"Accept-Language": header}).get_data(as_text=True)
    assert f'<html lang="{expected}">' in page


def test_query_beats_cookie_beats_header(client):
    page = client.get("/?lang=ko", headers={"Accept-Language": "zh-CN"})
    assert '<html lang="ko">' in page.get_data(as_text=True)
    assert "lang=ko" in page.headers["Set-Cookie"]
    again = client.get("/", headers={"Accept-Language": "zh-CN"}).get_data(as_text=True)
    assert '<html lang="ko">' in again  # the cookie now wins over the header


@pytest.mark.parametrize(("lang", "text"), [("zh", "指标"), ("ko", "지표")])
def test_pages_are_translated(client, lang, text):
    assert text in client.get(f"/?lang={lang}").get_data(as_text=True)


def test_validation_messages_are_translated(app):
    problem = {"code": "missing_field", "params": {"path": "rounds[0].user_message"}}
    with app.test_request_context("/?lang=zh"):
        message = translations.problem_message(problem)
    assert "rounds[0].user_message" in message
    assert (
        message != Problem.make(None, "rounds[0].user_message", "missing_field").message
    )


def test_messages_follow_the_locale_as_flask_babel_gives_it(app):
    """The catalog kept for a request (``translations.catalog``) is the
    locale's: a forced locale and a refresh find theirs, outside a request
    the text is English, and templates translate as flask-babel does."""
    from flask import render_template_string
    from flask_babel import force_locale, gettext, ngettext, refresh

    assert translations._("Metric") == "Metric"  # no app, no request
    with app.app_context():
        assert translations._("Metric") == "Metric"
    with app.test_request_context("/?lang=zh"):
        chinese = translations._("Metric")
        assert chinese == gettext("Metric") != "Metric"
        with force_locale("ko"):
            assert (
                translations._("Metric") == gettext("Metric") not in ("Metric", chinese)
            )
        placed = translations._("%(basis)s; %(n)s sessions", basis="x", n=3)
        assert placed == gettext("%(basis)s; %(n)s sessions", basis="x", n=3)
        assert "3" in placed and placed != "x; 3 sessions"
        plural = ("%(count)s item", "%(count)s items")
        template = "{{ _('Metric') }}|{{ ngettext(plural[0], plural[1], 2, count=2) }}"
        assert render_template_string(template, plural=plural) == (
            f"{chinese}|{ngettext(*plural, 2, count=2)}"
        )
        with force_locale("en"):
            assert translations._("Metric") == "Metric"
            refresh()  # (a forced locale stays through a refresh)
            assert translations._("Metric") == "Metric"
        assert translations._("Metric") == chinese


def test_dates_follow_the_locale(app):
    from datetime import UTC, datetime

    moment = datetime(2026, 11, 21, 5, 30, tzinfo=UTC)
    with app.test_request_context("/?lang=zh"):
        assert "年" in translations.when(moment)
    with app.test_request_context("/?lang=en"):
        assert "Nov" in translations.when(moment)


@pytest.mark.parametrize("lang", ["zh", "ko"])
def test_json_decoder_words_and_type_names_are_translated_and_paths_shown_once(
    client, lang
):
    import io
    import re

    data = (
        b'{"session_id":"a","user_profile":"p","user_personality":"q","rounds":['
        b'{"round":1,"user_message":"hi","responses":5}]}\n{"session_id": oops}\n'
    )
    body = {"file": (io.BytesIO(data), "bad.jsonl")}
    report = client.post(
        f"/api/v1/validate?lang={lang}", data=body, content_type="multipart/form-data"
    ).get_json()
    messages = " ".join(error["message"] for error in report["errors"])
    for english in ("Expecting value", "string or object", "number"):
        assert english not in messages, messages
    assert messages.count("rounds[0].responses") == 1
    from tests.web.views.test_pages import post_run

    client.get(f"/?lang={lang}")  # the language sticks (cookie)
    page = post_run(client, data, name="bad.jsonl").get_data(as_text=True)
    listed = re.sub(r"<[^>]+>", " ", page.split('data-testid="problems"')[1])
    assert listed.count("rounds[0].responses") == 1
