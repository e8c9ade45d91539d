"""Varied synthetic rows of every suite, and an exact encoding of aggregates,
for ``tests/metrics/test_aggregate_equality.py`` (issue 17: aggregation in bounded
memory must not change a single stored bit).

The rows are made by a seeded ``random.Random`` only (no suite code runs), so
the frozen reference stays valid while the suites' ``run`` evolves. They
cover judge panels, several samples (``al_sample@k``), human labels, every
non-``ok`` status, session-level rows (round None), sessions of one round,
a method that is not in the run's list, and ties.

Every registered suite is covered: the suites below have rows written for
them by hand; any other (a new suite) gets rows of each of its row- and
session-level metrics from :func:`generic`, so its summary is frozen too.

Regenerate the reference (when a suite is added, or a metric's definition
changes on purpose): ``make reference`` (``python -m tests.aggregate_rows``).
"""

from __future__ import annotations

import json
import random
import zlib
from itertools import combinations
from pathlib import Path

REFERENCE = Path(__file__).resolve().parent / "data" / "aggregate_reference.json"
METHODS = ["Base", "RAG", "Ours"]
EXTRA = "Zed"  # rows of a method the run does not list
SCENARIOS = {"single": ([""], 1), "panel": (["judge-a", "judge-b+10"], 2)}
ORDERS = ("key", "shuffled")
DIMENSIONS = ("style", "content", "naturalness", "personalization", "conversation")
QUALITY = ("coherence", "completeness", "length", "structure", "vocabulary", "quality")
SIMULATION = ("pas", "bvs", "ora", "dei", "crrs")
SLOT_COUNTS = (
    "slot_exact_count",
    "token_matched",
    "token_pred",
    "token_gt",
    "bleu1_sum",
    "extra_slots",
    "extra_values",
)
TOPICS = ("basic_info", "interests", "话题")
# well over 13 paired sessions: with fewer, scipy's Wilcoxon runs a slow
# exact permutation test
SESSIONS = [
    "s-01",
    "s-02",
    "S-03",
    "s-04",
    "s-05",
    "s_06",
    "s-07",
    "s-중",
    "s-中",
    *(f"s-{index}" for index in range(10, 26)),
]


class Maker:
    """One scenario's rows; ``status()`` draws ok mostly, else a failure."""

    def __init__(self, judges: list[str], samples: int, seed: int):
        self.rng = random.Random(seed)
        self.judges, self.samples = judges, samples
        self.rows: list[dict] = []
        self.rounds = {s: self.rng.choice([1, 2, 3, 4, 5]) for s in SESSIONS}

    def status(self, failing: float = 0.15) -> str:
        draw = self.rng.random()
        if draw >= failing:
            return "ok"
        return self.rng.choice(
            ["unscored", "error", "not_applicable", "not_configured"]
        )

    def add(self, key: tuple, metric: str, value, status: str = "ok", detail=None):
        session, round_, method, judge = key
        if status != "ok":
            value = None
        row = {
            "session_id": session,
            "round": round_,
            "method": method,
            "metric": metric,
            "value": value,
            "status": status,
            "note": None,
            "detail": detail,
            "sample": 0,
            "judge": judge,
        }
        self.rows.append(row)

    def items(self, methods=(*METHODS, EXTRA)):
        for session in SESSIONS:
            for round_ in range(1, self.rounds[session] + 1):
                for method in methods:
                    yield session, round_, method

    def session_keys(self, judged: bool):
        for session in SESSIONS:
            for method in (*METHODS, EXTRA):
                for judge in self.judges if judged else [""]:
                    yield session, None, method, judge


