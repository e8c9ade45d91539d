"""Reading a run request from a form or multipart API call (shared)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, BinaryIO, TypedDict, cast

from flask import Request, current_app
from marshmallow import Schema
from werkzeug.datastructures import FileStorage, MultiDict

from core.problems import Rejected
from metrics import registry
from pipeline.service.run_request import FAMILY_PARTS, MAX_RUN_NAME_CHARS, family_pairs
from pipeline.service.runs import RunRequest
from web import extensions
from web.presentation.paging import decimal
from web.security import access
from web.views import schemas

if TYPE_CHECKING:
    from core.problems import Problem
    from store.models import Run

MAX_JUDGES = 8  # judge models of one panel


@dataclass(frozen=True)
class Upload:
    """The file part ``file`` that was sent: its bytes and its name."""

    stream: BinaryIO
    filename: str  # never empty


def uploaded_file(files: Mapping[str, FileStorage]) -> Upload:
    upload = files.get("file")
    if upload is None or not upload.filename:
        raise Rejected.one("missing_file", path="file")
    # werkzeug types a part's stream IO[bytes]; it is a binary file (a
    # BytesIO or a spooled temporary file), as the run service reads it
    return Upload(cast("BinaryIO", upload.stream), upload.filename)


MAX_PROTOCOL_BYTES = 64 * 1024


class ProtocolFields(TypedDict, total=False):
    """A run request's protocol: a built-in's name, or a protocol's text."""

    protocol: str
    protocol_text: str


def protocol_fields(
    form: Mapping[str, str], files: Mapping[str, FileStorage]
) -> ProtocolFields:
    """A protocol file part (``protocol_file``, or ``protocol`` as a file),
    else the ``protocol`` field: a built-in name, or a protocol's text."""
    upload = files.get("protocol_file") or files.get("protocol")
    if upload is not None and upload.filename:
        data = upload.stream.read(MAX_PROTOCOL_BYTES + 1)
        if len(data) > MAX_PROTOCOL_BYTES:
            raise Rejected.one(
                "too_long", path="protocol", length=len(data), limit=MAX_PROTOCOL_BYTES
            )
        try:
            return {"protocol_text": data.decode("utf-8")}
        except UnicodeDecodeError as exc:
            raise Rejected.one(
                "not_utf8", path="protocol", column=exc.start + 1
            ) from None
    value = (form.get("protocol") or "").strip()
    if "\n" in value or "=" in value:  # the file's text in a form field
        return {"protocol_text": value[: MAX_PROTOCOL_BYTES + 1]}
    return {"protocol": value[:80]} if value else {}


def run_request(
    form: MultiDict[str, str], files: Mapping[str, FileStorage] | None = None
) -> RunRequest:
    """Suites (repeated or comma-separated), judge model, samples and the
    suites' options (JSON). The judge URL is not accepted from the web:
    pointing our server at arbitrary hosts would be a server-side request
    forgery hole."""
    config = current_app.config
    for key, value in form.items(multi=True):  # names, models, tokens, options
        named = key is not None and storable(key)  # werkzeug: None for name="\"
        if not (named and storable(value)):
            raise Rejected.one("bad_characters", path=key if named else "form")
    settings = schemas.forms_for(config)["RunSettings"]
    schemas.load(settings, schemas.form_data(settings, form, files or {}))
    suites = [
        s.strip()
        for value in form.getlist("suites")
        for s in value.split(",")
        if s.strip()
    ]
    maximum = config["MAX_SAMPLES"]
    samples_raw = form.get("samples", "1").strip() or "1"
    samples = decimal(samples_raw, maximum)  # "²", 5,001 digits: refused
    if not samples:
        raise Rejected.one("samples_out_of_range", path="samples", maximum=maximum)
    models = [
        m.strip()[:200]
        for value in form.getlist("judge_model")
        for m in value.split(",")
        if m.strip()
    ][:MAX_JUDGES]  # repeated or comma-separated: several make a judge panel
    if not config.get("JUDGE_API_URL"):
        models = []  # no judge: the model names would mean nothing
    return RunRequest(
        suites=suites or None,
        judge_model=models[0] if models else None,
        judge_models=models or None,
        samples=samples,
        batch=form.get("batch", "").strip().lower() in ("1", "on", "true", "yes"),
        options=_options_from_form(form),
        client=access.client_id(),
        workspace_id=_workspace_id(form.get("workspace", "").strip()),
        name=form.get("name", "").strip()[:MAX_RUN_NAME_CHARS] or None,
        families=families_from_form(form),
        **protocol_fields(form, files or {}),
    )


