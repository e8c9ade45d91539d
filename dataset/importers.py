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
>>> session["session_id"], generated_id("sharegpt", 1)
('c1', 'record-1')

A session keeps its record's own id; a record without one gives ``None``,
and the converter (``dataset/convert.py``) makes ``generated_id`` from the
record's number, as it does for an id an earlier record took, and reports
both.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from core.i18n import LazyText, _l
from dataset.characterbench import characterbench
from dataset.layouts import (
    aloe,
    lenient,
    openai_messages,
    personachat,
    personachat_original,
    sharegpt,
)
from dataset.prefeval import prefeval
from dataset.turns import Options, Skipped

__all__ = [
    "IMPORTERS",
    "Options",
    "Skipped",
    "convert_record",
    "detect",
    "generated_id",
]


CHAT_OPTIONS = ("profile", "personality", "method")


class Importer(NamedTuple):
    convert: Callable[[dict[str, Any], int, Options], dict[str, Any]]
    id_prefix: str  # of the session id made for a record: <prefix>-<number>
    title: str | LazyText  # what the upload page and validate call the layout
    # the options (Options fields) it reads: the upload page's Convert asks these
    options: tuple[str, ...] = CHAT_OPTIONS


IMPORTERS: dict[str, Importer] = {
    "lenient": Importer(
        lenient,
        "record",
        _l(
            "our format with other spellings (0-based or string round numbers, "
            "personas as lists)"
        ),
    ),
    "sharegpt": Importer(sharegpt, "record", "ShareGPT"),
    "openai-messages": Importer(openai_messages, "record", _l("OpenAI chat messages")),
    "personachat": Importer(personachat, "persona-chat", "Synthetic-Persona-Chat"),
    "personachat-original": Importer(
        personachat_original, "personachat", _l("PersonaChat (original release)")
    ),
    "aloe": Importer(aloe, "aloe", "ALOE"),
    # the method is each record's own model; the dimension, the file's name
    "characterbench": Importer(
        characterbench,
        "characterbench",
        "CharacterBench",
        ("profile", "personality", "language"),
    ),
    # the method is the model in the file's name, unless --method names one
    "prefeval": Importer(prefeval, "prefeval", "PrefEval"),
}


def convert_record(
    name: str, record: object, number: int, options: Options
) -> dict[str, Any]:
    """One record as a session; its ``session_id`` is None when the record
    carries none."""
    if not isinstance(record, dict):
        raise Skipped("the record is not an object")
    return IMPORTERS[name].convert(record, number, options)


def generated_id(name: str, number: int) -> str:
    """The session id made for record ``number`` of a file in layout
    ``name`` (stable for the same file)."""
    return f"{IMPORTERS[name].id_prefix}-{number}"


def detect(record: object) -> str | None:
    """The known layout one record is in, if any.

    >>> detect({"messages": [{"role": "user", "content": "hi"}]})
    'openai-messages'
    >>> detect({"session_id": "s", "rounds": []}) is None
    True
    """
    if not isinstance(record, dict):
        return None
    if isinstance(record.get("response_messages"), dict) and "dialogue" in record:
        return "characterbench"
    if "preference" in record and "question" in record:
        return "prefeval"
    if isinstance(record.get("conversations"), list):
        return _conversations_layout(record["conversations"])
    if isinstance(record.get("utterances"), list) and "personality" in record:
        return "personachat-original"
    if isinstance(record.get("messages"), list):
        return "openai-messages"
    if "Best Generated Conversation" in record or "user 1 personas" in record:
        return "personachat"
    if isinstance(record.get("rounds"), list) and _spelled_otherwise(record):
        return "lenient"
    return None


def _conversations_layout(turns: list[Any]) -> str | None:
    """ALOE's rounds (``user`` + ``assistant``) or ShareGPT's turns
    (``from`` + ``value``); None for neither."""
    first = turns[0] if turns else None
    if isinstance(first, dict) and "user" in first and "assistant" in first:
        return "aloe"
    if isinstance(first, dict) and "from" in first:
        return "sharegpt"
    return None


def _spelled_otherwise(record: dict[str, Any]) -> bool:
    """Our layout with one of the spellings ``lenient`` reads."""
    if any(
        isinstance(record.get(k), list) for k in ("user_profile", "user_personality")
    ):
        return True
    numbers = [r.get("round") for r in record["rounds"] if isinstance(r, dict)]
    return bool(numbers) and (
        numbers[0] == 0 or any(isinstance(n, str) for n in numbers)
    )
