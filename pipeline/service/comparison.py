"""Compare finished runs (``GET /api/v1/compare``, the compare page and its
exports): computed once on a worker, stored, and read back by every request.

A request checks what is cheap (how many runs, finished, how many rows),
then reads the stored comparison of the runs. When there is none it records
one (``Storage.request_comparison``, exactly once) and wakes the dispatcher,
which hands it to a worker as it hands out chunks (and again if that worker
dies). The request waits at most ``COMPARE_WAIT_S`` for it: a web thread is never held longer,
and a larger comparison answers "computing" until a worker has stored it.
A workspace's page asks ahead for the comparisons of its newest finished
runs (:func:`compare_ahead`), so the first open of one is a read.
The key digests each run's id, name, status and end, so a rename or a retry
asks for a new comparison; deleting a run deletes the comparisons it is in.

The worker (:func:`compute`) streams rows per run and suite without their
JSON details, as when a run is finalized. Judge agreement needs to know
whether two runs judged the same response: runs of the same file (same
sha256) did; otherwise the response texts of the shared sessions are read
from both uploads and compared by digest, only for methods that two runs
with different judges both hold.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import dataset
from core.problems import Problem, Rejected
from core.status import FINAL_RUN, ComparisonState
from metrics import registry
from metrics.comparison import Comparison, Shared, Side, compare, run_labels
from metrics.results import judge_models
from metrics.rows import ResultRow, finite_json
from pipeline.service.reuse import code_fingerprint
from store.uploads import upload_path

if TYPE_CHECKING:
    from metrics.suite import Suite
    from store import StorageLike
    from store.models import Run

log = logging.getLogger(__name__)
# metrics.rows.finite_json has no annotations: a dict comes back a dict
_finite_dict = cast("Callable[[dict[str, Any]], dict[str, Any]]", finite_json)
Item = tuple[str, int | None, str]  # (session, round or None = the session, method)
POLL_S = 0.05  # how often a waiting request looks for the stored comparison


def compare_runs(
    storage: StorageLike,
    runs: list[Run],
    config: dict[str, Any],
    enqueue: Callable[[], object],
) -> Comparison | None:
    """The comparison of ``runs`` (in order: the first is the baseline);
    None while a worker computes it. Rejected (400/409) when the runs cannot
    be compared; see ``problems``."""
    _check(storage, runs, config)
    key, runs_digest = comparison_keys(runs)
    with _LOCK:
        if key in _RECENT:
            _RECENT.move_to_end(key)
            return _RECENT[key]
    stored = storage.comparisons.stored_comparison(key)
    if stored is None:
        if storage.comparisons.request_comparison(
            key, runs_digest, [run.id for run in runs]
        ):
            enqueue()  # the dispatcher hands it to a worker, as it does chunks
        stored = storage.comparisons.stored_comparison(key)
    if stored is None:  # deleted between the two reads (a run was deleted)
        raise Rejected.one("compare_unknown_run", http=404, token="")
    deadline = time.monotonic() + config["COMPARE_WAIT_S"]
    while stored.state == ComparisonState.COMPUTING and time.monotonic() < deadline:
        time.sleep(POLL_S)
        stored = storage.comparisons.stored_comparison(key) or stored
    if stored.state == ComparisonState.COMPUTING:
        return None
    if stored.state == ComparisonState.FAILED:
        # a failed comparison holds why (``compute``)
        failure = cast("dict[str, Any]", stored.failure)
        problems = [Problem(**error) for error in failure["errors"]]
        raise Rejected(problems, failure["http"])
    # a computed comparison holds its document (``compute``)
    found = Comparison.restore(cast("dict[str, Any]", stored.document))
    with _LOCK:
        _RECENT[key] = found
        while len(_RECENT) > RECENT_COMPARISONS:
            _RECENT.popitem(last=False)
    return found


# The comparisons a workspace's reader is likely to open next are asked for
# as its page is shown: each pair of its newest finished runs, in the order
# the page lists them (newest first, the order its checkboxes send), so a
# worker has stored it before the compare page is opened.
AHEAD_RUNS = 3
_ASKED: OrderedDict[str, None] = OrderedDict()  # keys this process asked ahead
ASKED_KEYS = 256


def compare_ahead(
    storage: StorageLike,
    runs: list[Run],
    config: dict[str, Any],
    enqueue: Callable[[], object],
) -> int:
    """Ask the workers for the comparisons of each pair of the newest
    ``AHEAD_RUNS`` finished ``runs`` (listed newest first), never waiting;
    pairs that cannot be compared are left out. How many were asked."""
    finished = [run for run in runs if run.status in FINAL_RUN][:AHEAD_RUNS]
    asked = 0
    for index, first in enumerate(finished):
        for second in finished[index + 1 :]:
            pair = [first, second]
            key, runs_digest = comparison_keys(pair)
            with _LOCK:
                if key in _ASKED or key in _RECENT:
                    continue
                _ASKED[key] = None
                while len(_ASKED) > ASKED_KEYS:
                    _ASKED.popitem(last=False)
            try:
                _check(storage, pair, config)
            except Rejected:
                continue
            if storage.comparisons.stored_comparison(key) is None:
                ids = [run.id for run in pair]
                asked += storage.comparisons.request_comparison(key, runs_digest, ids)
    if asked:
        enqueue()  # the dispatcher hands them to workers, as it does chunks
    return asked


def compare_now(
    storage: StorageLike, runs: list[Run], config: dict[str, Any]
) -> Comparison:
    """The comparison of ``runs`` computed here and now, for the command
    line (which waits for nobody's worker); Rejected as ``compare_runs``."""
    _check(storage, runs, config)
    return _compare(storage, runs, config["UPLOAD_FOLDER"], config)


# Restored comparisons this process served last: the compare page and each
# of its exports read one (a stored comparison never changes under its key).
RECENT_COMPARISONS = 8
_RECENT: OrderedDict[str, Comparison] = OrderedDict()
_LOCK = threading.Lock()


def comparison_keys(runs: list[Run]) -> tuple[str, str]:
    """(key of this comparison, digest of the run ids alone). The key holds
    the metric code's fingerprint: a release that changes how a comparison
    is computed computes it again."""
    facts = code_fingerprint() + " ".join(
        f"{r.id}|{r.name}|{r.status}|{r.finished_at}" for r in runs
    )
    ids = " ".join(run.id for run in runs)
    return _digest(facts), _digest(ids)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _check(storage: StorageLike, runs: list[Run], config: dict[str, Any]) -> None:
    low, high = 2, config["MAX_COMPARED_RUNS"]
    if not low <= len(runs) <= high:
        raise Rejected.one("compare_count", low=low, high=high, count=len(runs))
    seen: set[str] = set()
    for run in runs:  # not compared with itself: every delta 0, every p 1
        if run.id in seen:
            name = run.name or run.file_name
            raise Rejected.one("compare_same_run", name=name)
        seen.add(run.id)
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


def compute(
    storage: StorageLike, key: str, upload_folder: str, config: dict[str, Any]
) -> None:
    """The worker's part: compute and store the comparison ``key`` asked for
    (nothing when one of its runs was deleted; a failure saying so when
    a run was renamed or retried since, or the web server runs other metric
    code: a request that sees the change asks for a new one)."""
    found_runs = [
        storage.runs.get_run(run_id)
        for run_id in storage.comparisons.comparison_run_ids(key)
    ]
    if not found_runs or None in found_runs:
        return
    runs = cast("list[Run]", found_runs)  # checked above: none is None
    if comparison_keys(runs)[0] != key:
        # a run changed since the request, or this worker runs other metric
        # code than the web process (files changed between their starts, a
        # rolling deploy). Stored as the reason: a request under the old key
        # would otherwise wait on "computing" for ever; one under a new key
        # asks afresh.
        log.warning(
            "comparison %s refused: its runs or the metric code "
            "changed since it was asked for",
            key[:12],
        )
        stale = Problem.make(None, "", "compare_stale")
        storage.comparisons.finish_comparison(
            key, failure={"http": 409, "errors": [stale.to_dict()]}
        )
        return
    try:
        found = _compare(storage, runs, upload_folder, config)
    except Rejected as rejected:
        failure = {"http": rejected.status, "errors": rejected.errors}
        storage.comparisons.finish_comparison(key, failure=failure)
        return
    except Exception as exc:  # stored as its reason, never left "computing"
        log.exception("comparison %s failed", key)
        problem = Problem.make(None, "", "compare_failed", error=type(exc).__name__)
        storage.comparisons.finish_comparison(
            key, failure={"http": 500, "errors": [problem.to_dict()]}
        )
        return
    storage.comparisons.finish_comparison(key, document=_finite_dict(found.stored()))


def _row_count(storage: StorageLike, run: Run) -> int:
    """A finished run's rows: its stored status counts, else a COUNT."""
    stored: dict[str, int] | None = (run.aggregates or {}).get("status_counts")
    return sum(stored.values()) if stored else storage.rows.count_rows(run.id)


def _compare(
    storage: StorageLike, runs: list[Run], upload_folder: str, config: dict[str, Any]
) -> Comparison:
    shared = shared_items(storage, runs)
    if not shared.sessions:
        raise Rejected.one("no_shared_sessions")
    labels = run_labels([r.name for r in runs], [r.file_name for r in runs])
    sides = [_side(run, label) for run, label in zip(runs, labels, strict=True)]
    texts = _ResponseDigests(runs, sides, shared, upload_folder)

    def rows_of(side: Side, suite: Suite) -> Iterator[ResultRow]:
        detail = suite.summary_details
        for row in storage.rows.iter_rows(
            side.id, metrics=suite.metrics, detail=detail
        ):
            row["round"] = row["round"] or None
            yield cast(ResultRow, row)  # a stored row has ResultRow's fields

    return compare(sides, shared, rows_of, texts.same, config["MAX_COMPARED_METHODS"])


def shared_items(storage: StorageLike, runs: list[Run]) -> Shared:
    sessions = set.intersection(
        *(storage.comparisons.session_ids(run.id) for run in runs)
    )
    rounds = None
    for run in runs:
        keys = storage.comparisons.round_keys(run.id)
        if keys:  # a run of session-level suites only does not restrict rounds
            rounds = keys if rounds is None else rounds & keys
    if rounds is not None:
        rounds = {key for key in rounds if key[0] in sessions}
    return Shared(frozenset(sessions), None if rounds is None else frozenset(rounds))


def _side(run: Run, label: str) -> Side:
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
            "judge_models": judge_models(judge),  # a panel names every judge
            # the suite options the run set (its settings, beside the judge's)
            "options": {
                key: value
                for key, value in (run.options or {}).items()
                if key in registry.option_names()
            },
            "prompt_versions": (judge or {}).get("prompts"),
        },
    )