def families_from_form(form: Mapping[str, str]) -> dict[str, Any] | None:
    """``families`` (JSON: ``{"methods": {...}, "judges": {...}}``), or
    ``method_families`` and ``judge_families`` (``name=family`` pairs, by
    commas or lines); checked against the file's methods and the run's
    judges once the file is read (``checked_families``)."""
    raw = form.get("families", "").strip()
    if raw:
        try:
            # any JSON, as sent: checked_families refuses another shape
            families: dict[str, Any] | None = json.loads(raw)
        except (ValueError, RecursionError):
            raise Rejected.one("families_shape", path="families") from None
        return families
    found = {
        part: family_pairs(
            form.get(f"{part[:-1]}_families", ""), f"{part[:-1]}_families"
        )
        for part in FAMILY_PARTS
    }
    return found if any(found.values()) else None


def _workspace_id(manage_token: str) -> str | None:
    """The workspace a run joins: only its manage token may add runs."""
    if not manage_token:
        return None
    found = extensions.storage().workspaces.find_workspace(manage_token)
    if found is None:
        raise Rejected.one("unknown_workspace", path="workspace", http=404)
    if not found.can_manage:
        raise Rejected.one("view_only", path="workspace", http=403)
    return found.item.id


def _options_from_form(form: Mapping[str, str]) -> dict[str, Any]:
    """Each suite option present in the form, as JSON. A value that is not
    JSON is passed on as text for the option's validator to reject."""
    options: dict[str, Any] = {}
    for suite in registry.suites():
        for option in suite.options:
            raw = form.get(option.name, "").strip()
            if raw:
                try:
                    options[option.name] = json.loads(raw)
                except (ValueError, RecursionError):  # e.g. 100,000 "["
                    options[option.name] = raw
    return options


def submit(request: Request, new_workspace: bool = False) -> Run:
    """Store, validate, record and enqueue the uploaded run (web form and API):
    the file sent, or the one ``upload_ref`` names (kept when the upload
    page checked it: ``pipeline/service/kept_uploads.py``). ``new_workspace``: a run
    sent without a workspace gets one of its own."""
    service = extensions.runs()
    whole = schemas.forms_for(current_app.config)["RunForm"]
    schemas.load(whole, schemas.form_data(whole, request.form, request.files))
    wanted = replace(
        run_request(request.form, request.files), new_workspace=new_workspace
    )
    ref = request.form.get("upload_ref")
    if ref and not request.files.get("file"):  # checked and kept: sent once
        return service.submit_kept(str(ref), wanted)
    upload = uploaded_file(request.files)
    return service.submit(upload.stream, upload.filename, wanted)


def run_fields(body: object) -> dict[str, Any]:
    """The editable fields of a run from a JSON object: ``name`` (string or
    null), ``tags`` (strings), ``comment`` (string or null). When one is
    wrong, every problem is reported and nothing is applied."""
    if not isinstance(body, dict):
        raise Rejected([_wrong_type("body", "object", body)])
    fields = schemas.load(schemas.RunFields, body)
    for name in ("name", "comment"):
        if name in fields:
            fields[name] = (fields[name] or "").strip() or None
    if "tags" in fields:
        fields["tags"] = sorted({t.strip() for t in fields["tags"] if t.strip()})
    return fields


def storable(text: str) -> bool:
    """Text both databases store: no NUL (PostgreSQL refuses it) and no
    lone surrogate (not UTF-8).

    >>> storable("名前 ok"), storable("a" + chr(0) + "b"), storable(chr(0xD800))
    (True, False, False)
    """
    if "\x00" in text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def workspace_name(
    body: Mapping[str, Any], schema: type[Schema] = schemas.NewWorkspace
) -> str:
    """A workspace's name from a JSON object or a form (``schema``: a new
    workspace's, or a rename's); a name that is no text, or text a
    database cannot store, is a 400."""
    name: str = schemas.load(schema, body).get("name") or ""
    return name[:255].strip()


def _wrong_type(path: str, expected: str, value: object) -> Problem:
    from core.problems import Problem
    from dataset.fields import type_name

    return Problem.make(
        None, path, "wrong_type", expected=expected, found=type_name(value)
    )
