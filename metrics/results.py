"""The ``personasteer.results/v1`` document (``docs/results-format.md``), pure.

The run header names every suite option the run used (read from the
registry), never the judge's URL or key.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol

from core import usage
from core.status import RowStatus
from metrics import rank_groups, registry
from metrics.rows import finite_json
from metrics.validity import judge_validity, run_context

SCHEMA = "personasteer.results/v1"


class RunRecord(Protocol):
    """The stored run a document describes (``store.models.Run``)."""

    @property
    def id(self) -> str: ...

    @property
    def status(self) -> str: ...

    @property
    def created_at(self) -> datetime: ...

    @property
    def finished_at(self) -> datetime | None: ...

    @property
    def file_name(self) -> str: ...

    @property
    def file_sha256(self) -> str: ...

    @property
    def sessions(self) -> int: ...

    @property
    def rounds(self) -> int: ...

    @property
    def methods(self) -> Sequence[str]: ...

    @property
    def suites(self) -> Sequence[str]: ...

    @property
    def judge(self) -> Mapping[str, Any] | None: ...

    @property
    def options(self) -> Mapping[str, Any] | None: ...

    @property
    def judge_calls(self) -> int: ...

    @property
    def cache_hits(self) -> int: ...

    @property
    def history_truncated(self) -> int | None: ...

    @property
    def prompt_tokens(self) -> int: ...

    @property
    def completion_tokens(self) -> int: ...

    @property
    def aggregates(self) -> dict[str, Any] | None: ...


def _iso(moment: datetime | None) -> str | None:
    """ISO 8601 in UTC; SQLite hands back naive datetimes that were stored as UTC."""
    if moment is None:
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).isoformat()


def suite_options(run: RunRecord) -> dict[str, Any]:
    """The value of every suite option (None when the run did not set it)."""
    stored = run.options or {}
    return {
        option.name: stored.get(option.name)
        for suite in registry.suites()
        for option in suite.options
    }


def judge_models(judge: dict[str, Any] | None) -> list[str]:
    """The judge models of a run header's ``judge`` block: a panel's, or its
    one model; [] without a judge.

    >>> judge_models({"model": "a", "models": ["a", "b"]}), judge_models({"model": "a"})
    (['a', 'b'], ['a'])
    >>> judge_models(None)
    []
    """
    judge = judge or {}
    models = judge.get("models") or ([judge["model"]] if judge.get("model") else [])
    return list(models)


def run_header(run: RunRecord, status_counts: Mapping[str, int]) -> dict[str, Any]:
    """The ``run`` block. Never includes the judge URL's key or options."""
    return {  # no share token: exported files must not grant access to the run
        "id": run.id,
        "status": run.status,
        "created_at": _iso(run.created_at),
        "finished_at": _iso(run.finished_at),
        "file": {
            "name": run.file_name,
            "sha256": run.file_sha256,
            "sessions": run.sessions,
            "rounds": run.rounds,
            "methods": list(run.methods),
        },
        "suites": list(run.suites),
        "options": suite_options(run),
        "judge": run.judge,
        # the model families the run named (self-preference), or null
        "families": getattr(run, "families", None),
        # true when the rows are a copy of an identical finished run's
        # (pipeline/service/reuse.py). Which run is not said: it may be another user's.
        "reused": bool(getattr(run, "reused_from", None)),
        "counts": {
            "judge_calls": run.judge_calls,
            "cache_hits": run.cache_hits,
            "unscored": status_counts.get(RowStatus.UNSCORED, 0),
            "errors": status_counts.get(RowStatus.ERROR, 0),
            "not_configured": status_counts.get(RowStatus.NOT_CONFIGURED, 0),
            "not_applicable": status_counts.get(RowStatus.NOT_APPLICABLE, 0),
            # replies the file does not have (null or absent): each has one
            # missing row per suite (metrics/replies.py)
            "missing": _missing(run, status_counts),
            "missing_rows": status_counts.get(RowStatus.MISSING, 0),
            # judged rows whose prompt left out the oldest turns (history window)
            "history_truncated": run.history_truncated or 0,
            "prompt_tokens": run.prompt_tokens,
            "completion_tokens": run.completion_tokens,
        },
    }