def alignment(make: Maker) -> None:
    rng = make.rng
    for session, round_, method in make.items():
        chars = float(rng.randint(20, 400))
        human = {
            m: v
            for m, v in (
                ("human_al", float(rng.randint(0, 100))),
                ("human_binary", float(rng.randint(0, 1))),
            )
            if rng.random() < 0.3
        }
        for judge in make.judges:
            key = (session, round_, method, judge)
            make.add(key, "response_chars", chars)
            for metric, value in human.items():
                make.add(key, metric, value)
            samples = [float(rng.randint(20, 100)) for _ in range(make.samples)]
            status = make.status()
            make.add(
                key, "al", sum(samples) / len(samples), status, {"samples": samples}
            )
            if make.samples > 1 and status == "ok":
                for index, score in enumerate(samples):
                    if rng.random() < 0.9:
                        make.add(key, f"al_sample@{index + 1}", score)
            for dimension in DIMENSIONS:
                value = float(rng.randint(0, 40)) / 2
                make.add(key, f"al_{dimension}", value, make.status(0.1))
            make.add(key, "binary", float(rng.randint(0, 1)), make.status(0.1))


def pairwise(make: Maker) -> None:
    rng = make.rng
    for session in SESSIONS:
        for round_ in range(1, make.rounds[session] + 1):
            for a, b in combinations(METHODS, 2):
                for judge in make.judges:
                    first = [float(rng.randint(0, 1)), float(rng.randint(0, 1))]
                    value = rng.choice([0.0, 0.5, 1.0])
                    status = make.status(0.1)
                    detail = {"first_wins": first, "reasoning": ["x", "y"]}
                    if status == "ok":
                        detail["consistent"] = value != 0.5
                    mirror = 1.0 - value
                    # the replies' lengths, off the random stream (the
                    # reference's other values stay as they were)
                    chars = [
                        reply_chars(session, round_, a),
                        reply_chars(session, round_, b),
                    ]
                    make.add(
                        (session, round_, a, judge),
                        f"pairwise@{b}",
                        value,
                        status,
                        {**detail, "primary": True, "chars": chars},
                    )
                    make.add(
                        (session, round_, b, judge),
                        f"pairwise@{a}",
                        mirror,
                        status,
                        {**detail, "primary": False, "chars": chars[::-1]},
                    )


def reply_chars(session: str, round_: int, method: str) -> int:
    """A reply's length in characters, fixed by its item (crc32)."""
    return 20 + zlib.crc32(f"{session}/{round_}/{method}".encode()) % 400


def quality_and_style(make: Maker) -> None:
    rng = make.rng
    for session, round_, method in make.items():
        key = (session, round_, method, "")
        for metric in QUALITY:
            make.add(key, metric, rng.random(), make.status(0.05), {"n": 1})
        make.add(key, "nvcs", rng.random(), make.status(0.05))
        ertd = round(rng.random() * 100, rng.choice([0, 1, 6]))
        make.add(key, "ertd", ertd, make.status(0.3), {"er": 1.0})


def roleplay(make: Maker) -> None:
    rng = make.rng
    for key in make.session_keys(judged=True):
        scales = [float(rng.randint(10, 100)) for _ in range(3)]
        status = make.status(0.1)
        make.add(key, "jera", sum(scales), status, {"samples": [sum(scales)]})
        for scale, value in zip(
            ("immersivity", "consistency", "creativity"), scales, strict=True
        ):
            make.add(key, f"jera_{scale}", value, status)
        matched = [{"attribute": "kind", "observed": key[0], "reason": "exact"}]
        detail = {"matched": matched, "missed": [key[2]], "value": 0.5}
        make.add(key, "almp", rng.choice([0.0, 0.25, 0.5, 1.0]), make.status(), detail)


def simulation(make: Maker) -> None:
    rng = make.rng
    for key in make.session_keys(judged=False):
        for metric in SIMULATION:
            value = rng.choice([rng.random(), 0.2, 1.0])
            make.add(key, metric, value, make.status(0.1), {"m": 1})


def slots(make: Maker) -> None:
    rng = make.rng
    for key in make.session_keys(judged=True):
        if rng.random() < 0.1:
            continue  # a method that wrote no slots in this session
        totals = {"tp": 0.0, "fp": 0.0, "fn": 0.0}
        for topic in rng.sample(TOPICS, rng.randint(1, len(TOPICS))):
            for outcome in totals:
                count = float(rng.randint(0, 3))
                totals[outcome] += count
                make.add(key, f"slot_{outcome}@{topic}", count)
        for outcome, count in totals.items():
            make.add(key, f"slot_{outcome}", count)
        for metric in SLOT_COUNTS:
            value = (
                rng.random() * 3 if metric == "bleu1_sum" else float(rng.randint(0, 4))
            )
            make.add(key, metric, value)
        make.add(key, "slot_f1", rng.random(), "ok", {"matched": []})
        make.add(key, "latency", round(rng.random() * 9, 3), make.status(0.1))
        make.add(
            key,
            "slot_judge",
            rng.choice([0.5, 1.0, rng.random()]),
            make.status(0.2),
            {"scores": []},
        )


