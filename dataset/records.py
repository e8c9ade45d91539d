"""The records of a file to convert, read as a stream (pure): JSON Lines
line by line, a JSON array item by item, CSV row by row, so converting a
200 MB file holds a record at a time, not the file (a 60 MB array took
1.44 GB when it was decoded and parsed whole). Only an object of splits
(PersonaChat's ``{"train": [...]}``) spread over many lines is read whole.

Each record comes numbered from 1; one that cannot be read comes as a
:class:`~dataset.turns.Skipped` with the reason, so the converter reports it.

>>> import io
>>> [n for n, _ in stream_records(io.BytesIO(b'[{"a": 1}, {"b": 2}]'), ".json")]
[1, 2]
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from typing import Any, BinaryIO, TextIO

from dataset import user_json
from dataset.reader import is_blank
from dataset.turns import Skipped
from dataset.user_json import Unreadable

CHUNK_CHARS = 1 << 20  # read at a time
MAX_RECORD_CHARS = 64 << 20  # one record larger than this is refused
_WHITESPACE_AND_COMMAS = " \t\r\n,"


def stream_records(stream: BinaryIO, suffix: str) -> Iterator[tuple[int, object]]:
    """``(record number, record or Skipped)`` of a binary stream."""
    text = io.TextIOWrapper(stream, encoding="utf-8-sig", newline="")
    try:
        if suffix.lower() == ".csv":
            yield from _csv_rows(text)
            return
        head = text.read(CHUNK_CHARS)
        start = head.lstrip()
        if start.startswith("["):
            yield from _array_items(text, head)
        elif start.startswith("{") and one_document(head):
            yield from _whole_document(head + text.read())
        else:
            yield from _json_lines(text, head)
    finally:
        text.detach()  # the caller's stream stays open


def one_document(text: str) -> bool:
    """A JSON object spread over lines (an indented file), not JSON Lines."""
    first = next((line for line in text.split("\n") if not is_blank(line)), "")
    if not first.lstrip().startswith("{"):
        return False
    try:
        user_json.loads(first)
    except Unreadable:
        return True
    return False


def splits(document: object) -> list[Any]:
    """A file's records: the items of an array, or of every list in an
    object of splits (PersonaChat's ``{"train": [...], "valid": [...]}``),
    in order; any other object is one record."""
    from dataset.importers import detect  # the layouts know their own keys

    if isinstance(document, list):
        return document
    if isinstance(document, dict) and detect(document) is None:
        lists = [value for value in document.values() if isinstance(value, list)]
        if lists and len(lists) == len(document):
            return [record for split in lists for record in split]
    return [document]


def _csv_rows(text: TextIO) -> Iterator[tuple[int, object]]:
    rows = csv.DictReader(text)
    number = 0
    try:
        for number, row in enumerate(rows, start=1):
            yield number, row
    except csv.Error as exc:  # a field over the csv module's limit (131,072)
        yield number + 1, Skipped(f"not read as CSV (line {rows.line_num}): {exc}")


def _json_lines(text: TextIO, head: str) -> Iterator[tuple[int, object]]:
    lines = _lines(head, text)
    for number, line in enumerate(lines, start=1):
        if is_blank(line):
            continue
        try:
            record = user_json.loads(line)
        except Unreadable as exc:
            yield number, Skipped(f"not JSON: {exc}")
            continue
        found = splits(record)
        if found == [record]:
            yield number, record
        else:  # a whole file of splits on one line: records by position
            yield from enumerate(found, start=1)


def _lines(head: str, text: TextIO) -> Iterator[str]:
    """The lines of ``head`` and then of the rest of the stream."""
    rest = io.StringIO(head)
    pending = ""
    for line in rest:
        if line.endswith("\n"):
            yield (pending + line).rstrip("\r\n")
            pending = ""
        else:
            pending += line
    for line in text:
        yield (pending + line).rstrip("\r\n")
        pending = ""
    if pending:
        yield pending


def _whole_document(text: str) -> Iterator[tuple[int, object]]:
    try:
        document = user_json.loads(text)
    except Unreadable as exc:
        yield 1, Skipped(f"not JSON: {exc}")
        return
    yield from enumerate(splits(document), start=1)


def _array_items(text: TextIO, buffer: str) -> Iterator[tuple[int, object]]:
    """The items of a JSON array, one decoded at a time from a window of
    the stream that grows only to hold the item being read."""
    decoder = json.JSONDecoder()
    position, number = buffer.index("[") + 1, 0
    while True:
        while True:  # past the separators, reading more as needed
            while position < len(buffer) and buffer[position] in _WHITESPACE_AND_COMMAS:
                position += 1
            if position < len(buffer):
                break
            more = text.read(CHUNK_CHARS)
            if not more:
                yield number + 1, Skipped("not JSON: the array never ends")
                return
            buffer, position = more, 0
        if buffer[position] == "]":
            return
        try:
            item, end = decoder.raw_decode(buffer, position)
        except RecursionError:
            yield number + 1, Skipped("not JSON: nested too deeply to read")
            return
        except ValueError as exc:  # cut by the window, or not JSON at all
            more = text.read(CHUNK_CHARS)
            if not more or len(buffer) - position > MAX_RECORD_CHARS:
                why = "a record over 64 MB" if more else _reason(exc)
                yield number + 1, Skipped(f"not JSON: {why}")
                return
            buffer, position = buffer[position:] + more, 0
            continue
        number += 1
        yield number, item
        position = end
        if position > CHUNK_CHARS:  # keep the window small
            buffer, position = buffer[position:], 0


def _reason(exc: ValueError) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} (column {exc.colno})"
    return "an integer of more than 4,300 digits" if "digits" in str(exc) else str(exc)
