"""Problems: the one shape of every error a user sees (validation, forms,
API, CLI), and the one exception that carries them.

A problem names its line (or None), a JSON path, a code and the parameters of
its message. The message templates live here once, as lazy text with named
placeholders: ``message`` is the English text (logs, CLI, stored data) and
:meth:`Problem.translated` renders the reader's language.

>>> problem = Problem.make(3, "rounds[0].round", "round_below_one")
>>> problem.message
'rounds[0].round: must be an integer >= 1.'
>>> problem.to_dict()["params"]
{'path': 'rounds[0].round'}
>>> Rejected([problem]).status
400
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from core.i18n import LazyText, _l
from core.problem_words import in_reader_language

MESSAGES: dict[str, LazyText] = {
    # the file
    "bad_extension": _l("The file %(name)s does not end in .jsonl."),
    "empty_file": _l("The file holds no sessions."),
    "nothing_to_evaluate": _l(
        "Nothing was evaluated: of the run's rows, %(missing)s are replies missing "
        "in the file, %(not_applicable)s are metrics that do not apply to it and "
        "%(not_configured)s need a judge that is not configured."
    ),
    "no_readable_verdict": _l(
        "No judge reply could be read: the judge was asked, and of the judge "
        "metrics' rows %(unscored)s are unscored (no verdict in a form we read, "
        "asked twice) and %(errors)s are errors. The metrics that need no judge "
        "keep their rows."
    ),
    "no_replies": _l(
        "No replies to evaluate: every reply in the file is missing (null or "
        "absent) or empty."
    ),
    "line_too_long": _l(
        "The line is %(size)s bytes long; the limit is %(limit)s bytes."
    ),
    "not_utf8": _l(
        "The line is not valid UTF-8 (first bad byte at column %(column)s)."
    ),
    "invalid_json": _l("The line is not valid JSON: %(detail)s (column %(column)s)."),
    "not_object": _l("The line must be a JSON object, found %(found)s."),
    "too_many_errors": _l("%(count)s more error(s) not shown."),
    "bom_removed": _l("A UTF-8 byte order mark at the start of the file was ignored."),
    # fields of a session
    "missing_field": _l("%(path)s: required field is missing."),
    "wrong_type": _l("%(path)s: expected %(expected)s, found %(found)s."),
    "empty_value": _l("%(path)s: must not be empty."),
    "round_below_one": _l("%(path)s: must be an integer >= 1."),
    # other tools' spellings of our layout (dataset/importers/lenient.py)
    "round_zero_based": _l(
        "%(path)s: rounds are counted from 0 here; we count from 1. Convert the "
        "file with: flask --app app convert --from lenient FILE --out FIXED.jsonl"
    ),
    "round_as_string": _l(
        "%(path)s: the round number is a string here; we read an integer. Convert "
        "the file with: flask --app app convert --from lenient FILE --out FIXED.jsonl"
    ),
    "annotator_link_needed": _l(
        "This is the annotation queue's own link: labels are given through a "
        "link of your own, which the queue's owner makes for you."
    ),
    "disk_full": _l(
        "The server's disk is full: the file was not stored. Try again later; "
        "nothing of this upload was kept."
    ),
    "storage_full": _l(
        "The server's disk is full: this request could not be completed. Try "
        "again later."
    ),
    "database_unavailable": _l(
        "The database cannot be reached at the moment: try again shortly. Runs "
        "under way resume by themselves once it is back."
    ),
    "storage_unavailable": _l(
        "The server could not store the file: nothing of this upload was kept. "
        "Try again later."
    ),
    "bad_json_body": _l(
        "The request body is not JSON we read (not JSON, nested too deeply, "
        "or a number too long)."
    ),
    "json_only": _l("%(path)s: send a JSON object (Content-Type: application/json)."),
    "unknown_layout": _l(
        "%(path)s: not a layout we convert from; we convert %(layouts)s."
    ),
    "unknown_language": _l(
        "%(path)s: not a language we convert CharacterBench in; we take %(languages)s."
    ),
    "nothing_converted": _l(
        "%(path)s: none of its %(skipped)s records could be converted from "
        "%(layout)s; the first, record %(record)s: %(reason)s"
    ),
    "listed_persona": _l(
        "%(path)s: a list here (as PersonaChat writes personas); we read one "
        "string. Convert the file with: flask --app app convert --from lenient "
        "FILE --out FIXED.jsonl"
    ),
    "negative_latency": _l("%(path)s: must be a number >= 0."),
    "duplicate_session": _l(
        "%(path)s: session id %(session_id)s already used on line %(first_line)s."
    ),
    "round_order": _l(
        "%(path)s: round %(number)s must be greater than the previous round %(previous)s."
    ),
    "replies_missing": _l(
        "%(path)s: %(missing)s of %(total)s replies missing (null or absent); they "
        "are counted apart and never scored."
    ),
    "empty_personality": _l(
        "%(path)s: empty personality; alignment prompts will have no traits."
    ),
    "unknown_field": _l("%(path)s: unknown field, ignored."),
    "human_al_range": _l("%(path)s: must be a number from 0 to 100."),
    "human_binary_value": _l("%(path)s: must be 0 or 1."),
    "human_score_scale": _l(
        "%(path)s: must be two integers, the scale's lowest and highest score "
        "(e.g. [1, 5])."
    ),
    "human_score_range": _l("%(path)s: must be a number from %(low)s to %(high)s."),
    "human_criterion_name": _l(
        "%(path)s: a criterion is named with lower-case letters, digits, - and _ "
        "(at most 40)."
    ),
    "recorded_judge_name": _l(
        "%(path)s: a recorded judge is named with letters, digits and . _ / + - "
        "(at most 48, no @ or :)."
    ),
    # bounds (dataset/limits.py, config.py)
    "too_long": _l("%(path)s: %(length)s characters; the limit is %(limit)s."),
    "too_many_rounds": _l(
        "%(path)s: %(count)s rounds; the limit is %(limit)s per session."
    ),
    "too_many_methods": _l("%(path)s: %(count)s methods; the limit is %(limit)s."),
    "too_many_topics": _l("%(path)s: %(count)s topics; the limit is %(limit)s."),
    "too_many_items": _l("%(path)s: %(count)s items; the limit is %(limit)s."),
    "list_too_long": _l(
        "%(path)s: %(length)s characters in all; the limit is %(limit)s (the list "
        "reaches one judge prompt)."
    ),
    "too_many_sessions": _l(
        "The file holds more than %(limit)s sessions; this line is over the limit."
    ),
    "number_too_large": _l("%(path)s: must be at most %(limit)s."),
    "not_finite": _l("%(path)s: must be a finite number."),
    "nul_character": _l(
        "%(path)s: contains the character U+0000, which cannot be stored."
    ),
    # the request
    "missing_file": _l("Choose a .jsonl file to upload."),
    "upload_expired": _l(
        "The checked file is no longer kept (after an hour, once used, or replaced "
        "by newer checks from your address): choose it again."
    ),
    "keep_refused": _l(
        "The file is valid but was not kept for the run: the space for checked "
        "files (%(limit)s MB) is full. Send the file with the run (the upload page "
        "does so by itself)."
    ),
    "too_large": _l("The file is larger than the %(limit)s MB limit."),
    "samples_out_of_range": _l("%(path)s: must be an integer from 1 to %(maximum)s."),
    "bad_suite": _l("Suites not available for this file: %(suites)s."),
    "bad_option": _l("%(path)s rejected: %(detail)s"),
    # a judge protocol file (metrics/protocol_checks.py)
    "protocol_unknown_key": _l("%(path)s: unknown key in the protocol file."),
    "protocol_missing_key": _l(
        "%(path)s: required key is missing from the protocol file."
    ),
    "protocol_bad_value": _l("%(path)s: %(detail)s"),
    "protocol_toml_syntax": _l("The protocol file is not valid TOML: %(detail)s"),
    "protocol_unknown_protocol": _l(
        "No built-in judge protocol is named %(name)s (built in: %(names)s)."
    ),
    "convert_busy": _l(
        "%(count)s other conversions are running on this server; try again in a "
        "few seconds."
    ),
    # the run
    "queue_unavailable": _l(
        "The evaluation queue is unavailable; nothing was started. Try again shortly."
    ),
    "already_final": _l("The run is already %(status)s."),
    "view_only": _l(
        "This link can only view. Changing or deleting needs the manage link "
        "returned when the run or workspace was created."
    ),
    "unknown_workspace": _l("No workspace has this manage token."),
    # annotation queues (pipeline/service/annotations.py)
    "not_finished_for_labels": _l(
        "The run is %(status)s: people can label its replies once it has finished."
    ),
    "out_of_range": _l("%(path)s: must be a number from %(low)s to %(high)s."),
    "invalid_label_line": _l(
        "%(path)s: line %(number)s is not a label row (JSON with response_sha256 and annotator)."
    ),
    "no_queue": _l(
        "This run has no annotation queue yet: start one before making annotator links."
    ),
    "queue_closed": _l("This annotation queue is closed: it takes no more labels."),
    "no_such_item": _l("%(path)s: this queue has no item %(item)s."),
    "over_daily_budget": _l(
        "This run would make %(estimate)s judge calls; its workspace has "
        "%(left)s of its %(limit)s calls of today (UTC) left. Choose fewer "
        "suites, samples or judges, or run it tomorrow."
    ),
    "daily_budget_used": _l(
        "This workspace has used its %(limit)s judge calls of today (UTC); "
        "new judge calls can be made tomorrow."
    ),
    "over_judge_budget": _l(
        "This run would make %(estimate)s judge calls; the limit is %(limit)s "
        "per run. Choose fewer suites, samples or judges, or split the file."
    ),
    "bad_characters": _l(
        "%(path)s: contains a NUL character or a lone surrogate, which cannot be stored."
    ),
    "api_key_required": _l(
        "This server asks programs for an API key: send Authorization: Bearer <key>."
    ),
    "cross_site": _l(
        "Refused: this request came from another site's page. Use the app's own "
        "pages, or call the API from a program (no browser)."
    ),
    "retry_over_budget": _l(
        "This upload has used its %(limit)s judge calls (the run and its retries "
        "share them); a retry would make more."
    ),
    "bad_limit": _l("%(path)s: %(value)s is not a page size from 1 to %(limit)s."),
    "bad_min_effect": _l(
        "%(path)s: %(value)s is not a minimum effect (a standardized difference dz above 0)."
    ),
    "bad_holm": _l(
        "%(path)s: %(value)s is not a Holm family: metric (within each column, "
        "the default) or table (across every column of a table)."
    ),
    "bad_cursor": _l("%(path)s: not a cursor this API handed out; start without one."),
    "too_many_tags": _l("%(path)s: %(count)s tags; the limit is %(limit)s."),
    # model families (self-preference, docs/input-format.md)
    "family_pair": _l("%(path)s: %(value)s is not a pair name=family."),
    "families_shape": _l(
        '%(path)s: expected {"methods": {name: family}, "judges": {model: family}}.'
    ),
    "family_unknown_method": _l(
        "%(path)s: %(name)s is not a method of the file (its methods: %(known)s)."
    ),
    "family_unknown_judge": _l(
        "%(path)s: %(name)s is not a judge model of the run (its judges: %(known)s)."
    ),
    "family_empty": _l("%(path)s: the family must be a non-empty text."),
    # comparison across runs
    "compare_too_large": _l(
        "These runs hold %(rows)s result rows together; a comparison reads at most "
        "%(limit)s. Compare fewer or smaller runs."
    ),
    "compare_count": _l(
        "Pick between %(low)s and %(high)s runs to compare; %(count)s given."
    ),
    "compare_unknown_run": _l("No run has the link %(token)s."),
    "compare_same_run": _l(
        "The run %(name)s is named twice (a run's view and manage links, and its "
        "id, name the same run): a comparison needs different runs."
    ),
    "compare_not_final": _l(
        "The run %(name)s is %(status)s; only finished runs can be compared."
    ),
    "compare_failed": _l("The comparison could not be computed (%(error)s)."),
    "compare_stale": _l(
        "The worker did not compute this comparison: its runs changed since it "
        "was asked for, or the web server and the worker run different releases "
        "of the metric code. Reload the page; if this message stays, restart "
        "the web server and the workers on one release."
    ),
    "no_shared_sessions": _l(
        "The runs share no session: a comparison pairs items by session_id and "
        "round, so the runs must evaluate some of the same sessions."
    ),
    "retry_not_needed": _l("The run is %(status)s: nothing to retry."),
    "retry_in_progress": _l("A retry of this run is already in progress."),
    "no_judge_configured": _l(
        "No judge is configured on this server (JUDGE_API_URL and JUDGE_MODEL)."
    ),
    "bad_judge_model": _l(
        "The judge model %(model)s is not one this server offers (%(models)s)."
    ),
    "aggregation_failed": _l(
        "Computing the summary failed (%(detail)s); the rows are kept."
    ),
    "upload_unreadable": _l("The uploaded file can no longer be read (%(detail)s)."),
    "planning_failed": _l(
        "Planning the run failed (%(detail)s); nothing was evaluated."
    ),
    # HTTP
    "not_found": _l("This page does not exist."),
    "method_not_allowed": _l("This method is not allowed here."),
    "csrf": _l(
        "The form expired or came from another site. Reload the page and try again."
    ),
    "internal": _l("Something went wrong on our side."),
    # a batch-mode run's batch part (pipeline/batch/steps.py, docs/judge.md)
    "batch_failed": _l(
        "The provider failed a batch: the requests without an answer were sent online."
    ),
    "batch_refused": _l(
        "The provider refused its Batch API (HTTP %(status)s): the run's requests "
        "were sent online."
    ),
    "batch_rounds": _l(
        "Requests that needed the answers of three batches in a row were sent "
        "online, not in a fourth batch."
    ),
    "batch_step_failed": _l(
        "The batch part failed: %(failures)s steps in a row failed, the last with "
        "%(error)s. The requests without an answer were sent online."
    ),
    "batch_output_too_large": _l(
        "The batch part failed: %(error)s (JUDGE_BATCH_OUTPUT_MAX_MB), so it was not "
        "read. The requests without an answer were sent online."
    ),
    "batch_output_over_cap": _l(
        "The batch part failed: the provider's output file is %(size)s bytes, over "
        "the cap of %(cap)s bytes (JUDGE_BATCH_OUTPUT_MAX_MB), so it was not read. "
        "The requests without an answer were sent online."
    ),
    "batch_output_over_cap_unsized": _l(
        "The batch part failed: the provider's output file is over the cap of "
        "%(cap)s bytes (JUDGE_BATCH_OUTPUT_MAX_MB), so it was not read. The "
        "requests without an answer were sent online."
    ),
    "batch_lines_skipped": _l(
        "%(count)s lines of the provider's batch output were skipped: no answer to a "
        "request this run sent (%(kinds)s)."
    ),
    "batch_requests_missing": _l(
        "%(count)s requests had no answer in the provider's batch output and were "
        "sent online."
    ),
    "rate_limited": _l(
        "Too many requests from your address. Try again in %(seconds)s seconds."
    ),
}


def define(code: str, template: LazyText) -> None:
    """Add a message a suite owns (e.g. the problem of one of its options)."""
    existing = MESSAGES.setdefault(code, template)
    if existing != template:
        raise ValueError(f"problem code {code!r} is already defined differently")


@dataclass(frozen=True)
class Problem:
    line: int | None
    path: str
    code: str
    message: str  # English, from the template and the params
    params: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def make(cls, line: int | None, path: str, code: str, **params: Any) -> Problem:
        params = {"path": path, **params}
        return cls(line, path, code, _format(MESSAGES[code].msgid, params), params)

    def translated(self) -> str:
        return translate(self.to_dict())

    def to_dict(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "path": self.path,
            "code": self.code,
            "message": self.message,
            "params": self.params,
        }


def _format(template: str, params: Mapping[str, Any]) -> str:
    shown = {
        k: ", ".join(map(str, v)) if isinstance(v, list) else v
        for k, v in params.items()
    }
    try:
        return template % shown
    except (KeyError, TypeError, ValueError):
        return template


def translate(problem: Mapping[str, Any]) -> str:
    """A problem dict's message in the current language (its English message
    when the code is unknown, e.g. a problem stored by an older release)."""
    template = MESSAGES.get(problem.get("code", ""))
    if template is None:
        message: str = problem.get("message", "")
        return message
    params = in_reader_language(dict(problem.get("params") or {}))
    return _format(str(template), params)


class Rejected(Exception):
    """A request that cannot go ahead; ``status`` is the HTTP status it maps to."""

    def __init__(self, problems: list[Problem], status: int = 400):
        super().__init__(problems[0].message if problems else "rejected")
        self.problems = problems
        self.status = status

    @classmethod
    def one(cls, code: str, path: str = "", http: int = 400, **params: Any) -> Rejected:
        """One problem; ``http`` is the status (params may hold a run's ``status``)."""
        return cls([Problem.make(None, path, code, **params)], http)

    @property
    def errors(self) -> list[dict[str, Any]]:
        return [problem.to_dict() for problem in self.problems]
