"""Annotation queues in the browser (``pipeline/service/annotations.py``).

The owner's side (``owner``, CSRF-protected forms on the manage link's
dashboard, and ``POST /api/v1/runs/<manage>/annotations``): make a queue,
give each annotator a link of their own (``/annotators``: the name is fixed
in its token), revoke one, close the queue. The annotator's side
(``labelling``, reached only through an annotator's link): the blind
labelling page, its items as JSON and the labels it saves, always as the
link's name: nobody reads or changes another's labels or invents a name.
The queue's own token opens a page that says to ask for a link. The annotator's JSON endpoints take no CSRF token
(the unguessable token in the URL is the credential) but refuse posts from
other sites (``web/security/cross_site.py``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from flask import (
    Blueprint,
    Response,
    abort,
    jsonify,
    redirect,
    render_template,
    request,
    stream_with_context,
    url_for,
)
from flask.typing import ResponseReturnValue
from werkzeug.utils import secure_filename
from werkzeug.wrappers import Response as BaseResponse

from core.problems import Rejected
from pipeline.service import label_files
from pipeline.service.annotations import (
    annotator_name,
    import_labels,
    label_dimensions,
)
from translations import translate_problems
from web import extensions
from web.extensions import storage as _storage
from web.security import cross_site
from web.views import schemas

if TYPE_CHECKING:
    from store.annotation_models import AnnotationQueue
    from store.models import Run

owner = Blueprint("annotations", __name__)
api = Blueprint("annotations_api", __name__, url_prefix="/api/v1")
labelling = Blueprint("labelling", __name__)
cross_site.protect(api)
cross_site.protect(labelling)


service = extensions.annotation_service


def _managed_run(token: str) -> Run:
    found = _storage().runs.find_run(token)
    if found is None:
        abort(404)
    if not found.can_manage:
        abort(403)
    return found.item


def _json_object() -> dict[str, Any]:
    """The request's JSON object; {} for anything else (then reported)."""
    body = request.get_json(silent=True)
    return body if isinstance(body, dict) else {}


def _rejected(rejected: Rejected) -> tuple[Response, int]:
    return jsonify(errors=translate_problems(rejected.errors)), rejected.status


def _back(token: str) -> BaseResponse:
    return redirect(url_for("pages.run_page", token=token) + "#annotations", code=303)


@owner.post("/r/<token>/annotations")
def create_queue(token: str) -> ResponseReturnValue:
    run = _managed_run(token)
    try:
        service().create(
            run,
            request.form.get("size"),
            request.form.get("per_item", 1),
            request.form.get("dimensions") == "on",
        )
    except Rejected as rejected:
        return _rejected(rejected)
    return _back(token)


@api.post("/runs/<token>/annotations")
def create_queue_api(token: str) -> ResponseReturnValue:
    run = _managed_run(token)
    try:
        body = schemas.load(schemas.NewQueue, _json_object())
        queue = service().create(
            run, body["size"], body["per_item"], body["dimensions"]
        )
    except Rejected as rejected:
        return _rejected(rejected)
    shared = extensions.link("labelling.page", token=queue.token)  # never from Host
    return jsonify(
        annotator_url=shared,
        token=queue.token,
        items=len(queue.items),
        seed=queue.seed,
        per_item=queue.per_item,
    ), 201


@owner.post("/r/<token>/annotations/revoke")
def revoke_link(token: str) -> ResponseReturnValue:
    queue = _storage().annotations.queue_of_run(_managed_run(token).id) or abort(404)
    _storage().annotations.revoke_queue_token(queue.id)
    return _back(token)


@owner.post("/r/<token>/annotations/close")
def close_queue(token: str) -> ResponseReturnValue:
    queue = _storage().annotations.queue_of_run(_managed_run(token).id) or abort(404)
    _storage().annotations.close_queue(queue.id)
    return _back(token)


def _labeller(token: str) -> tuple[AnnotationQueue, Run, str]:
    """``(queue, run, annotator name)`` of an annotator's link; the queue's
    own token labels nothing (403), an unknown one is a 404."""
    found = _storage().annotations.link_by_token(token)
    if found is None:
        if _storage().annotations.queue_by_token(token) is None:
            abort(404)
        raise Rejected.one("annotator_link_needed", path="token", http=403)
    link, queue = found
    run = _storage().runs.get_run(queue.run_id)
    if run is None:  # deleted since the link was read (its queue with it)
        abort(404)
    return queue, run, link.name


@labelling.get("/a/<token>")
def page(token: str) -> ResponseReturnValue:
    found = _storage().annotations.link_by_token(token)
    queue = found[1] if found else _storage().annotations.queue_by_token(token)
    if queue is None:
        abort(404)
    return render_template(
        "labelling.html",
        queue=queue,
        token=token,
        dimension_names=label_dimensions(),
        annotator=found[0].name if found else None,
    )


