"""How many sessions stand behind each summary value: ``<id>_n``.

One definition for every suite, so a reader (and a paper's caption) can
trust it: ``<id>_n`` is the number of sessions in which the method has at
least one scored row of the metric the summary value rests on
(``Suite.source_of``). For a keyed value ``<id>@<key>`` it counts the
sessions with a scored row of any metric keyed ``@<key>`` (e.g. a slot
topic), under ``<id>_n@<key>`` (a key may itself end in ``_n``). Sessions, not rows: rounds of one session are correlated, so the
session count is the sample size a reader should weigh.

>>> from metrics import registry
>>> rows = [{"session_id": s, "method": "M", "metric": "nvcs", "status": "ok",
...          "value": 0.5} for s in ("a", "a", "b")]
>>> summary = {"M": {"nvcs_avg": 0.5, "ertd_avg": None}}
>>> add_counts(summary, registry.get("style"), rows)
>>> summary["M"]["nvcs_avg_n"], summary["M"]["ertd_avg_n"]
(2, 0)
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

from metrics import columns, row_source
from metrics.suite import Suite

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


N_SUFFIX = "_n"


def count_key(summary_id: str) -> str:
    """The key of the session count of a summary value.

    >>> count_key("nvcs_avg"), count_key("slot_f1@basic_info")
    ('nvcs_avg_n', 'slot_f1_n@basic_info')
    """
    base, at, key = summary_id.partition("@")
    return f"{base}{N_SUFFIX}{at}{key}"


def is_count(key: str) -> bool:
    """Whether a summary key is a session count (see :func:`count_key`)."""
    return key.partition("@")[0].endswith(N_SUFFIX)


def session_counts(
    rows: columns.Rows,
) -> tuple[dict[tuple[str, str], int], dict[tuple[str, str], int]]:
    """How many sessions have a scored row: per ``(method, metric)``, and per
    ``(method, key)`` for metrics keyed ``<id>@<key>`` (a keyed row also
    counts for ``(method, <id>)``: ``pairwise@B`` for ``pairwise``).

    >>> rows = [{"session_id": s, "method": "M", "metric": m, "status": "ok",
    ...          "value": 1.0} for s, m in (("a", "f@t"), ("b", "f@t"), ("b", "f"))]
    >>> by_metric, by_key = session_counts(rows)
    >>> by_metric[("M", "f")], by_metric[("M", "f@t")], by_key[("M", "t")]
    (2, 2, 2)
    """
    import numpy as np

    table = row_source.scored_triples(rows)
    sessions = max(len(table.names["session"].names), 1)
    # label -> method x session
    by_metric: dict[str, list[NDArray[np.int64]]] = defaultdict(list)
    by_key: dict[str, list[NDArray[np.int64]]] = defaultdict(list)
    for metric in table.names["metric"].names:
        index = table.where(metric)
        if not len(index):
            continue
        method = table.col("method")[index].astype(np.int64)
        pairs = np.unique(method * sessions + table.col("session")[index])
        by_metric[metric].append(pairs)
        if "@" in metric:
            base, _, key = metric.partition("@")
            by_metric[base].append(pairs)  # e.g. pairwise@B for pairwise
            by_key[key].append(pairs)
    methods = table.names["method"].names
    return _count(by_metric, sessions, methods), _count(by_key, sessions, methods)


def _count(
    found: dict[str, list[NDArray[np.int64]]], sessions: int, methods: list[str]
) -> dict[tuple[str, str], int]:
    """Distinct sessions per (method, label) from method x session numbers."""
    import numpy as np

    counted: dict[tuple[str, str], int] = {}

    for label, parts in found.items():
        pairs = np.unique(np.concatenate(parts)) if len(parts) > 1 else parts[0]
        method, n = np.unique(pairs // sessions, return_counts=True)
        for code, count in zip(method.tolist(), n.tolist(), strict=True):
            counted[methods[code], label] = count
    return counted


def add_counts(
    summary: dict[str, dict[str, Any]], suite: Suite, rows: columns.Rows
) -> None:
    """Add ``<id>_n`` beside every summary value of ``suite`` that lacks one
    (a suite may set its own); values the suite does not register are left
    alone."""
    by_metric, by_key = session_counts(rows)
    registered = {m.id: m for m in suite.summary_metrics()}
    for method, values in summary.items():
        for summary_id in [k for k in values if not is_count(k)]:
            if count_key(summary_id) in values:
                continue
            base, _, key = summary_id.partition("@")
            metric = registered.get(base)
            source = suite.source_of(metric) if metric else None
            if source is None:
                continue
            found = (
                by_key.get((method, key)) if key else by_metric.get((method, source))
            )
            values[count_key(summary_id)] = found or 0
