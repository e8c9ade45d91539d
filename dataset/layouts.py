"""One importer per layout (``docs/importers.md`` gives each mapping): a
source record in, one session out, or :class:`Skipped` with the reason.
Nothing is made up: a field the source does not have is taken from an
option the user gives (``--profile``), left empty where our format allows
it (``user_personality``: a warning), or the record is skipped."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from dataset.turns import (
    SYSTEM_ROLES,
    USER_ROLES,
    Options,
    Skipped,
    make_session,
    message_text,
    opening,
    own_id,
    turns_to_rounds,
)


def _chat(
    record: dict[str, Any],
    number: int,
    options: Options,
    messages: object,
    role_key: str,
    text_key: str,
) -> dict[str, Any]:
    """A chat of ``messages`` (dicts with a role and a text) as a session:
    system messages make the profile, the others the rounds."""
    if not isinstance(messages, list) or not messages:
        raise Skipped("no messages")
    system: list[str] = []
    turns: list[tuple[str, str | None]] = []
    for message in messages:
        if not isinstance(message, dict):
            raise Skipped("a message is not an object")
        role, text = (
            str(message.get(role_key, "")).lower(),
            message_text(message.get(text_key)),
        )
        if role in SYSTEM_ROLES:
            system.append(text or "")
        elif role in USER_ROLES:
            turns.append(("user", text or ""))
        else:
            turns.append(("assistant", text))
    profile = record.get("user_profile") or record.get("system") or "\n".join(system)
    session_id = own_id(record.get("session_id"), record.get("id"))
    rounds = turns_to_rounds(turns, options.method)
    personality = record.get("user_personality")
    session = make_session(session_id, profile, options, rounds, personality)
    if greeting := opening(turns):
        session["meta"] = {"opening": greeting}
    return session


def sharegpt(record: dict[str, Any], number: int, options: Options) -> dict[str, Any]:
    return _chat(record, number, options, record.get("conversations"), "from", "value")


def openai_messages(
    record: dict[str, Any], number: int, options: Options
) -> dict[str, Any]:
    found = record.get("metadata")
    metadata: dict[str, Any] = found if isinstance(found, dict) else {}
    merged = {**metadata, **{k: v for k, v in record.items() if k != "metadata"}}
    return _chat(merged, number, options, record.get("messages"), "role", "content")


def personachat(
    record: dict[str, Any], number: int, options: Options
) -> dict[str, Any]:
    """Synthetic-Persona-Chat's columns (CSV or JSON): ``user 1 personas``
    (the user: our profile), ``user 2 personas`` (the replier: kept in
    ``meta``), ``Best Generated Conversation`` ("User 1: …" / "User 2: …"
    lines); personas as one text or a list of sentences."""
    user = _persona(record.get("user 1 personas"))
    replier = _persona(record.get("user 2 personas"))
    conversation = record.get("Best Generated Conversation")
    lines = conversation.splitlines() if isinstance(conversation, str) else conversation
    if not isinstance(lines, list):
        raise Skipped("no 'Best Generated Conversation'")
    turns = _speaker_lines(lines)
    rounds = turns_to_rounds(turns, options.method)
    session = make_session(own_id(record.get("id")), user, options, rounds)
    if replier:
        session["meta"] = {"replier_persona": replier}
    return session


def _speaker_lines(lines: Iterable[object]) -> list[tuple[str, str]]:
    r"""``User 1: …`` / ``User 2: …`` lines as turns; a line without such a
    prefix continues the turn above it (a reply over several lines, such as
    a recipe), and one before any turn is refused.

    >>> _speaker_lines(["User 1: Any recipe?", "User 2: Sure:", "1. Boil", "",
    ...                 "User 1: Thanks"])
    [('user', 'Any recipe?'), ('assistant', 'Sure:\n1. Boil'), ('user', 'Thanks')]
    """
    turns: list[tuple[str, str]] = []
    for line in (str(line).rstrip() for line in lines):
        speaker, colon, text = line.partition(":")
        role = _SPEAKERS.get(speaker.strip().lower()) if colon else None
        if role is not None:
            turns.append((role, text.strip()))
        elif not line.strip():
            continue
        elif turns:
            role, before = turns[-1]
            turns[-1] = (role, f"{before}\n{line.strip()}")
        else:
            raise Skipped(f"the conversation starts without a speaker: {line[:60]!r}")
    return turns


_SPEAKERS = {
    "user 1": "user",
    "user1": "user",
    "user 2": "assistant",
    "user2": "assistant",
}


def _persona(value: object) -> str:
    """Persona sentences (one text, one per line, or a list) as one text."""
    if isinstance(value, list):
        return " ".join(str(item).strip() for item in value if str(item).strip())
    if isinstance(value, str):
        return " ".join(line.strip() for line in value.splitlines() if line.strip())
    return ""


ALOE_METHODS = ("preferred", "rejected")


def aloe(record: dict[str, Any], number: int, options: Options) -> dict[str, Any]:
    """ALOE's conversations file (``docs/importers.md``): ``preferred`` and
    ``rejected`` answer the same message in the same history, so they are
    two methods of one session; ``chosen`` (the reply the conversation went
    on with) and the inferred profile and personality, model outputs, are
    kept in ``meta``. The profile and personality are raw quoted lines. A
    record's own ``session_id`` is kept; ALOE's writer gives none, and then
    the converter makes ``aloe-<record number>`` (``dataset/convert.py``).

    >>> s = aloe({"profile": '"Ana, a nurse."\\n', "personality": '"calm"\\n',
    ...     "conversations": [{"user": "hi", "assistant": {"preferred": "Hi Ana!",
    ...     "rejected": "Hello."}, "chosen": "rejected"}]}, 4, Options())
    >>> s["session_id"], s["user_profile"], s["rounds"][0]["responses"]
    (None, 'Ana, a nurse.', {'preferred': 'Hi Ana!', 'rejected': 'Hello.'})
    >>> s["meta"]["chosen"]
    ['rejected']
    >>> own = {"session_id": "user_001_session_001", "profile": "Ana",
    ...     "conversations": [{"user": "hi", "assistant": {"preferred": "Hi!",
    ...     "rejected": "Hey"}}]}
    >>> aloe(own, 1, Options())["session_id"]
    'user_001_session_001'
    """
    turns = record.get("conversations")
    if not isinstance(turns, list) or not turns:
        raise Skipped("no conversations")
    rounds: list[dict[str, Any]] = []
    kept = ("chosen", "inferred_profile", "inferred_personality")
    meta: dict[str, Any] = {
        "source": "aloe",
        "line": number,
        **{key: [] for key in kept},
    }
    for k, turn in enumerate(turns, start=1):
        replies = turn.get("assistant") if isinstance(turn, dict) else None
        if not isinstance(replies, dict):
            raise Skipped(f"round {k}: no 'assistant' object of preferred and rejected")
        responses = {name: _reply(replies.get(name), k, name) for name in ALOE_METHODS}
        rounds.append(
            {
                "round": k,
                "user_message": _reply(turn.get("user"), k, "user"),
                "responses": responses,
            }
        )
        for key in kept:
            meta[key].append(turn.get(key))
    personality = _raw_line(record.get("personality")) or None
    profile = _raw_line(record.get("profile"))
    own = own_id(record.get("session_id"))
    session = make_session(own, profile, options, rounds, personality)
    session["meta"] = meta
    return session


def _reply(value: object, k: int, name: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise Skipped(f"round {k}: {name} is not text")


def _raw_line(value: object) -> str:
    """A line as ALOE stores it: JSON-quoted text with its newline, decoded;
    plain text as it is."""
    text = value.strip() if isinstance(value, str) else ""
    if len(text) >= 2 and text[0] == text[-1] == '"':
        try:
            decoded = json.loads(text)
        except json.JSONDecodeError:
            return text
        return decoded.strip() if isinstance(decoded, str) else text
    return text


SILENCE = "__ SILENCE __"  # PersonaChat: the other speaker said nothing yet


def personachat_original(
    record: dict[str, Any], number: int, options: Options
) -> dict[str, Any]:
    """PersonaChat (ConvAI2) as released: ``personality`` (the replier's
    persona sentences) and ``utterances``, whose last ``history`` holds the
    dialogue so far, the partner first, and whose ``candidates`` end with
    the true reply. The partner is the user; PersonaChat gives no persona
    of theirs, so ``user_profile`` comes from ``--profile`` (else skipped)."""
    utterances = record.get("utterances")
    last = utterances[-1] if isinstance(utterances, list) and utterances else None
    if not isinstance(last, dict):
        raise Skipped("no utterances")
    history, candidates = last.get("history"), last.get("candidates")
    if not isinstance(history, list) or not isinstance(candidates, list):
        raise Skipped("the last utterance has no history or candidates")
    texts = [str(text) for text in [*history, *candidates[-1:]]]
    turns = [
        ("user" if i % 2 == 0 else "assistant", text)
        for i, text in enumerate(texts)
        if not (i % 2 == 0 and text.strip() == SILENCE)
    ]
    rounds = turns_to_rounds(turns, options.method)
    session = make_session(None, "", options, rounds)  # the converter numbers it
    session["meta"] = {"replier_persona": _persona(record.get("personality"))}
    if greeting := opening(turns):
        session["meta"]["opening"] = greeting
    return session


def lenient(record: dict[str, Any], number: int, options: Options) -> dict[str, Any]:
    """Our own layout as other tools spell it: rounds numbered from 0 or as
    strings (or not at all), and the profile or personality as a list.

    >>> s = lenient({"session_id": "s", "user_profile": ["Ana.", "Nurse."],
    ...     "user_personality": ["calm", "dry"], "rounds": [
    ...     {"round": "0", "user_message": "hi", "responses": {"M": "yo"}}]}, 1, Options())
    >>> s["user_profile"], s["user_personality"], s["rounds"][0]["round"]
    ('Ana. Nurse.', 'calm, dry', 1)
    """
    session = dict(record)
    for key, joiner in (("user_profile", " "), ("user_personality", ", ")):
        if isinstance(session.get(key), list):
            session[key] = joiner.join(str(item).strip() for item in session[key])
    rounds = session.get("rounds")
    if not isinstance(rounds, list):
        raise Skipped("no rounds")
    numbers = [
        _number(r.get("round"), i) if isinstance(r, dict) else i + 1
        for i, r in enumerate(rounds)
    ]
    shift = 1 if numbers and min(numbers) == 0 else 0  # counted from 0
    session["rounds"] = [
        {**r, "round": n + shift} if isinstance(r, dict) else r
        for r, n in zip(rounds, numbers, strict=True)
    ]
    return session


def _number(value: object, index: int) -> int:
    """A round number written as an integer or a string of digits; the
    position (from 1) when it is absent."""
    if value is None:
        return index + 1
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise Skipped(f"round {index + 1}: the round number {value!r} is not a number")
