"""The rows of missing replies, and the batches a suite runs on
(``dataset/replies.py`` says what a missing reply is and how a session is
cut into groups of methods that replied to the same rounds). Pure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dataset.replies import empty_replies, groups, missing_replies
from metrics import notes
from metrics.rows import ResultRow, result_row

if TYPE_CHECKING:
    from metrics.suite import Suite


def missing_rows(
    sessions: list[dict[str, Any]], suite: Suite, methods: list[str]
) -> list[ResultRow]:
    """One ``missing`` row per reply the sessions lack, and one ``unscored``
    row (``empty_response``) per blank reply, on ``suite``'s headline metric.

    >>> from metrics import registry
    >>> session = {"session_id": "s", "rounds": [{"round": 1, "responses": {"A": {"text": "x"}}}]}
    >>> [(r["method"], r["status"], r["note"]) for r in
    ...  missing_rows([session], registry.get("quality"), ["A", "B"])]
    [('B', 'missing', 'no reply in the file')]
    """
    metric, rows = suite.headline.id, []
    for find, code in (
        (missing_replies, "reply_missing"),
        (empty_replies, "empty_response"),
    ):
        reason = notes.note(code)
        rows += [
            result_row(
                {
                    "session_id": session["session_id"],
                    "round": number,
                    "method": method,
                },
                metric,
                None,
                note=reason,
            )
            for session in sessions
            for number, method in find(session, methods)
        ]
    return rows


def parts(
    sessions: list[dict[str, Any]], methods: list[str]
) -> dict[tuple[str, ...], list[dict[str, Any]]]:
    """The sessions' groups batched by their methods (``{methods: parts}``),
    so a suite runs once per set of methods; complete sessions make one
    batch with every method, in file order."""
    batches: dict[tuple[str, ...], list[dict[str, Any]]] = {}

    for session in sessions:
        for part, group in groups(session, methods):
            batches.setdefault(tuple(group), []).append(part)
    return batches
