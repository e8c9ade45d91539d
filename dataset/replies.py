"""Missing replies: a method with no reply in a round (``null`` or absent in
the file, ``docs/input-format.md``). Pure; the rows they get are made in
``metrics/replies.py``.

Such an item is never scored: it gets one ``missing`` row per suite (on the
suite's headline metric), and the suites see only the replies there are. A
reply of blank text (``""``) is an answer, but none to score: it gets one
``unscored`` row per suite (note ``empty_response``) and no suite sees it. A
suite reads a session with all its methods at once (a per-session fit, a
merge of slot writes over rounds), so a session whose methods replied to
different rounds is cut into *groups*: the methods that replied to the same
rounds, with a copy of the session holding those rounds only. A method's
dialogue history then holds the rounds it replied to. A session where every
method replied to every round is one group, the session itself, so a file
without missing replies is evaluated exactly as before. A suite that pairs
methods within a round (``Suite.reads_missing``, the pairwise judge) gets
the whole session instead and skips the pairs with a missing side.

>>> session = {"session_id": "s", "rounds": [
...     {"round": 1, "responses": {"A": {"text": "a1"}, "B": {"text": "b1"}}},
...     {"round": 2, "responses": {"A": {"text": "a2"}}}]}
>>> [(len(part["rounds"]), methods) for part, methods in groups(session, ["A", "B"])]
[(2, ['A']), (1, ['B'])]
>>> missing_replies(session, ["A", "B"])
[(2, 'B')]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

# a suite's judge cost of one session per sample: (session, its methods,
# the history window in characters, the run's options) -> (calls, chars)
Estimator = Callable[
    [dict[str, Any], list[str], int | None, dict[str, Any]], tuple[int, int]
]


class Estimating(Protocol):
    """A suite that may say what a session costs (``metrics.suite.Suite``)."""

    @property
    def estimate(self) -> Estimator | None: ...


def replied(round_: dict[str, Any], method: str) -> bool:
    """A reply to score: there, and not empty (blank text is no answer to
    score; it gets an ``unscored`` row, ``empty_replies``)."""
    response = round_["responses"].get(method)
    return response is not None and bool(reply_text(response).strip())


def reply_text(response: object) -> str:
    """The text of a reply, as written (a string) or normalized (an object)."""
    text = response.get("text") if isinstance(response, dict) else response
    return text if isinstance(text, str) else ""


def groups(
    session: dict[str, Any], methods: list[str]
) -> list[tuple[dict[str, Any], list[str]]]:
    """``(session part, its methods)``: the methods that replied to the same
    rounds, with those rounds only; the session itself when every method
    replied to every round. A method that replied to none is in no group."""
    rounds = session["rounds"]
    by_rounds: dict[tuple[int, ...], list[str]] = {}
    for method in methods:
        present = tuple(i for i, round_ in enumerate(rounds) if replied(round_, method))
        if present:
            by_rounds.setdefault(present, []).append(method)
    everything = tuple(range(len(rounds)))
    if list(by_rounds) == [everything] and by_rounds[everything] == methods:
        return [(session, methods)]
    return [
        ({**session, "rounds": [_only(rounds[i], group) for i in present]}, group)
        for present, group in by_rounds.items()
    ]


def _only(round_: dict[str, Any], methods: list[str]) -> dict[str, Any]:
    kept = {m: reply for m, reply in round_["responses"].items() if m in methods}
    return {**round_, "responses": kept}


def missing_replies(
    session: dict[str, Any], methods: list[str]
) -> list[tuple[int, str]]:
    """``(round number, method)`` of every reply the session lacks."""
    return [
        (round_["round"], method)
        for round_ in session["rounds"]
        for method in methods
        if round_["responses"].get(method) is None
    ]


def empty_replies(session: dict[str, Any], methods: list[str]) -> list[tuple[int, str]]:
    """``(round number, method)`` of every reply that is blank text.

    >>> empty_replies({"rounds": [{"round": 1, "responses": {"A": " ", "B": None}}]},
    ...               ["A", "B"])
    [(1, 'A')]
    """
    return [
        (round_["round"], method)
        for round_ in session["rounds"]
        for method in methods
        if round_["responses"].get(method) is not None and not replied(round_, method)
    ]


def estimate(
    suite: Estimating,
    session: dict[str, Any],
    methods: list[str],
    window: int | None,
    options: dict[str, Any],
) -> tuple[int, int]:
    """``suite.estimate`` over the replies there are: ``(calls, chars)``
    for a run with ``options`` (its protocol says which modes are asked)."""
    estimator = suite.estimate
    if estimator is None:
        raise TypeError("the suite has no estimate")
    if getattr(suite, "reads_missing", False):
        return estimator(session, methods, window, options)
    calls = chars = 0
    for part, group in groups(session, methods):
        more_calls, more_chars = estimator(part, group, window, options)
        calls, chars = calls + more_calls, chars + more_chars
    return calls, chars


def session_methods(session: dict[str, Any]) -> list[str]:
    """The methods a session names, in the order they first appear."""
    found: dict[str, None] = {}
    for round_ in session["rounds"]:
        found.update(dict.fromkeys(round_["responses"]))
    return list(found)
