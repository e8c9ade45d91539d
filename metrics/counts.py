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
from collections.abc import Iterable

from metrics.rows import ResultRow, scored
from metrics.suite import Suite

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


def scored_sessions(
    rows: Iterable[ResultRow],
) -> tuple[dict[tuple[str, str], set], dict[tuple[str, str], set]]:
    """``(method, metric) -> sessions`` and ``(method, key) -> sessions`` of
    the scored rows (the second for metrics keyed ``<id>@<key>``)."""
    by_metric: dict[tuple[str, str], set] = defaultdict(set)
    by_key: dict[tuple[str, str], set] = defaultdict(set)
    for row in rows:
        if not scored(row):
            continue
        method, metric, session = row["method"], row["metric"], row["session_id"]
        by_metric[method, metric].add(session)
        if "@" in metric:
            base, _, key = metric.partition("@")
            by_key[method, key].add(session)
            by_metric[method, base].add(session)  # e.g. pairwise@B for pairwise
    return by_metric, by_key


def add_counts(
    summary: dict[str, dict], suite: Suite, rows: Iterable[ResultRow]
) -> None:
    """Add ``<id>_n`` beside every summary value of ``suite`` that lacks one
    (a suite may set its own); values the suite does not register are left
    alone."""
    by_metric, by_key = scored_sessions(rows)
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
            found = by_key[method, key] if key else by_metric[method, source]
            values[count_key(summary_id)] = len(found)
