"""Converting a file of another layout (``dataset/importers/``) into our
JSONL (pure): the records are read from JSON Lines, a JSON array (ShareGPT
exports are one) or CSV (Synthetic-Persona-Chat ships CSV), converted one by
one, and written out; a record that cannot be converted is reported with
its number and the reason, and the others are kept.

Session ids stay the records' own. A record without one, or whose id an
earlier record took, gets ``<layout prefix>-<record number>``
(``importers.generated_id``), and the report says which:

>>> ids, report = SessionIds("aloe"), ConvertReport()
>>> sessions = [{"session_id": own} for own in ["u1", None, "u1"]]
>>> for number, session in enumerate(sessions, start=1):
...     ids.assign(session, number, report)
>>> [session["session_id"] for session in sessions]
['u1', 'aloe-2', 'aloe-3']
>>> report.generated, report.renamed
([(2, 'aloe-2')], [(3, 'u1', 1, 'aloe-3')])
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from dataset import user_json
from dataset.importers import (
    Options,
    Skipped,
    convert_record,
    detect,
    generated_id,
)
from dataset.reader import is_blank
from dataset.records import one_document, splits, stream_records
from dataset.user_json import Unreadable

SKIPS_KEPT = 200  # reasons kept for the report; the count goes on


@dataclass
class ConvertReport:
    converted: int = 0
    skipped: int = 0
    reasons: list[tuple[int, str]] = field(default_factory=list)
    # sessions whose id was made: (record, id) for a record that has none;
    # (record, its own id, the record that took it first, id) for the others
    generated_count: int = 0
    generated: list[tuple[int, str]] = field(default_factory=list)
    renamed_count: int = 0
    renamed: list[tuple[int, str, int, str]] = field(default_factory=list)

    def skip(self, number: int, reason: str) -> None:
        self.skipped += 1
        if len(self.reasons) < SKIPS_KEPT:
            self.reasons.append((number, reason))

    def made_id(self, number: int, made: str) -> None:
        self.generated_count += 1
        if len(self.generated) < SKIPS_KEPT:
            self.generated.append((number, made))

    def renamed_id(self, number: int, own: str, first: int, made: str) -> None:
        self.renamed_count += 1
        if len(self.renamed) < SKIPS_KEPT:
            self.renamed.append((number, own, first, made))


class SessionIds:
    """Unique session ids over one converted file: a record's own id, else
    one made from its number (reported either way). Ids are kept as
    16-byte digests with the record that took them, so a file of long ids
    costs no more memory than one of short ids."""

    def __init__(self, layout: str):
        self.layout = layout
        self.taken: dict[bytes, int] = {}  # digest of an id -> its record

    def assign(
        self, session: dict[str, Any], number: int, report: ConvertReport
    ) -> None:
        own = session.get("session_id")
        if own is None:
            made = self._unused(generated_id(self.layout, number))
            report.made_id(number, made)
        elif not isinstance(own, str):  # lenient keeps it: validation says why
            return
        elif (first := self.taken.get(_digest(own))) is not None:
            made = self._unused(generated_id(self.layout, number))
            report.renamed_id(number, own, first, made)
        else:
            made = own
        self.taken[_digest(made)] = number
        session["session_id"] = made

    def _unused(self, made: str) -> str:
        """``made``, or ``made-2``, ``made-3``… when a record's own id is it."""
        candidate, k = made, 1
        while _digest(candidate) in self.taken:
            k += 1
            candidate = f"{made}-{k}"
        return candidate


def _digest(session_id: str) -> bytes:
    text = session_id.encode("utf-8", "surrogatepass")
    return hashlib.blake2b(text, digest_size=16).digest()


def convert_stream(
    stream: BinaryIO,
    suffix: str,
    layout: str,
    options: Options,
    sink: TextIO,
    ids: SessionIds | None = None,
) -> ConvertReport:
    """Convert the records of ``stream`` (``dataset/records.py``: one at a
    time) and write the sessions to ``sink`` as JSONL; ``ids``, the session
    ids taken by files written to ``sink`` before (several files in one)."""
    report, ids = ConvertReport(), ids or SessionIds(layout)
    for number, record in stream_records(stream, suffix):
        try:
            if isinstance(record, Skipped):
                raise record
            session = convert_record(layout, record, number, options)
        except Skipped as reason:
            report.skip(number, str(reason))
            continue
        ids.assign(session, number, report)
        sink.write(json.dumps(session, ensure_ascii=False) + "\n")
        report.converted += 1
    return report


def convert_file(
    source: Path, layout: str, out: Path, options: Options
) -> ConvertReport:
    """Write the sessions converted from ``source`` to ``out`` (JSONL)."""
    [(_, report)] = convert_files([source], layout, out, options)
    return report


def convert_files(
    sources: list[Path], layout: str, out: Path, options: Options
) -> list[tuple[Path, ConvertReport]]:
    """The sessions of every file of ``sources`` in one JSONL at ``out``
    (session ids unique over them all), with each file's report. Each file's
    path is the importer's ``Options.source`` (CharacterBench's dimension is
    in its name, PrefEval's method in its folders)."""
    reports, ids = [], SessionIds(layout)
    with out.open("w", encoding="utf-8") as sink:
        for source in sources:
            named = replace(options, source=str(source))
            with source.open("rb") as stream:
                report = convert_stream(stream, source.suffix, layout, named, sink, ids)
            reports.append((source, report))
    return reports


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
        records = [
            one for record in _head_records(text, suffix) for one in splits(record)[:5]
        ]
        found = {detect(record) for record in records}
    except csv.Error:
        return None
    return found.pop() if len(found) == 1 else None


def _head_records(head: str, suffix: str, sample: int = 5) -> list[Any]:
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
