"""Issue 17, aggregation in bounded memory: every aggregate (summary, curves,
comparisons, panels, judge validity) stays the same, bit for bit, as the
list-of-dicts implementation computed it before the change (Bradley-Terry
fits to 1e-9; ``al_lc`` was re-frozen when its fit became exact, a change
of at most 1.2e-15 relative). The reference
was frozen from that implementation (``tests/aggregate_rows.py`` says how)
over varied synthetic rows of every suite, in storage key order and
shuffled (a comparison of runs feeds rows in no particular order)."""

from __future__ import annotations

import json
import math
from functools import cache

import pytest

from config import DEFAULTS
from metrics import engine
from metrics.columns import RowColumns
from metrics.rows import finite_json
from pipeline.worker import finalizer
from store import suite_rows
from tests import aggregate_rows as data


@cache
def reference() -> dict:
    return json.loads(data.REFERENCE.read_text())


def decode(value):
    """The inverse of ``aggregate_rows.canonical``."""
    if isinstance(value, list):
        return [decode(item) for item in value]
    if isinstance(value, dict):
        if "float" in value:
            return float.fromhex(value["float"])
        return {decode(k): decode(v) for k, v in value["dict"]}
    return value


def unordered(value):
    """A canonical encoding with its dicts' pairs sorted by key."""
    if isinstance(value, list):
        return [unordered(item) for item in value]
    if isinstance(value, dict) and "dict" in value:
        pairs = [[k, unordered(v)] for k, v in value["dict"]]
        return {"dict": sorted(pairs, key=lambda pair: json.dumps(pair[0]))}
    return value


def first_difference(found, expected, path="") -> str | None:
    """Where two canonical encodings first differ (a readable failure)."""
    if type(found) is not type(expected):
        return f"{path}: {found!r} != {expected!r}"
    if isinstance(found, list):
        if len(found) != len(expected):
            return f"{path}: {len(found)} items != {len(expected)}"
        for index, (a, b) in enumerate(zip(found, expected, strict=True)):
            if where := first_difference(a, b, f"{path}[{index}]"):
                return where
        return None
    if isinstance(found, dict) and "dict" in found:
        keys = [k for k, _ in found["dict"]], [k for k, _ in expected["dict"]]
        if keys[0] != keys[1]:
            return f"{path}: keys {keys[0]} != {keys[1]}"
        for (key, a), (_, b) in zip(found["dict"], expected["dict"], strict=True):
            if where := first_difference(a, b, f"{path}.{key}"):
                return where
        return None
    if found == expected or same_at_resolution(found, expected):
        return None
    return f"{path}: {found!r} != {expected!r}"


def same_at_resolution(found, expected) -> bool:
    """Two encoded floats equal at 12 significant digits, the resolution the
    product compares values at (``metrics.stats.at_resolution``). Bit for bit
    is too strict across machines: the order of a sum and the CPU's own
    kernels (numpy's AVX-512 exp and log, OpenBLAS's per-CPU kernels) move
    the last bit; on a Xeon with AVX-512 ``pairwise_winrate_lc`` came out
    one bit below the reference frozen on another machine."""
    if not (isinstance(found, dict) and isinstance(expected, dict)):
        return False
    if "float" not in found or "float" not in expected:
        return False
    a, b = float.fromhex(found["float"]), float.fromhex(expected["float"])
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-300)


def assert_same(found: dict, key: str) -> None:
    encoded = data.canonical(found)
    expected = reference()[key]
    where = first_difference(encoded, expected)
    assert where is None, where


@cache
def aggregated(scenario: str, order: str):
    """The canonical aggregates of one scenario's rows in one order, computed
    once for the two tests that read them (about a second each)."""
    return data.canonical(data.aggregate(scenario, order))


@pytest.mark.parametrize("order", data.ORDERS)
@pytest.mark.parametrize("scenario", list(data.SCENARIOS))
def test_aggregates_equal_the_frozen_reference(scenario, order):
    where = first_difference(
        aggregated(scenario, order), reference()[f"{scenario}/{order}"]
    )
    assert where is None, where


@pytest.mark.slow
@pytest.mark.parametrize("scenario", list(data.SCENARIOS))
def test_the_order_rows_arrive_in_changes_no_aggregate(scenario):
    """The same rows in storage-key order and shuffled give the same
    aggregates: seeded resamples draw sessions by position, so the sessions
    are put in id order first (before, the comparisons' intervals and Δ's p,
    the win-rate interval and the "longer reply wins" interval moved with
    the order, and a panel's slot_f1 session value was the last judge's
    row to arrive: Δ 0.114 against 0.018 for the same rows)."""
    where = first_difference(
        aggregated(scenario, "shuffled"), aggregated(scenario, "key")
    )
    assert where is None, where


