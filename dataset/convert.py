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
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, TextIO

from dataset import user_json
from dataset.importers import Options, Skipped, convert_record, detect
from dataset.reader import is_blank
from dataset.records import one_document, splits, stream_records
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


def convert_stream(
    stream: BinaryIO, suffix: str, layout: str, options: Options, sink: TextIO
) -> ConvertReport:
    """Convert the records of ``stream`` (``dataset/records.py``: one at a
    time) and write the sessions to ``sink`` as JSONL."""
    report = ConvertReport()
    for number, record in stream_records(stream, suffix):
        try:
            if isinstance(record, Skipped):
                raise record
            session = convert_record(layout, record, number, options)
        except Skipped as reason:
            report.skip(number, str(reason))
            continue
        sink.write(json.dumps(session, ensure_ascii=False) + "\n")
        report.converted += 1
    return report


def convert_file(
    source: Path, layout: str, out: Path, options: Options
) -> ConvertReport:
    """Write the sessions converted from ``source`` to ``out`` (JSONL)."""
    with source.open("rb") as stream, out.open("w", encoding="utf-8") as sink:
        return convert_stream(stream, source.suffix, layout, options, sink)


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
                   for one in splits(record)[:5]]  # fmt: skip
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
    if stripped.startswith("[") or one_document(head) or _splits_head(stripped):
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
    return bool(_SPLITS.match(head)) and one_document(head)


_SPLITS = re.compile(r'\{\s*"[^"]{1,40}"\s*:\s*\[\s*\{')
