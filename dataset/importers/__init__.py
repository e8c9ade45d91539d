"""Other tools' dialogue layouts converted to ours (pure; ``docs/importers.md``
gives each field mapping). ``flask --app app convert --from NAME`` runs them.

Every module of this package declares one importer, ``IMPORTER =
Importer(...)``: its name, its converter, how a record in its layout is
recognized (``detect``), its title and the options it reads. The registry
(:data:`IMPORTERS`) finds them; the CLI's ``--from`` choices, the API's
``from`` enum, validate's "This looks like …" and the upload page's list all
read it. Adding an importer is one module here, its test and its section of
``docs/importers.md``.

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

import importlib
import pkgutil
from typing import Any

from core.registry import Registry
from dataset.importer import Importer
from dataset.turns import Options, Skipped

__all__ = [
    "IMPORTERS",
    "Importer",
    "Options",
    "Skipped",
    "convert_record",
    "detect",
    "generated_id",
    "reading",
]


def _discover() -> None:
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        found = getattr(module, "IMPORTER", None)
        if isinstance(found, Importer):
            IMPORTERS.register(found.name, found)


# name -> Importer, in the order of their names
IMPORTERS: Registry[Importer] = Registry(
    "importer", _discover, order=lambda name, _: name
)


def reading(option: str) -> list[str]:
    """The importers that read ``option`` (an ``Options`` field).

    >>> reading("language")
    ['characterbench']
    """
    return [name for name, found in IMPORTERS.items() if option in found.options]


def convert_record(
    name: str, record: object, number: int, options: Options
) -> dict[str, Any]:
    """One record as a session; its ``session_id`` is None when the record
    carries none."""
    if not isinstance(record, dict):
        raise Skipped("the record is not an object")
    return IMPORTERS.get(name).convert(record, number, options)


def generated_id(name: str, number: int) -> str:
    """The session id made for record ``number`` of a file in layout
    ``name`` (stable for the same file)."""
    return f"{IMPORTERS.get(name).id_prefix}-{number}"


def detect(record: object) -> str | None:
    """The known layout one record is in, if any: the first importer, by
    precedence, that recognizes it.

    >>> detect({"messages": [{"role": "user", "content": "hi"}]})
    'openai-messages'
    >>> detect({"session_id": "s", "rounds": []}) is None
    True
    """
    if not isinstance(record, dict):
        return None
    found = sorted(IMPORTERS.entries(), key=lambda i: (i.precedence, i.name))
    return next((i.name for i in found if i.detect(record)), None)
