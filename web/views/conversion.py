"""``POST /api/v1/convert``: another tool's layout into our JSONL, for the
upload page's "This looks like …; convert?" (``docs/importers.md``). The
converted file goes back to the browser, which checks it like any file."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from flask import Blueprint, Response, current_app, jsonify, request
from flask.typing import ResponseReturnValue
from werkzeug.utils import secure_filename

from core.problem_words import in_reader_language
from core.problems import Rejected
from dataset import convert
from dataset.importers import Options
from translations import translate_problems
from web.security import cross_site, shared_slots
from web.views import schemas

bp = Blueprint("conversion", __name__, url_prefix="/api/v1")
cross_site.protect(bp)  # no CSRF token here, so no other site's page may post


def _rejected(problem: Rejected) -> tuple[Response, int]:
    return jsonify(errors=translate_problems(problem.errors)), 400


@bp.post("/convert")
def convert_upload() -> ResponseReturnValue:
    """The uploaded file (form field ``file``) converted from the layout
    ``from`` (``docs/importers.md``) into our JSONL, as a download, with
    the CLI's options (``profile``, ``personality``, ``method``, ``language``:
    CharacterBench's zh or en; its dimension is the file's name); the counts
    in ``X-Sessions-Converted`` and ``X-Records-Skipped``, the first
    records not converted and why in ``X-Skipped`` (JSON, ASCII)."""
    try:
        form = schemas.forms_for(current_app.config)["ConvertForm"]
        fields = schemas.load(
            form, schemas.form_data(form, request.form, request.files)
        )
    except Rejected as rejected:
        return _rejected(rejected)
    upload, layout = fields["file"], fields["from"]
    options = Options(
        method=fields["method"].strip() or "model",
        profile=fields["profile"].strip(),
        personality=fields["personality"].strip(),
        language=fields["language"],
        source=upload.filename or "",
    )
    # read and written a record at a time: the file is never held whole
    sink = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115 (closed by _chunks)
    slots = current_app.config["CONVERT_SLOTS"]
    try:
        suffix = Path(upload.filename).suffix
        with shared_slots.slot(current_app.instance_path, "convert", slots) as held:
            if not held:  # every process's conversions count: one CPU each
                sink.close()
                problem = Rejected.one("convert_busy", http=503, count=slots)
                return (
                    jsonify(errors=translate_problems(problem.errors)),
                    503,
                    {"Retry-After": "5"},
                )
            report = convert.convert_stream(
                upload.stream, suffix, layout, options, sink
            )
    except UnicodeDecodeError as exc:
        sink.close()
        problem = Rejected.one("not_utf8", path="file", column=exc.start + 1)
        return _rejected(problem)
    if not report.converted:
        sink.close()
        record, reason = report.reasons[0] if report.reasons else (None, "")
        problem = Rejected.one(
            "nothing_converted",
            path="file",
            layout=layout,
            record=record,
            reason=reason,
            skipped=report.skipped,
        )
        return _rejected(problem)
    name = (secure_filename(Path(upload.filename).stem) or "converted") + ".jsonl"
    sink.seek(0)
    response = current_app.response_class(
        _chunks(sink), mimetype="application/jsonl", direct_passthrough=True
    )
    response.headers["Content-Disposition"] = f'attachment; filename="{name}"'
    response.headers["X-Sessions-Converted"] = str(report.converted)
    response.headers["X-Records-Skipped"] = str(report.skipped)
    # session ids made: for records without one, or whose id was taken
    response.headers["X-Ids-Made"] = str(report.generated_count)
    response.headers["X-Ids-Renamed"] = str(report.renamed_count)
    first = report.reasons[:10]
    skipped = [{"record": n, "reason": _reason(why)[:200]} for n, why in first]
    response.headers["X-Skipped"] = json.dumps(skipped)  # ASCII: \u escapes
    return response


def _reason(why: str) -> str:
    """Why a record was skipped, in the reader's language where the reason
    is one the page words for itself (the form field to fill in, not a
    command-line flag: core/problem_words.SKIP_REASONS)."""
    reason: str = in_reader_language({"reason": why})["reason"]
    return reason


def _chunks(sink: IO[str], size: int = 1 << 16) -> Iterator[bytes]:
    """The converted file, streamed out, then deleted."""
    with sink:
        while chunk := sink.read(size):
            yield chunk.encode("utf-8")
