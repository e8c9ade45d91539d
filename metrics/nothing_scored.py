"""Why a table's summary value is null when nothing behind it was scored.

A value whose rows were scored and that is still null says why through its
suite or the panel (a line through one round, a panel's items, ...). A
value with no scored row behind it (``<id>_n`` 0) says why from the
statuses of the method's rows of the metric it rests on
(``Suite.source_of``): every row not applicable (a judge protocol that
does not ask for it: MT-Bench's and ALOE's keep-chatting verdict, ALOE's
pairwise), unscored, an error, a reply the file lacks, no judge, a mix of
those, or no row at all. A reply the file lacks (or a blank one, or a
failed chunk) has its row on the suite's headline metric only
(``metrics/replies.py``), so a source with no row of the method reads the
headline's statuses. Pure; reads the statuses of a metric or two
(``row_source.part``), only when some value needs a reason.

>>> from metrics import registry
>>> rows = [{"session_id": "s", "round": 1, "method": m, "metric": "binary",
...          "value": None, "status": status, "judge": "j"}
...         for m, status in (("A", "not_applicable"), ("B", "unscored"))]
>>> summary = {m: {"binary_rate": None, "binary_rate_n": 0} for m in "ABC"}
>>> found = notes(registry.get("alignment"), rows, summary, ["A", "B", "C"], [])
>>> {m: found[m]["binary_rate"]["code"] for m in found}  # doctest: +NORMALIZE_WHITESPACE
{'A': 'none_scored_not_applicable', 'B': 'none_scored_unscored',
 'C': 'none_scored_no_rows'}
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from core.status import RowStatus
from metrics import columns, counts, row_source
from metrics.suite import Suite

# the reason when every row behind a value has one status
BY_STATUS = {
    RowStatus.NOT_APPLICABLE: "none_scored_not_applicable",
    RowStatus.UNSCORED: "none_scored_unscored",
    RowStatus.ERROR: "none_scored_error",
    RowStatus.MISSING: "none_scored_missing",
    RowStatus.NOT_CONFIGURED: "no_judge",
}
MIXED = "none_scored"  # rows of several statuses, none of them ok
NO_ROWS = "none_scored_no_rows"


def notes(
    suite: Suite,
    rows: columns.Rows | row_source.RowSource,
    summary: dict[str, dict[str, Any]],
    methods: list[str],
    said: Iterable[dict[str, dict[str, Any]]],
) -> dict[str, dict[str, dict[str, Any]]]:
    """``{method: {summary id: {"code"}}}`` for the suite's table values
    that are null with no session behind them and no reason in ``said``
    (the notes already given, ``{method: {summary id: note}}``)."""
    given = [found for found in said if found]
    wanted: dict[str, list[tuple[str, str]]] = {}  # source -> (method, id)
    for metric in suite.summary_metrics():
        source = suite.source_of(metric)
        if not metric.in_table or source is None:
            continue
        for method in methods:
            values = summary.get(method, {})
            if values.get(metric.id) is not None:
                continue
            if values.get(counts.count_key(metric.id)):
                continue  # rows were scored: the suite says why, if at all
            if any(metric.id in (found.get(method) or {}) for found in given):
                continue
            wanted.setdefault(source, []).append((method, metric.id))
    if not wanted:
        return {}
    headline = suite.headline.id
    statuses = _statuses(rows, {*wanted, headline})
    found: dict[str, dict[str, dict[str, Any]]] = {}
    for source, nulls in wanted.items():
        for method, metric_id in nulls:
            kinds = statuses.get((method, source))
            if not kinds:  # the reply-level rows: missing, blank, failed
                kinds = statuses.get((method, headline), set()) - {RowStatus.OK}
            found.setdefault(method, {})[metric_id] = {"code": _code(kinds)}
    return found


def _code(kinds: set[str] | None) -> str:
    """The reason for the statuses of the rows behind a value.

    >>> _code({"missing"}), _code({"missing", "unscored"}), _code(None)
    ('none_scored_missing', 'none_scored', 'none_scored_no_rows')
    """
    if not kinds:
        return NO_ROWS
    [kind, *others] = kinds
    return MIXED if others else BY_STATUS.get(RowStatus(kind), MIXED)


def _statuses(
    rows: columns.Rows | row_source.RowSource, bases: set[str]
) -> dict[tuple[str, str], set[str]]:
    """``{(method, metric): statuses}`` of the rows of ``bases`` (a keyed
    row ``<id>@<key>`` counts for ``<id>``: ``pairwise@B`` for
    ``pairwise``), any status."""
    import numpy as np

    table = row_source.part(rows, sorted(bases), [f"{base}@" for base in bases])
    names = table.names
    metric_names = names["metric"].names
    index = table.where(
        [name for name in metric_names if name.partition("@")[0] in bases],
        scored=False,
    )
    if not len(index):
        return {}
    keys = np.stack(
        [table.col(f)[index].astype(np.int64) for f in ("method", "metric", "status")],
        axis=1,
    )
    found: dict[tuple[str, str], set[str]] = {}
    for method, metric, status in np.unique(keys, axis=0).tolist():
        key = (names["method"].names[method], metric_names[metric].partition("@")[0])
        found.setdefault(key, set()).add(names["status"].names[status])
    return found