@pytest.mark.parametrize("scenario", list(data.SCENARIOS))
def test_columns_given_by_the_row_source_give_the_same_aggregates(scenario):
    rows_of = data.rows_of_suite(data.synthetic_rows(scenario, "key"))

    def columns_of(suite):
        return RowColumns.from_rows(rows_of(suite), details=suite.summary_details)

    found = engine.aggregate(columns_of, data.suites(), data.METHODS)
    assert_same(found, f"{scenario}/key")


def store_run(storage, rows: list[dict]):
    run = storage.runs.create_run(
        file_name="equality.jsonl",
        file_sha256="0" * 64,
        upload_id="none",
        sessions=len(data.SESSIONS),
        rounds=0,
        methods=data.METHODS,
        suites=data.suites(),
        status="running",
    )
    storage.rows.upsert_rows(
        {**row, "run_id": run.id, "round": row["round"] or 0} for row in rows
    )
    return run


@pytest.mark.slow
def test_finalize_stores_the_frozen_reference(sqlite_storage):
    storage = sqlite_storage
    run = store_run(storage, data.synthetic_rows("panel", "shuffled"))
    finalizer.finalize(storage, run.id, dict(DEFAULTS))
    stored = dict(storage.runs.get_run(run.id).aggregates)
    assert stored.pop("status_counts") == storage.rows.status_counts(run.id)
    assert stored.pop("sessions_scored") == len(data.SESSIONS)
    assert stored.pop("missing_replies") == storage.rows.missing_replies(run.id)
    causes = engine.not_scored(storage.rows.unscored_causes(run.id), list(run.suites))
    assert stored.pop("not_scored") == causes
    expected = finite_json(decode(reference()["panel/key"]))
    where = first_difference(data.canonical(stored), data.canonical(expected))
    assert where is None, where


@pytest.mark.postgres
def test_finalize_on_postgres_equals_the_aggregate_of_its_streamed_rows(
    postgres_storage,
):
    storage = postgres_storage
    run = store_run(storage, data.synthetic_rows("single", "key"))

    def rows_of(suite):
        detail = suite.summary_details
        for row in storage.rows.iter_rows(run.id, metrics=suite.metrics, detail=detail):
            yield {**row, "round": row["round"] or None}

    expected = finite_json(engine.aggregate(rows_of, data.suites(), data.METHODS))
    finalizer.finalize(storage, run.id, dict(DEFAULTS))
    stored = dict(storage.runs.get_run(run.id).aggregates)
    stored.pop("status_counts")
    stored.pop("sessions_scored")
    stored.pop("not_scored")
    stored.pop("missing_replies")
    # JSONB keeps no key order: compare the values only
    assert unordered(data.canonical(stored)) == unordered(data.canonical(expected))


def test_the_bootstrap_drawn_in_parts_equals_one_draw(monkeypatch):
    import numpy as np

    from metrics import stats

    n = 3001
    diffs = np.random.default_rng(3).normal(size=n).tolist()
    rng = np.random.default_rng(stats.BOOTSTRAP_SEED)
    draws = rng.integers(0, n, size=(stats.BOOTSTRAP_RESAMPLES, n))
    means = np.asarray(diffs)[draws].mean(axis=1)
    expected = tuple(float(q) for q in np.quantile(means, [0.025, 0.975]))
    monkeypatch.setattr(stats, "BOOTSTRAP_PART", 7 * n + 5)  # 7 a part, 5 at the end
    assert stats.paired_bootstrap_ci(diffs) == expected


def test_row_batches_stream_what_iter_rows_does(sqlite_storage):
    from metrics import registry

    storage = sqlite_storage
    run = store_run(storage, data.synthetic_rows("single", "key"))
    for name in ("roleplay", "quality"):
        suite = registry.get(name)
        detail = suite.summary_details
        batches = suite_rows.row_batches(
            storage.engine, run.id, suite.metrics, 500, detail
        )
        found = [tuple(row) for batch in batches for row in batch]
        fields = ("session_id", "round", "method", "metric", "value", "status", "judge")
        expected = [
            (
                *(row[f] or None if f == "round" else row[f] for f in fields),
                *((row["detail"],) if detail else ()),
            )
            for row in storage.rows.iter_rows(run.id, suite.metrics, detail=detail)
        ]
        assert found == expected and found
