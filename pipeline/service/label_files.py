"""Annotation labels as files (issue 30): exported as JSONL (one row per
label), as the run's input file with ``human`` filled, and imported into
another run of the same replies.

* ``labels.jsonl``: ``{"session_id", "round", "method", "response_sha256",
  "annotator", "al", "binary", "dimensions", "comment", "updated_at"}`` per
  label (skips left out). The SHA-256 of the reply text is what an import
  matches on: the same reply in another run (another file, other session
  ids) receives the label.
* ``labelled.jsonl``: the uploaded file, line for line, where each labelled
  reply carries ``human``: the annotators' mean AL and their majority
  binary answer (left out on a tie); ``human`` labels the file carried
  before are left out, so the file holds the queue's labels and only them.
  Re-uploaded, it validates and the judge audit reads these labels as
  file-borne ones (same pairs, so the same ρ, τ and κ).
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path
from statistics import fmean
from typing import TYPE_CHECKING, Any

import dataset
from core.problems import Rejected
from dataset import user_json

if TYPE_CHECKING:
    from store.annotation_models import AnnotationLabel, AnnotationQueue

MAX_IMPORT_LINES = 100_000
Item = tuple[str, int, str]  # (session_id, round, method) of a reply


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _texts(path: str | Path, keys: set[Item]) -> dict[Item, str]:
    """The reply texts of ``keys`` (session_id, round, method) in a file."""
    found: dict[Item, str] = {}
    for session in dataset.iter_sessions(path):
        for round_ in session["rounds"]:
            for method, reply in round_["responses"].items():
                key = (session["session_id"], round_["round"], method)
                if key in keys:
                    found[key] = reply["text"]
    return found


def label_rows(
    path: str | Path, queue: AnnotationQueue, labels: Iterable[AnnotationLabel]
) -> Iterator[dict[str, Any]]:
    """``labels.jsonl`` rows (see the module)."""
    kept = [label for label in labels if not label.skipped]
    texts = _texts(path, {tuple(queue.items[label.item]) for label in kept})
    for label in kept:
        key = tuple(queue.items[label.item])
        session_id, number, method = key
        yield {
            "session_id": session_id,
            "round": number,
            "method": method,
            "response_sha256": text_sha256(texts[key]),
            "annotator": label.annotator,
            "al": label.al,
            "binary": label.binary,
            "dimensions": label.dimensions,
            "comment": label.comment,
            "updated_at": label.updated_at.isoformat(),
        }


def human_of(
    queue: AnnotationQueue, labels: Iterable[AnnotationLabel]
) -> dict[Item, dict[str, Any]]:
    """``{key: {"al": mean, "binary": majority}}`` of the labelled items."""
    by_item: dict[Item, list[AnnotationLabel]] = defaultdict(list)
    for label in labels:
        if not label.skipped:
            by_item[tuple(queue.items[label.item])].append(label)
    found: dict[Item, dict[str, Any]] = {}
    for key, given in by_item.items():
        human: dict[str, Any] = {}
        scores = [g.al for g in given if g.al is not None]
        if scores:
            human["al"] = round(fmean(scores), 6)
        votes = [g.binary for g in given if g.binary is not None]
        if votes and sum(votes) * 2 != len(votes):
            human["binary"] = int(sum(votes) * 2 > len(votes))
        if human:
            found[key] = human
    return found


def labelled_lines(
    path: str | Path, humans: dict[Item, dict[str, Any]]
) -> Iterator[str]:
    """The file's sessions with ``human`` on each labelled reply."""
    for session in dataset.iter_sessions(path):
        for round_ in session["rounds"]:
            for method, reply in round_["responses"].items():
                key = (session["session_id"], round_["round"], method)
                reply.pop("human", None)  # the queue's labels, and only them
                if key in humans:
                    reply["human"] = humans[key]
        yield json.dumps(session, ensure_ascii=False) + "\n"


def matched_labels(
    path: str | Path, lines: Iterable[bytes]
) -> tuple[list[tuple[Item, dict[str, Any]]], int]:
    """``([(key, row)], unmatched)``: the rows of a ``labels.jsonl`` whose
    reply (by SHA-256) is in the file at ``path``."""
    by_hash: dict[str, Item] = {}
    for session in dataset.iter_sessions(path):
        for round_ in session["rounds"]:
            for method, reply in round_["responses"].items():
                found = (session["session_id"], round_["round"], method)
                by_hash.setdefault(text_sha256(reply["text"]), found)
    matched, unmatched = [], 0
    for number, raw in enumerate(lines, start=1):
        if number > MAX_IMPORT_LINES:
            raise Rejected.one(
                "too_many_items", path="file", count=number, limit=MAX_IMPORT_LINES
            )
        if not raw.strip():
            continue
        try:
            row = user_json.loads(raw)
            key = by_hash.get(str(row["response_sha256"]))
            annotator = str(row["annotator"])
        except (ValueError, KeyError, TypeError):
            raise Rejected.one(
                "invalid_label_line", path="file", number=number
            ) from None
        if key is None:
            unmatched += 1
        else:
            matched.append((key, {**row, "annotator": annotator}))
    return matched, unmatched
