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

from collections.abc import Callable

from dataset.layouts import (
    aloe,
    lenient,
    openai_messages,
    personachat,
    personachat_original,
    sharegpt,
)
from dataset.turns import Options, Skipped

__all__ = ["IMPORTERS", "Options", "Skipped", "convert_record", "detect"]

IMPORTERS: dict[str, Callable[[dict, int, Options], dict]] = {
    "lenient": lenient,
    "sharegpt": sharegpt,
    "openai-messages": openai_messages,
    "personachat": personachat,
    "personachat-original": personachat_original,
    "aloe": aloe,
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


def _conversations_layout(turns: list) -> str | None:
    """ALOE's rounds (``user`` + ``assistant``) or ShareGPT's turns
    (``from`` + ``value``); None for neither."""
    first = turns[0] if turns else None
    if isinstance(first, dict) and "user" in first and "assistant" in first:
        return "aloe"
    if isinstance(first, dict) and "from" in first:
        return "sharegpt"
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
