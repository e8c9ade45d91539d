"""Deterministic suites (quality + style + slots) through the real engine path,
against parsing the same sessions from their JSONL lines, both measured in the
same run.

* measured: ``metrics.engine.evaluate(chunk, ["quality", "style", "slots"],
  methods, None, {})`` over chunks of whole sessions sized like production
  (``config.DEFAULTS["CHUNK_UNITS"]`` response units), then ``engine.aggregate``
  over every result row, in a fresh subprocess; its peak RSS is ``VmHWM``.
  Reading and parsing the chunks is not timed; loading WordNet and the
  pronunciation dictionary (a one-off per worker) is a separate warm-up.
* baseline: ``json.loads`` + ``dataset.normalize_session`` over the same lines,
  in its own fresh subprocess.
* per suite: each suite alone over a 20,000-unit subset from another seed (so
  per-text caches of the main run do not carry over), in the evaluating process.
* quality against its baseline: ``quality.run`` and the pre-issue-17
  implementation (``testing/quality_baseline.py``) on the same 20,000-unit
  subset in the same production-sized chunks, in a fresh process of their
  own: the two alternate chunk by chunk (first one, then the other), so both
  see the same machine; every chunk's rows must be identical (not timed).
  ``python -m bench.suites --quality [units]`` runs this part alone.

A unit is one (session, round, method) response. Sessions come from
``testing.datagen.session`` (10 rounds x 4 methods = 40 units each) plus
``ground_truth_slots`` and per-response ``slots`` (``latency_s`` is datagen's).
``python -m bench.suites 5000`` runs a smaller size.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from config import DEFAULTS
from testing.datagen import session

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench" / "data"
METHODS = ["Base", "RAG", "Ours", "Oracle"]
SUITES = ["quality", "style", "slots"]
ROUNDS = 10
SUBSET_UNITS = 20_000
CHUNK_UNITS = DEFAULTS["CHUNK_UNITS"]  # production's chunk size
FIELDS = {
    "basic_info": ("name", "city", "job"),
    "hobbies": ("sport", "music"),
    "food": ("likes",),
}
VALUES = (
    "北京 上海 서울 nurse software_engineer jazz hiking 咖啡 marathon guitar".split()
)


# -- data ------------------------------------------------------------------
def slots_session(rng: random.Random, index: int) -> dict:
    """A datagen session with ground-truth slots; about half the responses
    write one slot, right or wrong (some lists, some strings)."""
    item = session(rng, index, ROUNDS, METHODS)
    truth = {t: {f: rng.choice(VALUES) for f in fs} for t, fs in FIELDS.items()}
    truth["hobbies"]["sport"] = rng.sample(VALUES, 2)
    item["ground_truth_slots"] = truth
    for round_ in item["rounds"]:
        for response in round_["responses"].values():
            if rng.random() < 0.5:
                topic = rng.choice(sorted(FIELDS))
                name = rng.choice(FIELDS[topic])
                right = rng.random() < 0.6
                value = truth[topic][name] if right else rng.choice(VALUES)
                response["slots"] = {topic: {name: value}}
    return item


def session_lines(seed: int, count: int):
    rng = random.Random(seed)
    for index in range(count):
        yield json.dumps(slots_session(rng, index), ensure_ascii=False)


def write_sessions(units: int, seed: int = 11) -> Path:
    """The JSONL file of ``units`` units (reused when already written)."""
    path = DATA / f"suites_{units}u_seed{seed}.jsonl"
    if not path.exists():
        DATA.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".part")
        with partial.open("w", encoding="utf-8") as out:
            for line in session_lines(seed, units // (ROUNDS * len(METHODS))):
                out.write(line + "\n")
        partial.rename(path)
    return path


# -- child processes ---------------------------------------------------------
def _peak_mb() -> float:
    """VmHWM: unlike ``ru_maxrss`` it is not inherited across fork + exec."""
    with open("/proc/self/status") as status:
        line = next(item for item in status if item.startswith("VmHWM"))
    return int(line.split()[1]) / 1024


def _parsed(lines):
    import dataset

    for line in lines:
        yield dataset.normalize_session(json.loads(line))


def _chunks(sessions, chunk_units: int):
    """Consecutive whole sessions of at least ``chunk_units`` units, the rule
    of ``engine.plan_chunks``, streamed so only one chunk is held."""
    chunk, units = [], 0
    for item in sessions:
        chunk.append(item)
        units += len(item["rounds"]) * len(METHODS)
        if units >= chunk_units:
            yield chunk, units
            chunk, units = [], 0
    if chunk:
        yield chunk, units


def _timed_evaluate(lines, suites: list[str]) -> tuple[float, int, list[dict]]:
    from metrics import engine

    elapsed, units, rows = 0.0, 0, []
    for chunk, count in _chunks(_parsed(lines), CHUNK_UNITS):
        start = time.perf_counter()
        rows += engine.evaluate(chunk, suites, METHODS, None, {})
        elapsed += time.perf_counter() - start
        units += count
    return elapsed, units, rows


def _rss_mb() -> float:
    with open("/proc/self/status") as status:
        line = next(item for item in status if item.startswith("VmRSS"))
    return int(line.split()[1]) / 1024


def _aggregate(rows: list[dict]) -> dict:
    """``engine.aggregate`` over all rows, or suite by suite (each over its own
    rows) when the rows alone already hold more than the limit."""
    from metrics import engine, registry

    held_mb = _rss_mb()
    start = time.perf_counter()

    def rows_of(suite):
        return [r for r in rows if registry.spec(r["metric"]).suite == suite.name]

    engine.aggregate(rows_of, SUITES, METHODS)
    mode = f"each suite over its own rows (rows held {held_mb:.0f} MB)"
    return {"aggregate_s": time.perf_counter() - start, "aggregate_mode": mode}


def _per_suite() -> dict:
    """Units/s of each suite alone over the subset (another seed)."""
    lines = list(session_lines(12, SUBSET_UNITS // (ROUNDS * len(METHODS))))
    rates = {}
    for suite in SUITES:
        elapsed, units, rows = _timed_evaluate(lines, [suite])
        rates[suite] = {"units_per_s": units / elapsed, "rows": len(rows)}
    return rates


def child_evaluate(path: str) -> dict:
    from config import PROJECT_ROOT
    from metrics import engine, lexicon

    lexicon.configure(str(PROJECT_ROOT / "nltk_data"))
    start = time.perf_counter()
    warm = list(_parsed(session_lines(99, 1)))
    engine.evaluate(warm, SUITES, METHODS, None, {})
    warm_up_s = time.perf_counter() - start
    rss_before_mb = _rss_mb()
    with open(path, encoding="utf-8") as lines:
        evaluate_s, units, rows = _timed_evaluate(lines, SUITES)
    figures = {"warm_up_s": warm_up_s, "evaluate_s": evaluate_s, "units": units}
    figures["rss_before_evaluate_mb"] = rss_before_mb
    figures["result_rows"] = len(rows)
    figures["row_statuses"] = dict(Counter(r["status"] for r in rows))
    figures["rss_after_evaluate_mb"] = _rss_mb()
    figures.update(_aggregate(rows))
    figures["peak_rss_mb"] = _peak_mb()
    del rows
    figures["per_suite"] = _per_suite()
    return figures


def child_parse(path: str) -> dict:
    import dataset  # imported before timing, as in the evaluating process

    start = time.perf_counter()
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            dataset.normalize_session(json.loads(line))
    return {"parse_s": time.perf_counter() - start, "peak_rss_mb": _peak_mb()}


def child_quality(units: str) -> dict:
    """Seconds of the optimised quality suite and of its baseline over the
    same chunks; after one warm-up session each (a worker's first chunk)."""
    from metrics.suites import quality
    from testing import quality_baseline

    runs = {"baseline": quality_baseline.run, "optimised": quality.run}
    warm = list(_parsed(session_lines(99, 1)))
    for run_ in runs.values():
        run_(warm, METHODS, None, {})
    lines = list(session_lines(12, int(units) // (ROUNDS * len(METHODS))))
    elapsed, total = dict.fromkeys(runs, 0.0), 0
    chunks = _chunks(_parsed(lines), CHUNK_UNITS)
    for index, (chunk, count) in enumerate(chunks):
        rows = {}
        for name in sorted(runs, reverse=bool(index % 2)):  # alternate the order
            start = time.perf_counter()
            rows[name] = runs[name](chunk, METHODS, None, {})
            elapsed[name] += time.perf_counter() - start
        if rows["optimised"] != rows["baseline"]:
            raise AssertionError(
                f"quality rows differ from the baseline in chunk {index}"
            )
        total += count
    return {"units": total, "seconds": elapsed}


def quality_comparison(units: int = SUBSET_UNITS) -> dict:
    """Units/s of the quality suite alone, optimised and baseline, and the
    speed-up (issue 17's target: at least 4x)."""
    found = _measure("quality", units)
    rates = {name: found["units"] / s for name, s in found["seconds"].items()}
    return {
        "quality_run_units_per_s": round(rates["optimised"]),
        "quality_run_baseline_units_per_s": round(rates["baseline"]),
        "quality_run_speedup": round(rates["optimised"] / rates["baseline"], 2),
        "quality_run_compared_units": found["units"],
    }


CHILDREN = {"evaluate": child_evaluate, "parse": child_parse, "quality": child_quality}


def _measure(kind: str, argument: Path | int) -> dict:
    done = subprocess.run(
        [sys.executable, "-m", "bench.suites", "--child", kind, str(argument)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


# -- report ------------------------------------------------------------------
def run(size: int = 200_000) -> dict:
    path = write_sessions(size)
    parse = _measure("parse", path)
    result = _measure("evaluate", path)
    evaluate_s = result["evaluate_s"]
    per_suite = {
        f"{suite}_alone_units_per_s": round(item["units_per_s"])
        for suite, item in result["per_suite"].items()
    }
    return {
        "name": "deterministic suites (quality + style + slots)",
        "rows": result["units"],
        "result_rows": result["result_rows"],
        "evaluate_s": round(evaluate_s, 2),
        "units_per_s": round(result["units"] / evaluate_s),
        "result_rows_per_s": round(result["result_rows"] / evaluate_s),
        "aggregate_s": round(result["aggregate_s"], 2),
        "aggregate_mode": result["aggregate_mode"],
        "peak_rss_mb": round(result["peak_rss_mb"], 1),
        "rss_before_after_evaluate_mb": (
            f"{result['rss_before_evaluate_mb']:.0f} -> "
            f"{result['rss_after_evaluate_mb']:.0f} (all result rows held)"
        ),
        "warm_up_s": round(result["warm_up_s"], 2),
        "baseline_parse_s": round(parse["parse_s"], 3),
        "baseline_peak_rss_mb": round(parse["peak_rss_mb"], 1),
        "ratio_to_parse": round(evaluate_s / parse["parse_s"], 1),
        **per_suite,
        "per_suite_subset_units": SUBSET_UNITS,
        **quality_comparison(),
        "row_statuses": result["row_statuses"],
        "file_mb": round(path.stat().st_size / 2**20, 1),
    }


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        print(json.dumps(CHILDREN[sys.argv[2]](sys.argv[3])))
    elif sys.argv[1:2] == ["--quality"]:
        units = int(sys.argv[2]) if len(sys.argv) > 2 else SUBSET_UNITS
        print(json.dumps(quality_comparison(units), indent=2))
    else:
        size = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
        print(json.dumps(run(size), indent=2))
