"""The JSONL input format: streaming validation and loading (pure).

One session per line. Validation reads the file line by line with a bounded
``readline`` so neither a huge file nor a single huge line is held in memory;
what it keeps grows only with the number of sessions (their ids) and the capped
error list. Every problem names its line, a JSON path, a code and a message.
The per-field rules live in ``schema.py``; this module owns the reading.

>>> import io
>>> line = b'{"session_id":"u1","user_profile":"22, NYC","user_personality":"shy",'
>>> line += b'"rounds":[{"round":1,"user_message":"Hey!",'
>>> line += b'"responses":{"Base":"Hello!","Ours":"Hey! What\\'s up?"}}]}\\n'
>>> report = validate_stream(io.BytesIO(line), "seed.jsonl")
>>> report.valid, report.sessions, report.methods
(True, 1, ['Base', 'Ours'])
>>> bad = validate_stream(io.BytesIO(b'{"session_id": 1}\\n'), "x.jsonl")
>>> [(e.line, e.path, e.code) for e in bad.errors][:2]
[(1, 'session_id', 'wrong_type'), (1, 'user_profile', 'missing_field')]
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from metrics.registry import SUITES, session_supports
from schema import Problem, SessionChecker, type_name

ALLOWED_EXTENSIONS = (".jsonl",)
DEFAULT_MAX_LINE_BYTES = 8 * 1024 * 1024
DEFAULT_MAX_ERRORS = 200
_BOM = b"\xef\xbb\xbf"
_SKIP_CHUNK = 1 << 20
_JSON_SPACE = " \t\r\n"
_JSON_SPACE_BYTES = _JSON_SPACE.encode()
# A JSON escape of a UTF-16 surrogate; only then can a string hold a lone one.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")


@dataclass
class ValidationReport:
    errors: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    errors_total: int = 0
    sessions: int = 0
    rounds: int = 0
    methods: list[str] = field(default_factory=list)
    suite_sessions: dict[str, int] = field(default_factory=dict)

    @property
    def valid(self) -> bool:
        return self.errors_total == 0

    @property
    def suites(self) -> list[str]:
        """Available suites at least one session can run (the other sessions'
        rows for that suite are reported unscored with the reason)."""
        if not self.valid:
            return []
        return [
            name
            for name, suite in SUITES.items()
            if suite.available and self.suite_sessions.get(name)
        ]

    def to_dict(self) -> dict:
        errors = [problem.to_dict() for problem in self.errors]
        hidden = self.errors_total - len(self.errors)
        if hidden > 0:
            errors.append(Problem.make(None, "", "too_many_errors", count=hidden))
            errors[-1] = errors[-1].to_dict()
        return {
            "valid": self.valid,
            "errors": errors,
            "warnings": [problem.to_dict() for problem in self.warnings],
            "sessions": self.sessions,
            "methods": self.methods,
            "suites": self.suites,
        }


class _Collector:
    """Caps the stored errors while counting all of them."""

    def __init__(self, report: ValidationReport, max_errors: int):
        self.report = report
        self.max_errors = max_errors

    def error(self, problem: Problem) -> None:
        self.report.errors_total += 1
        if len(self.report.errors) < self.max_errors:
            self.report.errors.append(problem)

    def warning(self, problem: Problem) -> None:
        if len(self.report.warnings) < self.max_errors:
            self.report.warnings.append(problem)


def has_allowed_extension(filename: str) -> bool:
    return filename.lower().endswith(ALLOWED_EXTENSIONS)


def validate_file(
    path: str | Path, filename: str | None = None, **limits
) -> ValidationReport:
    """Validate a file on disk; ``filename`` is the user's name for it."""
    path = Path(path)
    with path.open("rb") as stream:
        return validate_stream(stream, filename or path.name, **limits)


