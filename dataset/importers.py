"""Other tools' dialogue layouts converted to ours (pure; ``docs/importers.md``
gives each field mapping). ``flask --app app convert --from NAME`` runs them.

Each importer turns one source record into one session, or raises
:class:`Skipped` with the reason (the converter reports it with the record's
number and goes on). Nothing is made up: a field the source does not have
is taken from an option the user gives (``--profile``), or left empty where
our format allows it (``user_personality``: a warning), or the record is
skipped.

>>> record = {"id": "c1", "conversations": [
...     {"from": "system", "value": "Ana, 30, nurse"},
...     {"from": "human", "value": "Hi"}, {"from": "gpt", "value": "Hello Ana"},
...     {"from": "human", "value": "Bye"}]}
>>> session = convert_record("sharegpt", record, 1, Options(method="M"))
>>> session["user_profile"], [(r["round"], r["responses"]) for r in session["rounds"]]
('Ana, 30, nurse', [(1, {'M': 'Hello Ana'}), (2, {'M': None})])
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

USER_ROLES = {"human", "user"}
SYSTEM_ROLES = {"system"}


class Skipped(ValueError):
    """A record that cannot become a session; the message says why."""


@dataclass(frozen=True)
class Options:
    method: str = "model"  # the method name of the converted replies
    profile: str = ""  # user_profile when the record has none
    personality: str = ""  # user_personality when the record has none


def turns_to_rounds(turns: Iterable[tuple[str, str | None]], method: str) -> list[dict]:
    """``(role, text)`` turns (role ``user``, ``assistant`` or ``system``,
    already dropped) to rounds: each user message with the reply after it;
    a user message without one gets a missing reply (``null``), a reply
    without a user message before it an empty user message.

    >>> turns_to_rounds([("assistant", "Hi!"), ("user", "a"), ("user", "b"),
    ...                  ("assistant", "B")], "M")  # doctest: +NORMALIZE_WHITESPACE
    [{'round': 1, 'user_message': '', 'responses': {'M': 'Hi!'}},
     {'round': 2, 'user_message': 'a', 'responses': {'M': None}},
     {'round': 3, 'user_message': 'b', 'responses': {'M': 'B'}}]
    """
    rounds: list[dict] = []
    waiting: str | None = None  # a user message not yet answered
    for role, text in turns:
        if role == "user":
            if waiting is not None:
                rounds.append(_round(len(rounds) + 1, waiting, method, None))
            waiting = text
        else:
            rounds.append(_round(len(rounds) + 1, waiting or "", method, text))
            waiting = None
    if waiting is not None:
        rounds.append(_round(len(rounds) + 1, waiting, method, None))
    return rounds


def _round(number: int, message: str, method: str, reply: str | None) -> dict:
    return {"round": number, "user_message": message, "responses": {method: reply}}


def _session(session_id, profile, options: Options, rounds, personality=None) -> dict:
    profile = (profile or "").strip() or options.profile
    if not profile:
        raise Skipped(
            "no system message or persona to use as user_profile (give --profile)"
        )
    if not rounds:
        raise Skipped("no user message or reply")
    personality = personality if personality is not None else options.personality
    return {
        "session_id": str(session_id),
        "user_profile": profile,
        "user_personality": personality,
        "rounds": rounds,
    }


def _text(content) -> str | None:
    """A message's content: a string, or OpenAI's list of parts (text kept);
    None for ``null`` (a reply that was not produced)."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            part.get("text", "") for part in content
            if isinstance(part, dict) and part.get("type") in (None, "text")
        )  # fmt: skip
    raise Skipped("a message's content is neither text nor a list of parts")


