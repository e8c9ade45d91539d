"""Streaming validation of the JSONL input format (pure).

One session per line. Lines are read with a bounded ``readline``, so neither a
huge file nor a single huge line is held in memory; what validation keeps
grows only with the number of sessions (their ids) and the capped error list.
Every problem names its line, a JSON path, a code and a message. The
per-field rules live in :mod:`dataset.schema`.

Which suites the file can run is asked of the suites themselves: the caller
passes them (anything with a ``name`` and ``supports(session)``), so this
module knows nothing about metrics.

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
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, NoReturn, Protocol, cast

from config import DEFAULTS
from core.problems import Problem
from dataset import replies
from dataset.fields import WARNING_LINES, KeyPath
from dataset.limits import Limits
from dataset.reader import (
    DEFAULT_MAX_LINE_BYTES,
    is_blank,
    normalize_session,
    read_lines,
)
from dataset.schema import SessionChecker, format_path, type_name

ALLOWED_EXTENSIONS = (".jsonl",)
DEFAULT_MAX_ERRORS = DEFAULTS["MAX_VALIDATION_ERRORS"]
_BOM = b"\xef\xbb\xbf"
# A JSON escape of a UTF-16 surrogate; only then can a string hold a lone one.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")


class SuiteLike(Protocol):
    name: str

    def supports(self, session: dict[str, Any]) -> bool: ...


@dataclass
class ValidationReport:
    errors: list[Problem] = field(default_factory=list)
    # one warning per code and path (its first occurrence) and how many lines
    # had it, with the first few: a condition every session has is said once
    warnings: list[Problem] = field(default_factory=list)
    # (code, path) -> [lines that had it, the first WARNING_LINES of them]
    warning_counts: dict[tuple[str, str], list[Any]] = field(default_factory=dict)
    errors_total: int = 0
    sessions: int = 0
    rounds: int = 0
    methods: list[str] = field(default_factory=list)
    # suite name -> sessions that carry its fields, in the order suites were given
    suite_sessions: dict[str, int] = field(default_factory=dict)
    # suite name -> (judge calls, prompt characters) per sample: the cost of
    # the run before it starts (suites that ask the judge say how to estimate),
    # for the protocol validation was given (validate_stream's run_options)
    estimates: dict[str, list[int]] = field(default_factory=dict)
    # (session id, byte start, byte end, rounds) per session, when asked for:
    # the index a run plans its chunks from, without reading the file again
    spans: list[tuple[str, int, int, int]] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return self.errors_total == 0

    @property
    def suites(self) -> list[str]:
        """Suites at least one session can run (the other sessions' rows for
        that suite are reported unscored with the reason)."""
        if not self.valid:
            return []
        return [name for name, count in self.suite_sessions.items() if count]

    def to_dict(self) -> dict[str, Any]:
        errors = [problem.to_dict() for problem in self.errors]
        hidden = self.errors_total - len(self.errors)
        if hidden > 0:
            errors.append(
                Problem.make(None, "", "too_many_errors", count=hidden).to_dict()
            )
        return {
            "valid": self.valid,
            "errors": errors,  # the first MAX_VALIDATION_ERRORS, then "and N more"
            "errors_total": self.errors_total,
            "warnings": [self._grouped(problem) for problem in self.warnings],
            "sessions": self.sessions,
            "methods": self.methods,
            "suites": self.suites,
            "estimate": self.estimate(),
        }

    def _grouped(self, problem: Problem) -> dict[str, Any]:
        key = (problem.code, problem.path)
        count, lines = self.warning_counts.get(key, (1, [problem.line]))
        return {**problem.to_dict(), "count": count, "lines": lines}

    def estimate(self) -> dict[str, dict[str, int]]:
        """Judge calls and prompt characters per suite, for one sample each."""
        if not self.valid:
            return {}
        return {
            name: {"judge_calls": calls, "prompt_chars": chars}
            for name, (calls, chars) in self.estimates.items()
            if name in self.suites
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
        """Grouped by code and path: the first is kept, the others counted
        (with the first ``WARNING_LINES`` line numbers)."""
        key = (problem.code, problem.path)
        counted = self.report.warning_counts.get(key)
        if counted is None:
            self.report.warning_counts[key] = [1, [problem.line]]
            self.report.warnings.append(problem)
            return
        counted[0] += 1
        if len(counted[1]) < WARNING_LINES and problem.line not in counted[1]:
            counted[1].append(problem.line)

    def counted_warning(self, problem: Problem, count: int, lines: list[int]) -> None:
        """A warning the checker counted over the file itself (a method's
        missing replies: known only once every line is read)."""
        self.report.warning_counts[(problem.code, problem.path)] = [count, lines]
        self.report.warnings.append(problem)


def has_allowed_extension(filename: str) -> bool:
    return filename.lower().endswith(ALLOWED_EXTENSIONS)


def validate_file(
    path: str | Path, filename: str | None = None, **options: Any
) -> ValidationReport:
    """Validate a file on disk; ``filename`` is the user's name for it."""
    path = Path(path)
    with path.open("rb") as stream:
        return validate_stream(stream, filename or path.name, **options)


