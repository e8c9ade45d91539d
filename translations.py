"""i18n: flask-babel set-up, locale choice, and translated labels.

Locale: ``?lang=`` (remembered in a cookie), then the cookie, then
Accept-Language matched on its primary subtag (``zh-CN`` → ``zh``, ``ko-KR``
→ ``ko``; werkzeug's ``best_match`` does not fall back that way). Outside a
request the selector returns None, so Celery tasks never translate: results
are stored locale-neutral and translated when rendered.

Labels are declared where their facts live (metric and suite labels in the
suite modules, statuses in ``core/status.py``, problem messages in
``core/problems.py``) as lazy text; ``init_app`` routes that text through
flask-babel's ``gettext``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from flask import Flask, Response, g, has_app_context, request
from flask_babel import Babel, format_datetime, get_locale, get_translations
from flask_babel import lazy_gettext as _l

from core import i18n, problems
from core.status import status_label as _status_label
from metrics import registry

LANGUAGES = {"en": "English", "zh": "中文", "ko": "한국어"}
LANG_COOKIE = "lang"


def _(string: str, **variables: Any) -> str:
    """flask-babel's ``gettext`` (the text in the request's language, with
    ``%(name)s`` placeholders filled), typed: flask-babel ships no types."""
    text: str = catalog().ugettext(string)
    return text % variables if variables else text


def catalog() -> Any:
    """flask-babel's translations for the current locale, found once per
    locale a request: its ``get_translations`` resolves the app, ``g`` and
    the locale anew on every call, some ten context lookups (9-14 µs, 70
    times the catalog's own lookup), and a page asks for hundreds of
    messages. Kept beside flask-babel's locale, which its ``refresh`` and
    ``force_locale`` replace: a new locale finds its catalog again."""
    if not has_app_context():
        return get_translations()  # (no context: flask-babel's identity)
    babel = g.get("_flask_babel")
    locale = getattr(babel, "babel_locale", None)
    kept = getattr(babel, "catalog", None)
    if locale is None or kept is None or kept[0] is not locale:
        found = get_translations()  # sets the locale on a request's first call
        g._flask_babel.catalog = (get_locale(), found)
        return found
    return kept[1]


def select_locale() -> str | None:
    if not request:
        return None
    wanted = request.args.get("lang") or request.cookies.get(LANG_COOKIE)
    if wanted in LANGUAGES:
        return wanted
    for tag, _quality in request.accept_languages:
        primary = tag.split("-")[0].lower()
        if primary in LANGUAGES:
            return primary
    return "en"


def remember_language(response: Response) -> Response:
    """Persist an explicit ``?lang=`` choice for the next pages."""
    wanted = request.args.get("lang")
    if wanted in LANGUAGES:
        response.set_cookie(
            LANG_COOKIE, wanted, max_age=365 * 24 * 3600, samesite="Lax"
        )
    return response


def compile_stale_catalogs(root: Path) -> list[str]:
    """Compile ``.po`` files whose ``.mo`` is missing or older (set-up also
    compiles; this keeps a development checkout from serving stale text)."""
    compiled = []
    for po_path in sorted(root.glob("*/LC_MESSAGES/messages.po")):
        mo_path = po_path.with_suffix(".mo")
        if mo_path.exists() and mo_path.stat().st_mtime >= po_path.stat().st_mtime:
            continue
        # babel's catalog code loads only when a catalog is stale
        from babel.messages.mofile import write_mo
        from babel.messages.pofile import read_po

        with po_path.open("rb") as po_file:
            catalog = read_po(po_file)
        with mo_path.open("wb") as mo_file:
            write_mo(mo_file, catalog)
        compiled.append(po_path.parts[-3])
    return compiled


def init_app(app: Flask) -> None:
    locales = Path(app.root_path) / "locales"
    app.config.setdefault("BABEL_TRANSLATION_DIRECTORIES", str(locales))
    app.config.setdefault("BABEL_DEFAULT_LOCALE", "en")
    compile_stale_catalogs(locales)
    Babel(app, locale_selector=select_locale)
    # flask-babel's own callables, through catalog() (the method is added
    # by the i18n extension flask-babel loaded: not in Environment's type)
    install = app.jinja_env.install_gettext_callables  # type: ignore[attr-defined]
    install(
        gettext=lambda s: catalog().ugettext(s),
        ngettext=lambda s, p, n: catalog().ungettext(s, p, n),
        newstyle=True,
        pgettext=lambda c, s: catalog().upgettext(c, s),
        npgettext=lambda c, s, p, n: catalog().unpgettext(c, s, p, n),
    )
    i18n.install(_)
    app.after_request(remember_language)
    app.jinja_env.globals.update(
        LANGUAGES=LANGUAGES,
        current_language=lambda: str(get_locale() or "en"),
        metric_label=metric_label,
        metric_description=metric_description,
        status_label=status_label,
        suite_label=suite_label,
        when=when,
    )


# -- labels ---------------------------------------------------------------
def metric_label(metric_id: str) -> str:
    """Translated label; keyed ids (``slot_f1@interests``) keep their key."""
    metric = registry.spec(metric_id)
    if metric is None:
        return metric_id
    _base, _, key = metric_id.partition("@")
    return f"{metric.label} · {key}" if key else str(metric.label)


def metric_description(metric_id: str) -> str:
    metric = registry.spec(metric_id)
    return str(metric.description) if metric and metric.description else ""


def suite_label(name: str) -> str:
    return str(registry.get(name).label) if name in registry.names() else name


def status_label(status: str) -> str:
    return str(_status_label(status))


def problem_message(problem: Mapping[str, Any]) -> str:
    """A problem in the reader's language (params kept as data)."""
    return problems.translate(problem)


def translate_problems(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**p, "message": problem_message(p) or p.get("message", "")} for p in found]


def when(moment: datetime | None) -> str:
    return format_datetime(moment, "medium") if moment else "—"


__all__ = ["_", "_l", "init_app", "problem_message", "translate_problems"]
