"""The replies grid's view model (``templates/replies.html``): every reply
of a run (or of one session) with its scores per metric and judge, each
with its status and reason, filtered and sorted on the server by one
metric, a page at a time; and what the judge was asked and answered
behind a score (``templates/_exchange.html``)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import dataset
from dataset.limits import INT32_MAX
from metrics import registry
from web.presentation.dashboard import finite_number, panel_judges
from web.presentation.paging import decimal, page_number, paged

if TYPE_CHECKING:
    from store import StorageLike
    from store.models import Run
    from store.replies import ReplyKey

PAGE_SIZE = 25
SHOWN_CHARS = 1_500  # of a reply in the grid (the session page has it whole)
ORDERS = ("reply", "high", "low")  # upload order, the metric high or low first


def grid_metrics(run: Run) -> list[str]:
    """The metrics of the run's suites a row is made for (per reply or per
    session), in the suites' order."""
    known = set(registry.names())
    return [
        metric.id
        for name in run.suites
        if name in known
        for metric in registry.get(name).metrics
        if metric.level in ("row", "session")
    ]


def grid_filters(run: Run, args: Mapping[str, str]) -> dict[str, Any]:
    """The query's filters; the metric they apply to defaults to the run's
    first (every line is a reply scored for that metric)."""
    metrics = grid_metrics(run)
    metric = args.get("metric")
    judges = panel_judges(run)
    return {
        "metric": metric if metric in metrics else (metrics[0] if metrics else ""),
        "judge": args.get("judge") if args.get("judge") in judges else None,
        "method": args.get("method") if args.get("method") in run.methods else None,
        "status": args.get("status") or None,
        "session_id": args.get("session_id") or None,
        "value_min": finite_number(args.get("value_min")),
        "value_max": finite_number(args.get("value_max")),
    }


def grid_context(
    storage: StorageLike, run: Run, args: Mapping[str, str], upload: Path
) -> dict[str, Any]:
    filters = grid_filters(run, args)
    order = next((name for name in ORDERS if args.get("order") == name), "reply")
    paging = paged(
        storage.replies.count_reply_lines(run.id, filters),
        page_number(args.get("page")),
        PAGE_SIZE,
    )
    by_value = {"reply": None, "high": True, "low": False}[order]
    lines = storage.replies.reply_lines(
        run.id, filters, paging["offset"], PAGE_SIZE, by_value, run.methods
    )
    keys = [key for key, _ in lines]
    cells: dict[ReplyKey, dict[str, list[dict[str, Any]]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for row in storage.replies.rows_of_replies(run.id, keys):
        key = (row["session_id"], row["round"], row["method"])
        cells[key][row["metric"]].append(row)
    for found in cells.values():
        for metric, rows in found.items():
            found[metric] = once_if_no_judge(metric, rows)
    shown = {m for found in cells.values() for m in found}
    primary = filters["metric"]
    columns = [primary] + [m for m in grid_metrics(run) if m in shown and m != primary]
    texts = reply_texts(storage, run, upload, keys)
    return {
        "run": run,
        "filters": filters,
        "order": order,
        "paging": paging,
        "lines": [
            {
                "key": key,
                "value": value,
                "cells": cells.get(key, {}),
                "texts": texts.get(key),
            }
            for key, value in lines
        ],
        "columns": columns,
        "metric_ids": grid_metrics(run),
        "panel_judges": panel_judges(run),
    }


def once_if_no_judge(metric: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A reply's rows of one metric as the grid shows them. A judge suite
    stores facts no judge gives (the response's length) beside each
    judge's scores, once per judge: shown once, under no judge, with no
    exchange behind them.

    >>> rows = [{"judge": "a", "value": 12.0}, {"judge": "b", "value": 12.0}]
    >>> once_if_no_judge("response_chars", rows)
    [{'judge': '', 'value': 12.0}]
    >>> len(once_if_no_judge("al", rows))
    2
    """
    metric_spec = registry.spec(metric)
    if metric_spec is None or metric_spec.needs_judge:
        return rows
    shown = {(row.get("value"), row.get("status")): row for row in rows}
    return [{**row, "judge": ""} for row in shown.values()]


def reply_texts(
    storage: StorageLike, run: Run, upload: Path, keys: Sequence[ReplyKey]
) -> dict[ReplyKey, dict[str, tuple[str, int]]]:
    """The user message and the reply of each key, read from the stored
    upload (each session's byte range), each cut at ``SHOWN_CHARS``."""
    found: dict[ReplyKey, dict[str, tuple[str, int]]] = {}
    for session_id in dict.fromkeys(key[0] for key in keys):
        span = storage.chunks.session_span(run.id, session_id)
        if span is None:
            continue
        [session] = dataset.read_sessions(upload, *span)
        for round_ in session["rounds"]:
            for method, response in round_["responses"].items():
                message = response.get("user_message") or round_["user_message"]
                found[(session_id, round_["round"], method)] = {
                    "message": cut(message),
                    "reply": cut(response["text"]),
                }
    return found


def cut(text: str | None) -> tuple[str, int]:
    """A text as the grid shows it, and how many characters it leaves out.

    >>> cut("a" * 1501)[1], cut(None)
    (1, ('', 0))
    """
    text = text or ""
    return text[:SHOWN_CHARS], max(0, len(text) - SHOWN_CHARS)


def exchange_context(
    storage: StorageLike, run: Run, args: Mapping[str, str]
) -> dict[str, Any] | None:
    """What the judge was asked and answered for one reply, by one judge,
    for one metric (None when the query names no reply of the run)."""
    # a round no file can hold (dataset/limits.py) is as unknown as any other
    round_ = decimal(args.get("round", "").strip(), INT32_MAX)
    if not round_:
        return None
    key = (args.get("session_id") or "", round_, args.get("method") or "")
    judge, metric = args.get("judge") or "", args.get("metric") or ""
    exchanges = [
        found
        for found in storage.replies.exchanges_of(run.id, key)
        if (not judge or found["judge"] == judge)
        and (not metric or metric in found["metrics"])
    ]
    metric_spec = registry.spec(metric) if metric else None
    return {
        "run": run,
        "key": key,
        "judge": judge,
        "metric": metric,
        "exchanges": exchanges,
        # a fact beside the judge's scores (the response's length): no
        # judge was asked for it, so no exchange is missing
        "judged": metric_spec is None or metric_spec.needs_judge,
    }
