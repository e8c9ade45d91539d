"""Compare finished runs (``GET /api/v1/compare``, the compare page): load
what ``metrics/comparison.py`` needs from the store and the uploads.

Rows stream per run and suite without their JSON details, as when a run is
finalized. Judge agreement needs to know whether two runs judged the same
response: runs of the same file (same sha256) did; otherwise the response
texts of the shared sessions are read from both uploads and compared by
digest, only for methods that two runs with different judges both hold.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from pathlib import Path

import dataset
from core.problems import Rejected
from core.status import FINAL_RUN
from metrics.comparison import Comparison, Shared, Side, compare, run_labels
from store.uploads import upload_path

Item = tuple[str, int | None, str]  # (session, round or None = the session, method)


def compare_runs(storage, runs: list, upload_folder: str, config: dict) -> Comparison:
    """Rejected (400/409) when the runs cannot be compared; see ``problems``."""
    low, high = 2, config["MAX_COMPARED_RUNS"]
    if not low <= len(runs) <= high:
        raise Rejected.one("compare_count", low=low, high=high, count=len(runs))
    for run in runs:
        if run.status not in FINAL_RUN:
            name = run.name or run.file_name
            raise Rejected.one(
                "compare_not_final", http=409, name=name, status=run.status
            )
    rows = sum(_row_count(storage, run) for run in runs)
    if rows > config["MAX_COMPARED_ROWS"]:
        raise Rejected.one(
            "compare_too_large", rows=rows, limit=config["MAX_COMPARED_ROWS"]
        )
    key = tuple((run.id, run.name, run.status, str(run.finished_at)) for run in runs)
    with _LOCK:
        if key in _RECENT:
            _RECENT.move_to_end(key)
            return _RECENT[key]
    found = _compare(storage, runs, upload_folder, config)
    with _LOCK:
        _RECENT[key] = found
        while len(_RECENT) > RECENT_COMPARISONS:
            _RECENT.popitem(last=False)
    return found


# Finished runs do not change (a rename changes the key): the compare page
# and each of its exports read one computation.
RECENT_COMPARISONS = 8
_RECENT: OrderedDict[tuple, Comparison] = OrderedDict()
_LOCK = threading.Lock()


def _row_count(storage, run) -> int:
    """A finished run's rows: its stored status counts, else a COUNT."""
    stored = (run.aggregates or {}).get("status_counts")
    return sum(stored.values()) if stored else storage.count_rows(run.id)


def _compare(storage, runs: list, upload_folder: str, config: dict) -> Comparison:
    shared = shared_items(storage, runs)
    if not shared.sessions:
        raise Rejected.one("no_shared_sessions")
    labels = run_labels([r.name for r in runs], [r.file_name for r in runs])
    sides = [_side(run, label) for run, label in zip(runs, labels, strict=True)]
    texts = _ResponseDigests(runs, sides, shared, upload_folder)

    def rows_of(side: Side, suite):
        detail = suite.summary_details
        for row in storage.iter_rows(side.id, metrics=suite.metrics, detail=detail):
            row["round"] = row["round"] or None
            yield row

    return compare(sides, shared, rows_of, texts.same, config["MAX_COMPARED_METHODS"])


def shared_items(storage, runs: list) -> Shared:
    sessions = set.intersection(*(storage.session_ids(run.id) for run in runs))
    rounds = None
    for run in runs:
        keys = storage.round_keys(run.id)
        if keys:  # a run of session-level suites only does not restrict rounds
            rounds = keys if rounds is None else rounds & keys
    if rounds is not None:
        rounds = {key for key in rounds if key[0] in sessions}
    return Shared(frozenset(sessions), None if rounds is None else frozenset(rounds))


def _side(run, label: str) -> Side:
    judge = run.judge or None
    return Side(
        key=run.token,
        id=run.id,
        label=label,
        methods=tuple(run.methods),
        suites=tuple(run.suites),
        judge=judge,
        facts={
            "name": run.name,
            "file_name": run.file_name,
            "file_sha256": run.file_sha256,
            "status": run.status,
            "sessions": run.sessions,
            "methods": list(run.methods),
            "suites": list(run.suites),
            "judge_model": (judge or {}).get("model"),
            "prompt_versions": (judge or {}).get("prompts"),
        },
    )


class _ResponseDigests:
    """Whether two runs hold the same response text for an item, read lazily
    from their uploads (a missing upload: nothing is known to be the same)."""

    def __init__(self, runs: list, sides: list[Side], shared: Shared, folder: str):
        self.runs = {side.key: run for side, run in zip(sides, runs, strict=True)}
        self.shared, self.folder = shared, folder
        self.digests: dict[str, dict[Item, bytes]] = {}

    def same(self, a: Side, b: Side, method: str, session: str, round_) -> bool:
        run_a, run_b = self.runs[a.key], self.runs[b.key]
        if run_a.file_sha256 == run_b.file_sha256:
            return True
        mine, theirs = self._of(run_a), self._of(run_b)
        item = (session, round_, method)
        return item in mine and mine.get(item) == theirs.get(item)

    def _of(self, run) -> dict[Item, bytes]:
        if run.token not in self.digests:
            self.digests[run.token] = self._read(run)
        return self.digests[run.token]

    def _read(self, run) -> dict[Item, bytes]:
        path = upload_path(self.folder, run.upload_id)
        found: dict[Item, bytes] = {}
        if not Path(path).exists():
            return found
        for session in dataset.iter_sessions(path):
            if session["session_id"] in self.shared.sessions:
                found.update(_session_digests(session))
        return found


def _session_digests(session: dict) -> dict[Item, bytes]:
    """A digest per (round, method) response and per method's whole session."""
    found: dict[Item, bytes] = {}
    whole: dict[str, hashlib._Hash] = {}
    for round_ in session["rounds"]:
        for method, response in round_["responses"].items():
            text = (response.get("text") or "").encode()
            found[(session["session_id"], round_["round"], method)] = hashlib.sha256(
                text
            ).digest()
            whole.setdefault(method, hashlib.sha256()).update(
                f"{round_['round']}:{len(text)}:".encode() + text
            )
    for method, digest in whole.items():
        found[(session["session_id"], None, method)] = digest.digest()
    return found
