"""Comparison across runs over their shared sessions, pure.

Each (run, method) becomes a column labelled ``<run name>/<method>``; the
runs' rows, kept to the sessions every run has (and, for round-level rows,
the rounds every run has), are aggregated as if they were one run whose
methods are the columns. So runs holding different methods on the same
sessions merge into one experiment, and the curves, the summary (with
``<metric>_n``) and the paired tests are those of a run: each comparison is
paired over the sessions both columns scored and states its ``n``.

When two runs judged the same responses of a method (same texts, checked by
the caller) with different judge settings (model, prompt versions,
temperature, samples, history window), the judge metrics that declare an
``agreement`` scale get per-item agreement (``metrics/agreement.py``).

>>> run_labels(["v1", "v1", "", "b"], ["a.jsonl", "a.jsonl", "c.jsonl", "d"])
['v1', 'v1 (2)', 'c.jsonl', 'b']
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any, cast

from metrics import engine, registry
from metrics.agreement import Scale, agreement, with_reason
from metrics.results import judge_models
from metrics.rows import ResultRow, scored, scored_value
from metrics.suite import Metric, Suite

SCHEMA = "personasteer.comparison/v1"


@dataclass(frozen=True)
class Side:
    """One run as the comparison sees it (``key``: how the reader named it)."""

    key: str
    id: str
    label: str
    methods: tuple[str, ...]
    suites: tuple[str, ...]
    judge: dict[str, Any] | None = None
    facts: dict[str, Any] = field(default_factory=dict)  # shown as is in ``runs``

    def column(self, method: str) -> str:
        return f"{self.label}/{method}"


@dataclass(frozen=True)
class Shared:
    """The items every run has: sessions, and (session, round) pairs of the
    runs that have round-level rows (None: no run restricts the rounds)."""

    sessions: frozenset[str]
    rounds: frozenset[tuple[str, int]] | None

    def keeps(self, row: ResultRow) -> bool:
        if row["session_id"] not in self.sessions:
            return False
        if not row["round"] or self.rounds is None:
            return True  # session-level rows stand for the whole session
        return (row["session_id"], row["round"]) in self.rounds


# rows of one run's suite; (side a, side b, method, session, round or None)
# -> whether both runs hold the same response(s) there
RowsOf = Callable[[Side, Suite], Iterable[ResultRow]]
SameResponse = Callable[[Side, Side, str, str, int | None], bool]
Item = tuple[str, int | None]  # (session, round or None: the session)
# (a run, its judge, the other run, its judge, the method) compared
JudgePair = tuple[Side, str, Side, str, str]


@dataclass
class Comparison:
    """Quacks like a finished run (``id``, ``methods``, ``suites``,
    ``aggregates``), so the dashboard's panels, tables and paper exports
    render it unchanged."""

    id: str
    methods: list[str]
    suites: list[str]
    aggregates: dict[str, Any]
    sides: list[Side]
    shared: dict[str, Any]  # how many sessions (and rounds) the runs share
    agreement: list[dict[str, Any]]

    @property
    def columns(self) -> list[dict[str, Any]]:
        return [
            {"label": side.column(m), "run": side.key, "method": m}
            for side in self.sides
            for m in side.methods
        ]

    def document(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "runs": [{"token": s.key, "label": s.label, **s.facts} for s in self.sides],
            "columns": self.columns,
            "shared": self.shared,
            "summary": self.aggregates["summary"],
            "curves": self.aggregates["curves"],
            "comparisons": self.aggregates["comparisons"],
            "agreement": self.agreement,
        }

    def stored(self) -> dict[str, Any]:
        """What ``restore`` reads back (JSON: the store keeps it)."""
        return {
            "id": self.id,
            "methods": self.methods,
            "suites": self.suites,
            "aggregates": self.aggregates,
            "shared": self.shared,
            "agreement": self.agreement,
            "sides": [
                {
                    **asdict(side),
                    "methods": list(side.methods),
                    "suites": list(side.suites),
                }
                for side in self.sides
            ],
        }

    @classmethod
    def restore(cls, stored: dict[str, Any]) -> Comparison:
        """
        >>> import json
        >>> side = Side("t", "id", "v1", ("A",), ("style",), None, {"name": "v1"})
        >>> shown = Comparison("c", ["v1/A"], ["style"], {}, [side], {}, [])
        >>> Comparison.restore(json.loads(json.dumps(shown.stored()))) == shown
        True
        """
        sides = [
            Side(
                **{
                    **side,
                    "methods": tuple(side["methods"]),
                    "suites": tuple(side["suites"]),
                }
            )
            for side in stored["sides"]
        ]
        fields = ("id", "methods", "suites", "aggregates", "shared", "agreement")
        return cls(**{name: stored[name] for name in fields}, sides=sides)


def run_labels(names: list[str | None], file_names: list[str]) -> list[str]:
    """Each run's name (else its file name), made unique with " (2)", ...;
    a "/" would make ``<run>/<method>`` ambiguous and becomes "∕"."""
    labels: list[str] = []
    for name, file_name in zip(names, file_names, strict=True):
        base = (name or file_name).replace("/", "∕")
        label, copy = base, 1
        while label in labels:
            copy += 1
            label = f"{base} ({copy})"
        labels.append(label)
    return labels


def compare(
    sides: list[Side],
    shared: Shared,
    rows_of: RowsOf,
    same_response: SameResponse,
    max_compared: int,
) -> Comparison:
    """Aggregate the runs' shared rows as one experiment; judge agreement."""
    columns = [side.column(m) for side in sides for m in side.methods]
    suites = [
        s.name for s in registry.suites() if any(s.name in x.suites for x in sides)
    ]
    judged = _JudgedValues(sides)

    def merged_rows(suite: Suite) -> Iterable[ResultRow]:
        for side in sides:
            if suite.name not in side.suites:
                continue
            for row in rows_of(side, suite):
                if shared.keeps(row):
                    judged.record(side, row)
                    yield _as_column(side, row)

    aggregates = engine.aggregate(merged_rows, suites, columns, max_compared)
    digest = hashlib.sha256(" ".join(s.id for s in sides).encode()).hexdigest()
    return Comparison(
        id=f"cmp{digest[:9]}",
        methods=columns,
        suites=suites,
        aggregates=aggregates,
        sides=sides,
        shared={
            "sessions": len(shared.sessions),
            "rounds": None if shared.rounds is None else len(shared.rounds),
        },
        agreement=judged.agreement(same_response),
    )