def _chat(record, number, options, messages, role_key, text_key) -> dict:
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
            _text(message.get(text_key)),
        )
        if role in SYSTEM_ROLES:
            system.append(text or "")
        elif role in USER_ROLES:
            turns.append(("user", text or ""))
        else:
            turns.append(("assistant", text))
    profile = record.get("user_profile") or record.get("system") or "\n".join(system)
    session_id = record.get("session_id") or record.get("id") or f"record-{number}"
    rounds = turns_to_rounds(turns, options.method)
    personality = record.get("user_personality")
    return _session(session_id, profile, options, rounds, personality)


def sharegpt(record: dict, number: int, options: Options) -> dict:
    return _chat(record, number, options, record.get("conversations"), "from", "value")


def openai_messages(record: dict, number: int, options: Options) -> dict:
    found = record.get("metadata")
    metadata: dict = found if isinstance(found, dict) else {}
    merged = {**metadata, **{k: v for k, v in record.items() if k != "metadata"}}
    return _chat(merged, number, options, record.get("messages"), "role", "content")


def personachat(record: dict, number: int, options: Options) -> dict:
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
    turns = []
    for line in (str(line).strip() for line in lines):
        speaker, _, text = line.partition(":")
        if speaker.strip().lower() in ("user 1", "user1"):
            turns.append(("user", text.strip()))
        elif speaker.strip().lower() in ("user 2", "user2"):
            turns.append(("assistant", text.strip()))
    session = _session(record.get("id") or f"persona-chat-{number}", user, options,
                       turns_to_rounds(turns, options.method))  # fmt: skip
    if replier:
        session["meta"] = {"replier_persona": replier}
    return session


def _persona(value) -> str:
    """Persona sentences (one text, one per line, or a list) as one text."""
    if isinstance(value, list):
        return " ".join(str(item).strip() for item in value if str(item).strip())
    if isinstance(value, str):
        return " ".join(line.strip() for line in value.splitlines() if line.strip())
    return ""


def lenient(record: dict, number: int, options: Options) -> dict:
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
    numbers = [_number(r.get("round"), i) if isinstance(r, dict) else i + 1
               for i, r in enumerate(rounds)]  # fmt: skip
    shift = 1 if numbers and min(numbers) == 0 else 0  # counted from 0
    session["rounds"] = [
        {**r, "round": n + shift} if isinstance(r, dict) else r
        for r, n in zip(rounds, numbers, strict=True)
    ]
    return session


def _number(value, index: int) -> int:
    """A round number written as an integer or a string of digits; the
    position (from 1) when it is absent."""
    if value is None:
        return index + 1
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise Skipped(f"round {index + 1}: the round number {value!r} is not a number")


IMPORTERS: dict[str, Callable[[dict, int, Options], dict]] = {
    "lenient": lenient,
    "sharegpt": sharegpt,
    "openai-messages": openai_messages,
    "personachat": personachat,
}


def convert_record(name: str, record, number: int, options: Options) -> dict:
    if not isinstance(record, dict):
        raise Skipped("the record is not an object")
    return IMPORTERS[name](record, number, options)


def detect(record) -> str | None:
    """The known layout one record is in, if any.

    >>> detect({"messages": [{"role": "user", "content": "hi"}]})
    'openai-messages'
    >>> detect({"session_id": "s", "rounds": []}) is None
    True
    """
    if not isinstance(record, dict):
        return None
    if isinstance(record.get("conversations"), list):
        return "sharegpt"
    if isinstance(record.get("messages"), list):
        return "openai-messages"
    if "Best Generated Conversation" in record or "user 1 personas" in record:
        return "personachat"
    if isinstance(record.get("rounds"), list) and _spelled_otherwise(record):
        return "lenient"
    return None


def _spelled_otherwise(record: dict) -> bool:
    """Our layout with one of the spellings ``lenient`` reads."""
    if any(
        isinstance(record.get(k), list) for k in ("user_profile", "user_personality")
    ):
        return True
    numbers = [r.get("round") for r in record["rounds"] if isinstance(r, dict)]
    return bool(numbers) and (
        numbers[0] == 0 or any(isinstance(n, str) for n in numbers)
    )
