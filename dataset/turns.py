"""What every chat importer shares (``docs/importers.md``): the options a
user gives, the refusal of a record, and turns made into rounds that hold
something to evaluate (pure)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from core.i18n import _l
from core.problem_words import NO_PROFILE

USER_ROLES = {"human", "user"}
SYSTEM_ROLES = {"system"}


class Skipped(ValueError):
    """A record that cannot become a session; the message says why."""


# Why a record was skipped, naming the field at fault (the CharacterBench and
# PrefEval importers): English on the command line, the reader's language on
# the upload page (the message is made where the record is converted).
REASONS = {
    "not_object": _l("%(field)s: not an object"),
    "missing_object": _l("%(field)s: missing, or not an object"),
    "missing_text": _l("%(field)s: missing, or not text"),
    "missing_empty_text": _l("%(field)s: missing, empty, or not text"),
    "not_text": _l("%(field)s: not text"),
    "empty_reply": _l("%(field)s: empty (nothing to evaluate)"),
    "missing_list": _l("%(field)s: missing, empty, or not a list"),
    "bad_id": _l("%(field)s: missing, or not an integer or text"),
    "off_scale": _l(
        "%(field)s: %(value)s is not a number on %(dimension)s's scale %(low)s–%(high)s"
    ),
    "no_dimension": _l(
        "the file name %(name)s names no CharacterBench dimension "
        "(<dimension>_test.json, e.g. engagement_test.json)"
    ),
    "last_not_user": _l("%(field)s: the last item is not the user's query"),
    "empty_query": _l("%(field)s: the user's query (the last item) is empty"),
    "unknown_speaker": _l(
        "%(field)s: %(value)s is neither the user nor the character (nor their names)"
    ),
    "no_translation": _l("%(field)s: missing (the English version was chosen)"),
    "no_answer": _l(
        "%(field)s: missing, or not text (a benchmark file holds no answer: "
        "convert a generation result file)"
    ),
    "missing_turns": _l("%(field)s: missing, empty, or not an object of turns"),
    "not_turn_object": _l("%(field)s: not an object of user and assistant"),
    "not_numbered": _l("%(field)s: not a numbered turn"),
}


def skipped(code: str, **params: object) -> Skipped:
    """A :class:`Skipped` whose reason is ``REASONS[code]`` with ``params``.

    >>> str(skipped("missing_text", field="response_messages.model"))
    'response_messages.model: missing, or not text'
    """
    return Skipped(REASONS[code] % params)


@dataclass(frozen=True)
class Options:
    method: str = "model"  # the method name of the converted replies
    profile: str = ""  # user_profile when the record has none
    personality: str = ""  # user_personality when the record has none
    language: str = "zh"  # CharacterBench: zh (as released) or en (translation_en)
    source: str = ""  # the file's name: CharacterBench's dimension is in it


def turns_to_rounds(
    turns: Iterable[tuple[str, str | None]], method: str
) -> list[dict[str, Any]]:
    r"""``(role, text)`` turns (role ``user`` or ``assistant``; system turns
    already dropped) to rounds: each user message with the reply after it.
    A user message without one gets a missing reply (``null``); two replies
    in a row are one reply in two messages (joined); replies before the
    first user message answer nothing and are left to the caller
    (:func:`opening`).

    >>> turns_to_rounds([("assistant", "Hi!"), ("user", "a"), ("user", "b"),
    ...     ("assistant", "B"), ("assistant", "C")], "M")  # doctest: +NORMALIZE_WHITESPACE
    [{'round': 1, 'user_message': 'a', 'responses': {'M': None}},
     {'round': 2, 'user_message': 'b', 'responses': {'M': 'B\n\nC'}}]
    """
    rounds: list[dict[str, Any]] = []
    waiting: str | None = None  # a user message not yet answered
    for role, text in turns:
        if role == "user":
            if waiting is not None:
                rounds.append(_round(len(rounds) + 1, waiting, method, None))
            waiting = text or ""
        elif waiting is not None:
            rounds.append(_round(len(rounds) + 1, waiting, method, text))
            waiting = None
        elif rounds and text:  # a second message of the same reply
            earlier = rounds[-1]["responses"][method]
            rounds[-1]["responses"][method] = (
                f"{earlier}\n\n{text}" if earlier else text
            )
    if waiting is not None:
        rounds.append(_round(len(rounds) + 1, waiting, method, None))
    return rounds


def opening(turns: Sequence[tuple[str, str | None]]) -> list[str]:
    """The replies before the first user message (a greeting): no user
    message to answer, so no round; an importer keeps them in ``meta``."""
    found = []
    for role, text in turns:
        if role == "user":
            break
        if text:
            found.append(text)
    return found


def _round(number: int, message: str, method: str, reply: str | None) -> dict[str, Any]:
    return {"round": number, "user_message": message, "responses": {method: reply}}


def own_id(*values: object) -> str | None:
    """A record's own session id: the first of ``values`` that is a
    non-blank string or an integer, as text; None when it has none (the
    converter then makes one from the record number and says so).

    >>> own_id(None, "  ", 7), own_id("user_001_session_001"), own_id({}, True)
    ('7', 'user_001_session_001', None)
    """
    for value in values:
        if isinstance(value, str) and value.strip():
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
    return None


def make_session(
    session_id: str | None,
    profile: str | None,
    options: Options,
    rounds: list[dict[str, Any]],
    personality: str | None = None,
) -> dict[str, Any]:
    """A session of the record's own id (None: the converter makes one)."""
    profile = (profile or "").strip() or options.profile
    if not profile:  # the CLI names --profile, the upload page its field
        raise Skipped(NO_PROFILE)
    check_rounds(rounds)
    personality = personality if personality is not None else options.personality
    return {
        "session_id": session_id,
        "user_profile": profile,
        "user_personality": personality,
        "rounds": rounds,
    }


def check_rounds(rounds: list[dict[str, Any]]) -> None:
    """A session is something to evaluate: every round has a user message
    and some round has a reply. Else the record is not converted (never
    an empty message, nor a session of missing replies only)."""
    if not rounds:
        raise Skipped("no user message or reply")
    for turn in rounds:
        if not str(turn.get("user_message") or "").strip():
            raise Skipped(f"round {turn['round']}: the user message is empty")
    replies = (reply for turn in rounds for reply in turn["responses"].values())
    if not any(isinstance(reply, str) and reply.strip() for reply in replies):
        raise Skipped("no reply to evaluate (every reply is missing or empty)")


def message_text(content: object) -> str | None:
    """A message's content: a string, or OpenAI's list of parts (text kept);
    None for ``null`` (a reply that was not produced)."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            part.get("text", "")
            for part in content
            if isinstance(part, dict) and part.get("type") in (None, "text")
        )
    raise Skipped("a message's content is neither text nor a list of parts")
