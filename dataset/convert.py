"""Converting a file of another layout (``dataset/importers.py``) into our
JSONL (pure): the records are read from JSON Lines, a JSON array (ShareGPT
exports are one) or CSV (Synthetic-Persona-Chat ships CSV), converted one by
one, and written out; a record that cannot be converted is reported with
its number and the reason, and the others are kept.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from dataset import user_json
from dataset.importers import Options, Skipped, convert_record, detect
from dataset.reader import is_blank
from dataset.user_json import Unreadable

SKIPS_KEPT = 200  # reasons kept for the report; the count goes on


@dataclass
class ConvertReport:
    converted: int = 0
    skipped: int = 0
    reasons: list[tuple[int, str]] = field(default_factory=list)

    def skip(self, number: int, reason: str) -> None:
        self.skipped += 1
        if len(self.reasons) < SKIPS_KEPT:
            self.reasons.append((number, reason))


def read_records(text: str, suffix: str) -> Iterator[tuple[int, object]]:
    """``(record number, record)`` of a file's text: JSONL lines, JSON array
    items or CSV rows (``suffix`` ".csv"), numbered from 1. A JSONL line
    that is not JSON is yielded as a :class:`Skipped`, so the converter
    reports it."""
    if suffix.lower() == ".csv":
        rows = csv.DictReader(io.StringIO(text, newline=""))
        number = 0
        try:
            for number, row in enumerate(rows, start=1):
                yield number, row
        except csv.Error as exc:  # a field over the csv module's limit (131,072)
            yield number + 1, Skipped(f"not read as CSV (line {rows.line_num}): {exc}")
        return
    if text.lstrip().startswith("[") or _one_document(text):
        try:
            records = user_json.loads(text)
        except Unreadable as exc:
            yield 1, Skipped(f"not JSON: {exc}")
            return
        yield from enumerate(_splits(records), start=1)
        return
    for number, line in enumerate(text.split("\n"), start=1):
        if is_blank(line):
            continue
        try:
            record = user_json.loads(line)
        except Unreadable as exc:
            yield number, Skipped(f"not JSON: {exc}")
            continue
        found = _splits(record)
        if found == [record]:
            yield number, record
        else:  # a whole file of splits on one line: records by position
            yield from enumerate(found, start=1)


def _one_document(text: str) -> bool:
    """A JSON object spread over lines (an indented file), not JSON Lines."""
    first = next((line for line in text.split("\n") if not is_blank(line)), "")
    if not first.lstrip().startswith("{"):
        return False
    try:
        user_json.loads(first)
    except Unreadable:
        return True
    return False


def _splits(document) -> list:
    """A file's records: the items of an array, or of every list in an
    object of splits (PersonaChat's ``{"train": [...], "valid": [...]}``),
    in order; any other object is one record."""
    if isinstance(document, list):
        return document
    if isinstance(document, dict) and detect(document) is None:
        lists = [value for value in document.values() if isinstance(value, list)]
        if lists and len(lists) == len(document):
            return [record for split in lists for record in split]
    return [document]


def convert_text(text: str, suffix: str, layout: str, options: Options):
    """``(sessions as JSONL lines, report)`` of a file's text."""
    report, lines = ConvertReport(), []
    for number, record in read_records(text, suffix):
        try:
            if isinstance(record, Skipped):
                raise record
            session = convert_record(layout, record, number, options)
        except Skipped as reason:
            report.skip(number, str(reason))
            continue
        lines.append(json.dumps(session, ensure_ascii=False) + "\n")
        report.converted += 1
    return lines, report


def convert_file(
    source: Path, layout: str, out: Path, options: Options
) -> ConvertReport:
    """Write the sessions converted from ``source`` to ``out`` (JSONL)."""
    text = source.read_text(encoding="utf-8-sig")
    lines, report = convert_text(text, source.suffix, layout, options)
    out.write_text("".join(lines), encoding="utf-8")
    return report


HEAD_BYTES = 1 << 20  # what detection reads of a file


def detect_file(source: Path) -> str | None:
    """The known layout of a file's first records (``detect_head``)."""
    with source.open("rb") as stream:
        return detect_head(stream.read(HEAD_BYTES), source.suffix)


def detect_head(head: bytes, suffix: str) -> str | None:
    """The known layout of the first records in a file's first megabyte,
    when they agree; None when unknown or mixed.

    >>> detect_head(b'[{"conversations": [{"from": "human", "value": "hi"}]}]', ".json")
    'sharegpt'
    """
    text = head[:HEAD_BYTES].decode("utf-8-sig", errors="replace")
    try:
        records = [one for record in _head_records(text, suffix)
                   for one in _splits(record)[:5]]  # fmt: skip
        found = {detect(record) for record in records}
    except csv.Error:
        return None
    return found.pop() if len(found) == 1 else None


def _head_records(head: str, suffix: str, sample: int = 5) -> list:
    """Up to ``sample`` whole records at the start of ``head``."""
    lines = head.split("\n")[:-1] if len(head) >= HEAD_BYTES else head.split("\n")
    if suffix.lower() == ".csv":
        return list(csv.DictReader(io.StringIO("\n".join(lines), newline="")))[:sample]
    stripped = head.lstrip()
    if stripped.startswith("[") or _one_document(head) or _splits_head(stripped):
        # the first object of an array, or of an object's first list of splits
        start = stripped.find("[")
        try:
            first, _ = user_json.raw_decode(stripped[start + 1 :].lstrip())
        except Unreadable:
            return []
        return [first]
    records = []
    for line in lines:
        if not is_blank(line):
            try:
                records.append(user_json.loads(line))
            except Unreadable:
                return []
        if len(records) >= sample:
            break
    return records


def _splits_head(head: str) -> bool:
    """An object of splits too large for the head to hold whole
    (``{"train": [{...`` on one line of many megabytes)."""
    return bool(_SPLITS.match(head)) and _one_document(head)


_SPLITS = re.compile(r'\{\s*"[^"]{1,40}"\s*:\s*\[\s*\{')
