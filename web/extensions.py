"""The app's services as a request handler reaches them: the storage and the
run service (``app.py`` puts them in ``app.extensions``). One place, instead
of the same two-line helper in every blueprint module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from flask import current_app, url_for

if TYPE_CHECKING:
    from pipeline.service.annotations import AnnotationService
    from pipeline.service.runs import RunService
    from store import StorageLike


def storage() -> StorageLike:
    """The storage layer (``store/storage.py``)."""
    # app.py's create_app puts a store.LazyStorage there (store.init_app)
    return cast("StorageLike", current_app.extensions["storage"])


def runs() -> RunService:
    """The run service (``pipeline/service/runs.py``)."""
    # app.py's create_app puts the RunService it made there
    return cast("RunService", current_app.extensions["runs"])


def annotation_service() -> AnnotationService:
    """The annotation service of the run service's uploads."""
    from pipeline.service.annotations import AnnotationService

    return AnnotationService(storage(), runs().upload_path)


def link(endpoint: str, **values: Any) -> str:
    """A link a reply gives out: absolute on ``PUBLIC_URL`` when it is set,
    else relative. Never built from the request's ``Host`` header, which
    the client controls."""
    path = url_for(endpoint, **values)
    base = current_app.config.get("PUBLIC_URL")
    return f"{base}{path}" if base else path
