"""The fields a protocol's criterion or check prompt may show, from one
(session, round, method): the usual ones, the character the reply is
written as (``meta.character``), the criterion's reference
(``meta.reference``; PrefEval's preference) and the file's earlier turns
(``meta.history``) before the method's own rounds. Shared by the alignment
suite's criterion modes and the checks suite (``docs/protocols.md``)."""

from __future__ import annotations

from typing import Any

from metrics.dialogue import FIRST_MESSAGE, user_message

NONE_GIVEN = "(none given)"


def prompt_fields(
    session: dict[str, Any], method: str, index: int, history_text: str | None
) -> dict[str, str]:
    """The fields a criterion mode's template may use (``history_text``:
    the method's own rounds so far, within the run's window)."""
    round_ = session["rounds"][index]
    response = round_["responses"][method]
    meta = _dict(session.get("meta"))
    character = _dict(meta.get("character"))
    own = "" if history_text in (None, FIRST_MESSAGE) else history_text
    context = _context(meta.get("history"), character.get("name"))
    history = "\n".join(part for part in (context, own) if part) or FIRST_MESSAGE
    reference = meta.get("reference")
    return {
        "profile": session["user_profile"],
        "personality": session["user_personality"],
        "history": history,
        "user_message": user_message(round_, response),
        "response": response["text"],
        "character": _character(character),
        "reference": reference.strip()
        if isinstance(reference, str) and reference.strip()
        else NONE_GIVEN,
    }


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _character(character: dict[str, Any]) -> str:
    parts = []
    for label, key in (("Name", "name"), ("Persona", "profile")):
        value = character.get(key)
        if isinstance(value, str) and value.strip():
            joiner = "\n" if key == "profile" else " "
            parts.append(f"{label}:{joiner}{value.strip()}")
    return "\n".join(parts) or NONE_GIVEN


def _context(turns: object, name: object) -> str:
    """A file's earlier turns, each as ``<speaker>: <text>`` (the character
    by its name when it has one)."""
    if not isinstance(turns, list):
        return ""
    who = {
        "user": "User",
        "character": name if isinstance(name, str) and name else "Character",
    }
    lines = []
    for turn in turns:
        if isinstance(turn, dict) and isinstance(turn.get("text"), str):
            said = str(turn.get("speaker") or "?")
            speaker = who.get(said, said)
            lines.append(f"{speaker}: {turn['text']}")
    return "\n".join(lines)


def meta_fields(session: dict[str, Any]) -> dict[str, str]:
    """The fields a criterion or check takes from ``meta`` alone, as
    :func:`prompt_fields` renders them (``history``: the file's earlier
    turns only): what the cost estimate adds to each request naming them.

    >>> meta_fields({"meta": {"character": {"name": "Kit"}}})["character"]
    'Name: Kit'
    """
    meta = _dict(session.get("meta"))
    character = _dict(meta.get("character"))
    reference = meta.get("reference")
    return {
        "character": _character(character),
        "reference": reference.strip()
        if isinstance(reference, str) and reference.strip()
        else NONE_GIVEN,
        "history": _context(meta.get("history"), character.get("name")),
    }