@owner.post("/r/<token>/annotations/annotators")
def add_annotator(token: str) -> ResponseReturnValue:
    queue = _storage().annotations.queue_of_run(_managed_run(token).id) or abort(404)
    try:
        _storage().annotations.annotator_link(
            queue.id, annotator_name(request.form.get("name"))
        )
    except Rejected as rejected:
        return _rejected(rejected)
    return _back(token)


@owner.post("/r/<token>/annotations/annotators/revoke")
def revoke_annotator(token: str) -> ResponseReturnValue:
    queue = _storage().annotations.queue_of_run(_managed_run(token).id) or abort(404)
    _storage().annotations.revoke_annotator_link(
        queue.id, str(request.form.get("name", ""))
    )
    return _back(token)


@api.post("/runs/<token>/annotators")
def add_annotator_api(token: str) -> ResponseReturnValue:
    """``{"name"}`` -> 201 ``{"name", "token", "annotator_url"}``: the
    annotator's own link (the same one if asked again)."""
    queue = _storage().annotations.queue_of_run(_managed_run(token).id)
    try:
        if queue is None:  # the run is there: its state says no
            raise Rejected.one("no_queue", http=409)
        name = schemas.load(schemas.NewAnnotator, _json_object())["name"]
        link = _storage().annotations.annotator_link(queue.id, annotator_name(name))
    except Rejected as rejected:
        return _rejected(rejected)
    shared = extensions.link("labelling.page", token=link.token)  # never from Host
    return jsonify(name=link.name, token=link.token, annotator_url=shared), 201


@labelling.get("/a/<token>/item")
def item(token: str) -> ResponseReturnValue:
    """The next item for the link's annotator (or item ``item`` to revise),
    with their own label of it and their progress."""
    try:
        queue, run, annotator = _labeller(token)
        index = request.args.get("item", type=int)
        if index is None:
            index = _storage().annotations.next_item(queue, annotator)
        done = _storage().annotations.annotator_done(queue.id, annotator)
        progress = {"done": done, "total": len(queue.items)}
        if index is None:
            return jsonify(finished=True, progress=progress)
        shown = service().item(run, queue, index)
    except Rejected as rejected:
        return _rejected(rejected)
    own = _storage().annotations.label_of(queue.id, index, annotator)
    label = (
        None
        if own is None
        else {
            "al": own.al,
            "binary": own.binary,
            "dimensions": own.dimensions,
            "comment": own.comment,
            "skipped": own.skipped,
        }
    )
    return jsonify(finished=False, progress=progress, label=label, **shown)


@labelling.post("/a/<token>/label")
def save_label(token: str) -> ResponseReturnValue:
    body = _json_object()
    try:
        queue, _, annotator = _labeller(token)  # the link's name, whatever is sent
        service().label(queue, annotator, body)
    except Rejected as rejected:
        return _rejected(rejected)
    extensions.runs().wake()  # a worker computes the agreement again
    done = _storage().annotations.annotator_done(queue.id, annotator)
    return jsonify(saved=True, progress={"done": done, "total": len(queue.items)})


def _download(lines: Iterator[str], run: Run, suffix: str) -> Response:
    response = Response(stream_with_context(lines), mimetype="application/jsonl")
    name = f"{secure_filename(run.name or run.file_name) or 'run'}.{suffix}"
    response.headers["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@owner.get("/r/<token>/labels.jsonl")
def export_labels(token: str) -> ResponseReturnValue:
    """One row per label (the annotators' names: manage link only)."""
    run = _managed_run(token)
    queue = _storage().annotations.queue_of_run(run.id) or abort(404)
    rows = label_files.label_rows(
        service().upload_path(run), queue, _storage().annotations.labels_of(queue.id)
    )
    lines = (json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    return _download(lines, run, "labels.jsonl")


@owner.get("/r/<token>/labelled.jsonl")
def export_labelled(token: str) -> ResponseReturnValue:
    """The run's input file with ``human`` on every labelled reply."""
    run = _managed_run(token)
    queue = _storage().annotations.queue_of_run(run.id) or abort(404)
    humans = label_files.human_of(queue, _storage().annotations.labels_of(queue.id))
    lines = label_files.labelled_lines(service().upload_path(run), humans)
    return _download(lines, run, "labelled.jsonl")


@api.post("/runs/<token>/labels")
def import_labels_api(token: str) -> ResponseReturnValue:
    """A ``labels.jsonl`` of another run of the same replies (form field
    ``file``): ``{"imported", "unmatched"}``."""
    run = _managed_run(token)
    try:
        form = schemas.LabelsForm
        upload = schemas.load(
            form, schemas.form_data(form, request.form, request.files)
        )
        found = import_labels(service(), run, upload["file"].stream)
    except Rejected as rejected:
        return _rejected(rejected)
    extensions.runs().wake()  # the new queue's agreement, on a worker
    return jsonify(found), 200