def validate_stream(
    stream: BinaryIO,
    filename: str,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    max_errors: int = DEFAULT_MAX_ERRORS,
    suites: Iterable[SuiteLike] = (),
    limits: Limits | None = None,
    collect_spans: bool = False,
    history_chars: int | None = None,
    run_options: dict[str, Any] | None = None,
) -> ValidationReport:
    """``run_options``: what the estimates read of the run (its protocol
    says which judge modes are asked; none: the default protocol's)."""
    report = ValidationReport(suite_sessions={suite.name: 0 for suite in suites})
    sink = _Collector(report, max_errors)
    if not has_allowed_extension(filename):
        sink.error(Problem.make(None, "", "bad_extension", name=filename))
        return report
    limits = limits or Limits()
    checker = SessionChecker(sink, limits)
    suites = list(suites)
    saw_content = False
    for lineno, text, offset, size in _decoded_lines(stream, max_line_bytes, sink):
        if text is None or is_blank(text):
            continue
        saw_content = True
        session = _parse_object(lineno, text, sink)
        if session is not None:
            report.sessions += 1
            if report.sessions == limits.max_sessions + 1:
                limit = limits.max_sessions
                sink.error(Problem.make(lineno, "", "too_many_sessions", limit=limit))
            if checker.check(lineno, session):
                _count_valid_session(
                    report, session, suites, history_chars, run_options or {}
                )
                if collect_spans:
                    rounds = len(session["rounds"])
                    report.spans.append(
                        (session["session_id"], offset, offset + size, rounds)
                    )
    if not saw_content and report.errors_total == 0:
        sink.error(Problem.make(None, "", "empty_file"))
    elif report.errors_total == 0 and not checker.to_evaluate:
        sink.error(Problem.make(None, "", "no_replies"))  # every one null or blank
    checker.missing_reply_warnings()
    report.methods = list(checker.methods)
    return report


def _count_valid_session(
    report: ValidationReport,
    session: dict[str, Any],
    suites: list[SuiteLike],
    history_chars: int | None,
    run_options: dict[str, Any],
) -> None:
    report.rounds += len(session["rounds"])
    normalize_session(session)
    for suite in suites:
        if suite.supports(session):
            report.suite_sessions[suite.name] += 1
            if getattr(suite, "estimate", None) is not None:
                methods = replies.session_methods(session)
                # it has an estimate (just checked): what replies.estimate reads
                estimating = cast(replies.Estimating, suite)
                calls, chars = replies.estimate(
                    estimating, session, methods, history_chars, run_options
                )
                totals = report.estimates.setdefault(suite.name, [0, 0])
                totals[0] += calls
                totals[1] += chars


def _decoded_lines(
    stream: BinaryIO, limit: int, sink: _Collector
) -> Iterator[tuple[int, str | None, int, int]]:
    """(line number, text or None, byte offset, byte size) of every line."""
    offset = 0
    for lineno, raw, size in read_lines(stream, limit):
        start, offset = offset, offset + size
        if raw is None:
            sink.error(
                Problem.make(lineno, "", "line_too_long", size=size, limit=limit)
            )
            yield lineno, None, start, size
            continue
        if lineno == 1 and raw.startswith(_BOM):
            raw = raw[len(_BOM) :]
            sink.warning(Problem.make(1, "", "bom_removed"))
        try:
            yield lineno, raw.decode("utf-8"), start, size
        except UnicodeDecodeError as exc:
            sink.error(Problem.make(lineno, "", "not_utf8", column=exc.start + 1))
            yield lineno, None, start, size


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not valid JSON")


def _has_lone_surrogate(value: object) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _parse_object(lineno: int, text: str, sink: _Collector) -> dict[str, Any] | None:
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
    if "\\u0000" in text:  # only an escape can put a NUL in a JSON string
        nul = _nul_path(value, ())
        if nul is not None:  # PostgreSQL stores no U+0000, in text or JSON
            sink.error(Problem.make(lineno, format_path(nul), "nul_character"))
            return None
    return value


def _nul_path(value: object, path: KeyPath) -> KeyPath | None:
    """Where the first string (or key) holding U+0000 is, if any."""
    if isinstance(value, str):
        return path if "\x00" in value else None
    items = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else ()
    )
    for key, item in items:
        if isinstance(key, str) and "\x00" in key:
            return (*path, key)
        found = _nul_path(item, (*path, key))
        if found is not None:
            return found
    return None