def _as_column(side: Side, row: ResultRow) -> ResultRow:
    """A run's row under its column's name; a key naming a method (the
    opponent of ``pairwise@<method>``) is renamed the same way.

    >>> side = Side("t", "id", "v1", ("A", "B"), ("pairwise",))
    >>> _as_column(side, {"method": "A", "metric": "pairwise@B"})
    {'method': 'v1/A', 'metric': 'pairwise@v1/B'}
    """
    base, _, key = row["metric"].partition("@")
    metric = registry.spec(base)
    renamed = {**row, "method": side.column(row["method"])}
    if key and metric is not None and metric.key_is_method:
        renamed["metric"] = f"{base}@{side.column(key)}"
    return cast(ResultRow, renamed)


class _JudgedValues:
    """Scored values of agreement metrics, kept only for methods two runs
    with different judge settings both hold. A panel's judges stand apart:
    each is compared with each judge of the other run (its rows by name);
    the panel mean (each item's mean over the panel's judges, on the items
    every judge scored) is compared too, as the panel's own judge."""

    def __init__(self, sides: list[Side]):
        self.pairs = [
            (a, ja, b, jb, m)
            for i, a in enumerate(sides)
            for b in sides[i + 1 :]
            if a.judge and b.judge
            for ja in _judges(a)
            for jb in _judges(b)
            if (a.judge, ja) != (b.judge, jb) and _settings(a, ja) != _settings(b, jb)
            for m in a.methods
            if m in b.methods
        ]
        self.wanted = {(s.key, m) for a, _, b, _, m in self.pairs for s in (a, b)}
        # (run key, judge, method, metric) -> {(session, round or None): value}
        # (the panel mean's: the list of its judges' values)
        self.values: dict[tuple[str, str, str, str], dict[Item, Any]] = defaultdict(
            dict
        )

    def record(self, side: Side, row: ResultRow) -> None:
        metric = registry.spec(row["metric"])
        if metric is None or metric.agreement is None:
            return
        if (side.key, row["method"]) in self.wanted and scored(row):
            item = (row["session_id"], row["round"] or None)
            judge = row.get("judge") or _judges(side)[0]
            key = (side.key, judge, row["method"], row["metric"])
            self.values[key][item] = scored_value(row)
            if PANEL_MEAN in _judges(side):
                pooled = (side.key, PANEL_MEAN, row["method"], row["metric"])
                self.values[pooled].setdefault(item, []).append(scored_value(row))

    def _of(
        self, side: Side, judge: str, method: str, metric: str
    ) -> dict[Item, float] | None:
        found = self.values.get((side.key, judge, method, metric))
        if judge != PANEL_MEAN or not found:
            return found
        every = len(_judges(side)) - 1  # the panel's judges, the mean aside
        return {item: sum(v) / len(v) for item, v in found.items() if len(v) == every}

    def agreement(self, same_response: SameResponse) -> list[dict[str, Any]]:
        metrics = [m for m in registry.metrics().values() if m.agreement is not None]
        found = (
            self._entry(pair, metric, same_response)
            for pair in self.pairs
            for metric in metrics
        )
        return [entry for entry in found if entry is not None]

    def _entry(
        self, pair: JudgePair, metric: Metric, same_response: SameResponse
    ) -> dict[str, Any] | None:
        """One judge of each of two runs on one method and metric (None: not
        judged by both)."""
        a, ja, b, jb, method = pair
        scale: Scale | None = metric.agreement
        if scale is None:  # (agreement() asks only of metrics with a scale)
            return None
        mine = self._of(a, ja, method, metric.id)
        theirs = self._of(b, jb, method, metric.id)
        if not mine or not theirs:
            return None
        both = sorted(set(mine) & set(theirs), key=_item_order)
        same = [item for item in both if same_response(a, b, method, *item)]
        entry = agreement([mine[i] for i in same], [theirs[i] for i in same], scale)
        if both and not same:
            entry = with_reason(entry, "agreement_no_same_responses")
        return {
            "metric": metric.id,
            "method": method,
            "a": a.column(method),
            "b": b.column(method),
            "run_a": a.label,
            "run_b": b.label,
            "judge_a": _judge_facts(a.judge, ja),
            "judge_b": _judge_facts(b.judge, jb),
            "scale": scale,
            "items_judged_by_both": len(both),
            **entry,
        }


PANEL_MEAN = "panel mean"


def _judges(side: Side) -> list[str]:
    """The judge models of a run: a panel's and its mean, or its one model."""
    models = judge_models(side.judge) or [""]
    return [*models, PANEL_MEAN] if len(models) > 1 else models


def _settings(side: Side, model: str) -> tuple[object, ...]:
    """What makes one judge of a run differ from another's."""
    judge = side.judge or {}
    return (
        model,
        judge.get("temperature"),
        judge.get("samples"),
        judge.get("history_chars"),
        json.dumps(judge.get("prompts"), sort_keys=True),
    )


def _item_order(item: tuple[str, int | None]) -> tuple[str, int]:
    return item[0], item[1] or 0


def _judge_facts(judge: dict[str, Any] | None, model: str) -> dict[str, Any] | None:
    if not judge:
        return None
    facts = {key: judge.get(key) for key in ("prompts", "temperature", "samples")}
    if model == PANEL_MEAN:  # say which judges it pools
        models = judge_models(judge)
        return {
            "model": f"{PANEL_MEAN} ({', '.join(models)})",
            "panel": models,
            **facts,
        }
    return {"model": model, **facts}