class _ResponseDigests:
    """Whether two runs hold the same response text for an item, read lazily
    from their uploads (a missing upload: nothing is known to be the same)."""

    def __init__(
        self, runs: list[Run], sides: list[Side], shared: Shared, folder: str
    ) -> None:
        self.runs = {side.key: run for side, run in zip(sides, runs, strict=True)}
        self.shared, self.folder = shared, folder
        self.digests: dict[str, dict[Item, bytes]] = {}

    def same(
        self, a: Side, b: Side, method: str, session: str, round_: int | None
    ) -> bool:
        run_a, run_b = self.runs[a.key], self.runs[b.key]
        if run_a.file_sha256 == run_b.file_sha256:
            return True
        mine, theirs = self._of(run_a), self._of(run_b)
        item = (session, round_, method)
        return item in mine and mine.get(item) == theirs.get(item)

    def _of(self, run: Run) -> dict[Item, bytes]:
        if run.token not in self.digests:
            self.digests[run.token] = self._read(run)
        return self.digests[run.token]

    def _read(self, run: Run) -> dict[Item, bytes]:
        path = upload_path(self.folder, run.upload_id)
        found: dict[Item, bytes] = {}
        if not Path(path).exists():
            return found
        for session in dataset.iter_sessions(path):
            if session["session_id"] in self.shared.sessions:
                found.update(_session_digests(session))
        return found


def _session_digests(session: dict[str, Any]) -> dict[Item, bytes]:
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