def generic(make: Maker, suite) -> None:
    """Rows of a suite written by no builder below: a value in [0, 1) of each
    of its metrics per response (row level) or per session and judge."""
    rng = make.rng
    for metric in suite.metrics:
        if metric.level == "row":
            keys = [(*item, judge) for item in make.items() for judge in make.judges]
        elif metric.level == "session":
            keys = list(make.session_keys(judged=True))
        else:
            continue
        for key in keys:
            make.add(key, metric.id, rng.random(), make.status(0.1))


# who writes each suite's rows; quality and style share one builder (their
# rows interleave, and the reference was frozen that way)
BUILDERS = {
    ("alignment",): alignment,
    ("pairwise",): pairwise,
    ("quality", "style"): quality_and_style,
    ("roleplay",): roleplay,
    ("simulation",): simulation,
    ("slots",): slots,
}


def suites() -> list[str]:
    """Every registered suite, in the registry's order."""
    from metrics import registry

    return [suite.name for suite in registry.suites()]


def key_order(row: dict) -> tuple:
    """The storage key order: (session, round with None as 0, method, metric,
    sample, judge), as ``storage.rows.iter_rows`` streams them."""
    return (
        row["session_id"],
        row["round"] or 0,
        row["method"],
        row["metric"],
        row["sample"],
        row["judge"],
    )


def synthetic_rows(scenario: str, order: str) -> list[dict]:
    judges, samples = SCENARIOS[scenario]
    make = Maker(judges, samples, seed=17 if scenario == "single" else 71)
    for build in BUILDERS.values():
        build(make)
    from metrics import registry

    built = {name for names in BUILDERS for name in names}
    for name in suites():
        if name not in built:
            generic(make, registry.get(name))
    rows = sorted(make.rows, key=key_order)
    if order == "shuffled":
        random.Random(5).shuffle(rows)
    return rows


def rows_of_suite(rows: list[dict]):
    """``rows_of(suite)`` for ``engine.aggregate``: that suite's rows only."""
    from metrics import registry

    def rows_of(suite):
        return [r for r in rows if registry.spec(r["metric"]).suite == suite.name]

    return rows_of


def canonical(value):
    """An exact, order-keeping encoding: floats as their hex (so NaN and the
    last bit count), dicts as key/value pairs in order, any other type but
    str/int/bool/None rejected (a numpy scalar would not store as JSON)."""
    if isinstance(value, dict):
        return {"dict": [[canonical(k), canonical(v)] for k, v in value.items()]}
    if isinstance(value, list | tuple):
        return [canonical(item) for item in value]
    if isinstance(value, float):
        return {"float": float(value).hex()}
    if value is None or type(value) in (str, int, bool):
        return value
    raise TypeError(f"{type(value).__name__} in an aggregate: {value!r}")


def aggregate(scenario: str, order: str) -> dict:
    from metrics import engine

    rows = synthetic_rows(scenario, order)
    return engine.aggregate(rows_of_suite(rows), suites(), METHODS)


def freeze() -> None:
    from metrics import lexicon  # noqa: F401  (the suites import it)

    reference = {
        f"{scenario}/{order}": canonical(aggregate(scenario, order))
        for scenario in SCENARIOS
        for order in ORDERS
    }
    REFERENCE.parent.mkdir(exist_ok=True)
    REFERENCE.write_text(json.dumps(reference, separators=(",", ":")) + "\n")
    print(f"written {REFERENCE} ({REFERENCE.stat().st_size // 1024} KB)")


if __name__ == "__main__":
    freeze()