# Suite notes that say what a value rests on, not why it is null: they do
# not replace the engine's note of the same value (panel_common_items).
RESTS_ON = frozenset({"al_sparse_rounds", "bt_resamples_left_out"})


def summary_notes(
    aggregates: dict[str, Any] | None,
) -> dict[str, dict[str, dict[str, Any]]]:
    """``{method: {summary id: {code, params}}}``: why a summary value is
    null, or what it rests on. The engine's notes (a panel's items) and each
    suite's own, which travel in its panel's ``notes`` (AL R² through two
    rounds, a Bradley–Terry separation) and win: they say why the suite
    left the value null.

    >>> summary_notes({"summary_notes": {"M": {"a": {"code": "x"}}},
    ...                "panels": {"s": {"notes": {"M": {"b": {"code": "y"}}}}}})
    {'M': {'a': {'code': 'x'}, 'b': {'code': 'y'}}}
    """
    aggregates = aggregates or {}
    found = {
        method: dict(said)
        for method, said in (aggregates.get("summary_notes") or {}).items()
    }
    for panel in (aggregates.get("panels") or {}).values():
        for method, said in ((panel or {}).get("notes") or {}).items():
            mine = found.setdefault(method, {})
            for key, note in said.items():
                if key in mine and note.get("code") in RESTS_ON:
                    continue  # the engine's note of a panel value stays
                mine[key] = note
    return found


def not_asked(aggregates: dict[str, Any] | None) -> int:
    """Rows of what the run's judge protocol never asks (a dimension, a
    verdict mode: note ``protocol_lacks``). They are ``not_applicable`` by
    the protocol's design, not because a metric could not apply to an item,
    so counts show them apart (0 for runs aggregated before ``not_scored``).

    >>> not_asked({"not_scored": {"alignment": [
    ...     {"code": "protocol_lacks", "rows": 40}, {"code": "missing_field", "rows": 3}]}})
    40
    """
    causes = (aggregates or {}).get("not_scored") or {}
    return sum(
        cause.get("rows") or 0
        for found in causes.values()
        for cause in found
        if cause.get("code") == "protocol_lacks"
    )


def _missing(run: RunRecord, status_counts: Mapping[str, int]) -> int:
    """Counted when the run was summarized, else its rows / suites."""
    counted = (getattr(run, "aggregates", None) or {}).get("missing_replies")
    return (
        counted if counted is not None else missing_replies(status_counts, run.suites)
    )


def missing_replies(status_counts: Mapping[str, int], suites: Sequence[str]) -> int:
    """Replies missing in the file, from their rows: one per suite each (a
    run in progress; a final one counts them, ``aggregates.missing_replies``).

    >>> missing_replies({"missing": 76}, ["alignment", "quality", "style", "slots"])
    19
    """
    return status_counts.get(RowStatus.MISSING, 0) // max(len(suites), 1)


def tidy_row(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "session_id": row["session_id"],
        "round": row["round"] or None,
        "method": row["method"],
        "metric": row["metric"],
        "value": finite_json(row["value"]),  # an earlier release could store inf
        "status": row["status"],
        "note": row["note"],
        # the note's code and parameters (metrics/notes.py), for translating
        "note_code": row.get("note_code"),
        "note_params": row.get("note_params"),
        # the judge model that made the row ("" when no judge made it)
        "judge": row.get("judge") or "",
    }


def judge_usage(run: RunRecord, used: Mapping[str, dict[str, int]]) -> dict[str, Any]:
    """``{model: {calls, cached, prompt_tokens, cached_tokens,
    completion_tokens, reasoning_tokens, reasks, ..., batch_*, cached_share,
    cost_usd, cost_note, cached_price, batch_cost_usd, batch_cost_note,
    output}}``: what each judge used, the cost at the prices recorded with
    the run (null without a price, ``core.usage.priced``), and how it
    answered (``core.usage.output_mode``).

    >>> class Run: judge = {"prices": {"m": {"input": 2.0, "output": 8.0}}}
    >>> found = judge_usage(Run(), {"m": {"calls": 2, "prompt_tokens": 1000,
    ...     "cached_tokens": 200, "completion_tokens": 500, "structured": 2}})["m"]
    >>> found["cost_usd"], found["cached_tokens"], found["cached_share"]
    (0.006, 200, 0.2)
    """
    prices = (run.judge or {}).get("prices") or {}
    shown = {}
    for model, counts in used.items():
        fields = {name: int(counts.get(name, 0)) for name in USAGE_SHOWN}
        shown[model] = {
            **fields,
            **usage.priced(fields, prices.get(model)),
            "output": usage.output_mode(counts),
        }
    return shown


