"""The app's services as a request handler reaches them: the storage and the
run service (``app.py`` puts them in ``app.extensions``). One place, instead
of the same two-line helper in every blueprint module.
"""

from __future__ import annotations

from flask import current_app


def storage():
    """The storage layer (``store/storage.py``)."""
    return current_app.extensions["storage"]


def runs():
    """The run service (``pipeline/runs.py``)."""
    return current_app.extensions["runs"]