def validate_stream(
    stream: BinaryIO,
    filename: str,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    max_errors: int = DEFAULT_MAX_ERRORS,
) -> ValidationReport:
    report = ValidationReport()
    sink = _Collector(report, max_errors)
    if not has_allowed_extension(filename):
        sink.error(Problem.make(None, "", "bad_extension", name=filename))
        return report
    checker = SessionChecker(sink)
    saw_content = False
    for lineno, text in _decoded_lines(stream, max_line_bytes, sink):
        if text is None or is_blank(text):
            continue
        saw_content = True
        session = _parse_object(lineno, text, sink)
        if session is not None:
            report.sessions += 1
            if checker.check(lineno, session):
                _count_valid_session(report, session)
    if not saw_content and report.errors_total == 0:
        sink.error(Problem.make(None, "", "empty_file"))
    report.methods = list(checker.methods)
    return report


def _count_valid_session(report: ValidationReport, session: dict) -> None:
    report.rounds += len(session["rounds"])
    for suite in SUITES.values():
        if session_supports(suite, session):
            report.suite_sessions[suite.name] = (
                report.suite_sessions.get(suite.name, 0) + 1
            )


def is_blank(line: bytes | str) -> bool:
    """Blank by JSON's definition of whitespace (not form feeds or NBSP)."""
    return not line.strip(_JSON_SPACE if isinstance(line, str) else _JSON_SPACE_BYTES)


def _read_lines(
    stream: BinaryIO, limit: int
) -> Iterator[tuple[int, bytes | None, int]]:
    """Yield (line number, raw bytes or None when oversized, byte length).

    ``limit`` applies to the content; the line ending (LF or CRLF) is free.
    """
    lineno = 0
    while raw := stream.readline(limit + 2):
        lineno += 1
        complete = raw.endswith(b"\n") or len(raw) < limit + 2
        size = len(raw)
        while not complete and raw:  # skip the rest of an oversized line
            raw = stream.readline(_SKIP_CHUNK)
            size += len(raw)
            complete = raw.endswith(b"\n") or not raw
        if size - _ending_length(raw) > limit:
            yield lineno, None, size
        else:
            yield lineno, raw, size


def _ending_length(raw: bytes) -> int:
    if raw.endswith(b"\r\n"):
        return 2
    return 1 if raw.endswith(b"\n") else 0


def _decoded_lines(stream: BinaryIO, limit: int, sink: _Collector):
    for lineno, raw, size in _read_lines(stream, limit):
        if raw is None:
            sink.error(
                Problem.make(lineno, "", "line_too_long", size=size, limit=limit)
            )
            yield lineno, None
            continue
        if lineno == 1 and raw.startswith(_BOM):
            raw = raw[len(_BOM) :]
            sink.warning(Problem.make(1, "", "bom_removed"))
        try:
            yield lineno, raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            sink.error(Problem.make(lineno, "", "not_utf8", column=exc.start + 1))
            yield lineno, None


def _reject_constant(name: str):
    raise ValueError(f"{name} is not valid JSON")


def _has_lone_surrogate(value) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _parse_object(lineno: int, text: str, sink: _Collector) -> dict | None:
    try:
        value = json.loads(text, parse_constant=_reject_constant)  # NaN, Infinity
        if _SURROGATE_ESCAPE.search(text) and _has_lone_surrogate(value):
            raise ValueError("lone UTF-16 surrogate escape")
    except json.JSONDecodeError as exc:
        sink.error(
            Problem.make(lineno, "", "invalid_json", detail=exc.msg, column=exc.colno)
        )
        return None
    except (ValueError, RecursionError) as exc:  # huge ints, absurd nesting
        sink.error(
            Problem.make(lineno, "", "invalid_json", detail=str(exc)[:120], column=1)
        )
        return None
    if not isinstance(value, dict):
        sink.error(Problem.make(lineno, "", "not_object", found=type_name(value)))
        return None
    return value


def iter_sessions(path: str | Path, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES):
    """Yield the sessions of an already validated file, responses normalised to
    objects (``{"text": ...}``), so metric code sees one shape."""
    with Path(path).open("rb") as stream:
        for _, raw, _ in _read_lines(stream, max_line_bytes):
            text = raw.decode("utf-8-sig") if raw else ""
            if not is_blank(text):
                yield normalize_session(json.loads(text))


def normalize_session(session: dict) -> dict:
    for round_ in session["rounds"]:
        round_["responses"] = {
            method: {"text": value} if isinstance(value, str) else value
            for method, value in round_["responses"].items()
        }
    return session
