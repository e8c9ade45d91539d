"""Plotly's own words in the reader's language.

With the modebar gone, what Plotly still writes itself is the box plots'
hover labels (median, quartiles, fences), the "double-click" hints after a
zoom, and a trace's default name. The Python wheel ships no locales and
``plotly.js-locales`` on npm lags the bundled plotly.js, so the strings come
from our catalogs and the page registers them with ``Plotly.register``
(``static/dashboard.js``); English needs no locale.
"""

from __future__ import annotations

from flask_babel import get_locale

from translations import _


def plotly_locale() -> dict[str, str | dict[str, str]] | None:
    """``{"name", "dictionary"}`` for the current language; None in English."""
    language = str(get_locale() or "en")
    if language == "en":
        return None
    dictionary = {
        "max": _("max"),
        "upper fence": _("upper fence"),
        "q3": _("q3"),
        "median": _("median"),
        "q1": _("q1"),
        "lower fence": _("lower fence"),
        "min": _("min"),
        "mean": _("mean"),
        "mean ± σ": _("mean ± σ"),
        "trace": _("trace"),
        "Double-click to zoom back out": _("Double-click to zoom back out"),
        "Double-click on legend to isolate one trace": _(
            "Double-click on legend to isolate one trace"
        ),
    }
    return {"name": language, "dictionary": dictionary}
