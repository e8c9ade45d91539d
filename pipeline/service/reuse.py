"""Reusing an identical finished run instead of evaluating it again.

A run whose file (SHA-256), suites, suite options, judge settings (model or
panel, URL, temperature, token limit, samples, prompt versions, history
window) and metric code are those of a finished ``done`` run gets a copy of
that run's rows and aggregates: the same inputs to the same code give the
same rows, and nothing is asked of the judge. The copy is recorded
(``reused_from``, shown in the results header and the dashboard)
and independent: deleting either run leaves the other whole.

Not reused: ``partial`` runs (their failed rows deserve another try: that is
what retry does), runs asked for with ``use_cache`` off (the user wants the
judge asked again), and runs made by other code (a release that changes a
metric changes the fingerprint).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.status import RunStatus

if TYPE_CHECKING:
    from store import StorageLike
    from store.models import Run

ROOT = Path(__file__).resolve().parents[2]
# Everything a row's value depends on besides the file and the settings.
# (the suites' prompt files are in their folders, under metrics/)
CODE = ("metrics", "dataset", "core", "evaluator.py", "judge_client")


@cache
def code_fingerprint() -> str:
    """SHA-256 over the metric, dataset and judge code and the prompts."""
    digest = hashlib.sha256()
    for name in CODE:
        base = ROOT / name
        files = [base] if base.is_file() else sorted(base.rglob("*"))
        for path in files:
            if path.is_file() and path.suffix in (".py", ".txt"):
                digest.update(str(path.relative_to(ROOT)).encode() + b"\0")
                digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def reuse_key(
    sha256: str,
    suites: list[str],
    judge: dict[str, Any] | None,
    options: dict[str, Any],
    config: dict[str, Any],
    scope: str = "",
    families: dict[str, Any] | None = None,
) -> str | None:
    """What must match for a finished run's rows to be this run's; None
    when this run must be evaluated afresh (``use_cache`` off). ``scope``
    (the workspace, else the client) keeps one team's runs from being
    reused, or their existence revealed, for another."""
    if not options.get("use_cache", True):
        return None
    facts = {
        "file": sha256,
        "suites": suites,
        "judge": judge,
        # settings only (bookkeeping has columns); not how the judge was
        # asked: a batch run's rows equal the online run's (test_batch_mode)
        "options": {name: value for name, value in options.items() if name != "batch"},
        # the effective endpoint and reply length (hashed: a URL may hold a secret)
        "judge_url": options.get("judge_url") or config.get("JUDGE_API_URL"),
        "max_tokens": config["JUDGE_MAX_TOKENS"],
        "code": code_fingerprint(),
        "scope": scope,
    }
    if families:  # the self-preference estimates are part of the aggregates
        facts["families"] = families
    text = json.dumps(facts, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def find_source(storage: StorageLike, sha256: str, key: str) -> Run | None:
    """The latest ``done`` run with this key, or None."""
    from store import reuse as stored  # SQL, loaded on an upload's first use

    for run in stored.finished_with_file(storage, sha256, RunStatus.DONE):
        if run.reuse_key == key:
            return run
    return None


def reuse(
    storage: StorageLike,
    source: Run,
    spans: Iterable[tuple[str, int, int, int]],
    **fields: Any,
) -> str:
    """A finished copy of ``source`` with ``fields`` (``pipeline/service/runs.py``
    passes what it would have created the run with); the new run's id."""
    from store import reuse as stored

    return stored.create_copy(storage, source, spans, **fields)
