"""Lazy, translatable text without Flask.

Suites, statuses and problem messages are declared below the web layer, which
owns flask-babel. ``_l("...")`` marks a message for extraction (``pybabel
extract -k _l``) and returns a :class:`LazyText`; the web layer installs the
real ``gettext`` with :func:`install`, and ``str()`` translates into the
language of the current request. Outside a request, or before ``install``,
the English source text is returned, so workers store locale-neutral text.

>>> label = _l("Overall quality")
>>> str(label), label.msgid, label == _l("Overall quality")
('Overall quality', 'Overall quality', True)
>>> _l("%(count)s more") % {"count": 3}
'3 more'
"""

from __future__ import annotations

from collections.abc import Callable

from markupsafe import Markup, escape


def _identity(message: str) -> str:
    return message


_translate: list[Callable[[str], str]] = [_identity]


def install(gettext: Callable[[str], str]) -> None:
    """Route every :class:`LazyText` through ``gettext`` (done by the web layer)."""
    _translate[0] = gettext


class LazyText:
    """A message id that translates each time it is turned into text."""

    __slots__ = ("msgid",)

    def __init__(self, msgid: str):
        self.msgid = msgid

    def __str__(self) -> str:
        return _translate[0](self.msgid)

    def __repr__(self) -> str:
        return f"_l({self.msgid!r})"

    def __html__(self) -> Markup:  # Jinja autoescaping and Flask's JSON provider
        return escape(str(self))

    def __mod__(self, params: object) -> str:
        return str(self) % params

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LazyText) and other.msgid == self.msgid

    def __hash__(self) -> int:
        return hash(self.msgid)


def _l(message: str) -> LazyText:
    return LazyText(message)


def text(value: LazyText | str | None) -> str:
    """Translated text of a lazy or plain string ('' for None)."""
    return "" if value is None else str(value)