USAGE_SHOWN = (
    "calls",
    "cached",
    "prompt_tokens",
    "cached_tokens",
    "completion_tokens",
    "reasoning_tokens",
    "reasks",
    "structured",
    "structured_ignored",
    "batch_calls",
    "batch_prompt_tokens",
    "batch_cached_tokens",
    "batch_completion_tokens",
    "paced_ms",
)


def head(
    run: RunRecord, status_counts: Mapping[str, int], used: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The document without its rows: small whatever the run's size (the
    summary, curves and comparisons are stored at finalize); ``used`` is the
    run's judge usage per model (``store.progress.judge_usage``)."""
    aggregates = finite_json(run.aggregates or {})  # earlier releases stored inf
    spent = judge_usage(run, used or {})
    header = run_header(run, status_counts)
    # how each judge answered: structured output, or the text grammar
    header["structured_output"] = {
        model: found["output"] for model, found in spent.items()
    }
    said = summary_notes(aggregates)
    ranked, rank_notes = rank_groups.ranks(
        aggregates, list(run.methods), list(run.suites), said
    )
    return {
        "schema": SCHEMA,
        "run": header,
        "judge_usage": spent,
        "summary": aggregates.get("summary", {}),
        # {method: {metric: {code, params}}}: why a summary value is null
        "summary_notes": said,
        # {method: {metric: rank | null}}: rank groups (metrics/rank_groups.py)
        "ranks": ranked,
        # {method: {metric: {code, params}}}: why a rank is null
        "rank_notes": rank_notes,
        "curves": aggregates.get("curves", {}),
        "comparisons": aggregates.get("comparisons", []),
        "judge_validity": judge_validity(
            aggregates.get("judge_validity") or {},
            list(run.suites),
            (run.judge or {}).get("model"),
            run_context(run),
        ),
    }


def build(
    run: RunRecord,
    rows: Iterable[dict[str, Any]],
    status_counts: Mapping[str, int],
    used: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The whole document in memory: for small runs and tests. Anything that
    serves or writes a run's results uses :func:`json_chunks`."""
    document = head(run, status_counts, used)
    return {**document, "rows": [tidy_row(row) for row in rows]}


def json_chunks(
    document: dict[str, Any],
    rows: Iterable[dict[str, Any]],
    indent: int | None = None,
    batch: int = 500,
) -> Iterator[str]:
    """``document`` with ``"rows"`` (tidy rows, one per line) appended, as
    JSON text in pieces: rows are encoded as they arrive, so a run of any
    size is written or served in constant memory.

    >>> text = "".join(json_chunks({"schema": "s"}, iter([ROW, ROW]), batch=1))
    >>> json.loads(text)["rows"][1]["metric"], text.count("\\n")
    ('al', 3)
    >>> json.loads("".join(json_chunks({}, [])))
    {'rows': []}
    """
    yield json_opening(document, indent)
    yield from json_rows(rows, batch)


def json_opening(document: dict[str, Any], indent: int | None = None) -> str:
    """The document up to the opening of its ``"rows"`` list (which
    :func:`json_rows` continues and closes)."""
    opening = json.dumps(document, ensure_ascii=False, allow_nan=False, indent=indent)
    return opening[:-1].rstrip() + (", " if document else "") + '"rows": ['


def json_rows(rows: Iterable[dict[str, Any]], batch: int = 500) -> Iterator[str]:
    """The rows of a document, one per line, and its end: the rows do not
    depend on the rest, so they can be encoded before the rest is known."""
    # one encoder for every row: json.dumps with options builds one per call
    encode_row = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode
    separator, pending = "\n", []
    for row in rows:
        pending.append(separator + encode_row(tidy_row(row)))
        separator = ",\n"
        if len(pending) >= batch:
            yield "".join(pending)
            pending.clear()
    yield "".join(pending) + "\n]}"


ROW = {
    "session_id": "s",
    "round": 1,
    "method": "M",
    "metric": "al",
    "value": 50.0,
    "status": "ok",
    "note": None,
}
