"""A judge panel's pooled values rest on the items every judge scored.

Pooling every judge's rows would weigh a judge by how often it answered:
where one judge failed an item the other scored, the pooled AL(k) there
is that judge's alone. So before a panel suite is summarized, the rows
of an item (session, round, method, metric) that some judge of the panel
scored and another did not are left out; each method's pooled values
then carry a note naming the judges that scored fewer items. A judge that
was asked and scored none of a method's items (every call failed) leaves no
common item: every panel value of that method is null, with the note. Each
judge's own values (``<id>@<judge>``) still read all of that judge's rows.

>>> rows = [{"session_id": "s", "round": k, "method": "M", "metric": "al",
...          "value": v, "status": "ok" if v is not None else "unscored",
...          "judge": j} for k, j, v in ((1, "a", 50.0), (1, "b", 70.0),
...                                     (2, "a", 40.0), (2, "b", None))]
>>> kept, fewer = common_items(rows)
>>> kept.values(kept.where("al")), fewer
([50.0, 70.0], {('M', 'al'): {'items': 1, 'judges': ['b']}})
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.status import RowStatus
from metrics import columns, row_source
from metrics.columns import RowColumns

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


ITEM = ("session", "round", "method", "metric")
ATTEMPTED = (RowStatus.OK, RowStatus.UNSCORED, RowStatus.ERROR)


def common_items(
    rows: columns.Rows | row_source.RowSource, details: bool = False
) -> tuple[RowColumns, dict[tuple[str, str], dict[str, Any]]]:
    """The rows without the items some (answering) judge of the panel did
    not score, and per (method, metric) how many items were left out and
    which judges lacked them. Rows without a judge stay."""
    import numpy as np

    table = row_source.all_rows(rows, details)
    judge_codes = table.names["judge"].codes
    judged = table.col("judge") != judge_codes.get("", -1)
    scored = np.flatnonzero(judged & table.scored_mask())
    if len(scored) == 0:
        return table, {}
    keys = np.stack([table.col(f)[scored].astype(np.int64) for f in ITEM], axis=1)
    items, item_of = np.unique(keys, axis=0, return_inverse=True)
    item_of = item_of.reshape(-1)
    judges_per_item = np.bincount(item_of, minlength=len(items))
    asked = np.flatnonzero(judged & _attempted(table))
    method_metric = np.stack(
        [table.col(f)[asked].astype(np.int64) for f in ITEM[2:]], axis=1
    )
    answering = _answering(method_metric, table.col("judge")[asked])
    needed = np.array([len(answering[tuple(mm)]) for mm in items[:, 2:].tolist()])
    incomplete = judges_per_item < needed
    if not incomplete.any():
        return table, {}
    fewer = _left_out(table, items, incomplete, scored, item_of, answering)
    drop = np.zeros(len(table), dtype=bool)
    drop[_rows_of_items(table, items[incomplete])] = True
    return table.subset(np.flatnonzero(~drop)), fewer


def _attempted(table: RowColumns) -> NDArray[np.bool_]:
    """Rows of an item a judge was asked about: scored, unscored or failed
    (not ``not_applicable``, ``missing`` or ``not_configured``)."""
    import numpy as np

    codes = table.names["status"].codes
    mask = np.zeros(len(table), dtype=bool)
    for status in ATTEMPTED:
        mask |= table.col("status") == codes.get(status, -1)
    return mask


def _answering(
    method_metric: NDArray[np.int64], judges: NDArray[Any]
) -> dict[tuple[int, ...], set[int]]:
    """(method, metric) codes -> the judges that were asked about any of its
    items, whether they answered or not: a judge that failed every call is
    still in the panel (its absence must null the panel value, not leave the
    other judges' value under the panel's name). A judge with no row of a
    method is not in that method's panel (runs judged by different models
    are compared as one)."""
    found: dict[tuple[int, ...], set[int]] = {}
    for key, judge in zip(
        map(tuple, method_metric.tolist()), judges.tolist(), strict=True
    ):
        found.setdefault(key, set()).add(judge)
    return found


def _rows_of_items(table: RowColumns, items: NDArray[np.int64]) -> NDArray[np.intp]:
    """Positions of every row (any status) of the given items."""
    import numpy as np

    keys = np.stack([table.col(f).astype(np.int64) for f in ITEM], axis=1)
    return np.flatnonzero(np.isin(_as_records(keys), _as_records(items)))


def _as_records(keys: NDArray[np.int64]) -> NDArray[np.void]:
    """Each row of an integer matrix as one opaque value (``numpy.isin``
    compares whole rows)."""
    import numpy as np

    keys = np.ascontiguousarray(keys)
    return keys.view(np.dtype((np.void, keys.dtype.itemsize * keys.shape[1]))).ravel()


def _left_out(
    table: RowColumns,
    items: NDArray[np.int64],
    incomplete: NDArray[np.bool_],
    scored: NDArray[np.intp],
    item_of: NDArray[np.intp],
    answering: dict[tuple[int, ...], set[int]],
) -> dict[tuple[str, str], dict[str, Any]]:
    """``{(method, metric): {"items": n, "judges": [names]}}`` of the
    incomplete items: the judges named are those that did not score them."""
    names = table.names
    at_incomplete = incomplete[item_of]
    present: dict[int, set[int]] = {}

    for item, judge in zip(
        item_of[at_incomplete].tolist(),
        table.col("judge")[scored][at_incomplete].tolist(),
        strict=True,
    ):
        present.setdefault(item, set()).add(judge)
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for item, judges in present.items():
        method, metric = int(items[item, 2]), int(items[item, 3])
        key = (names["method"].names[method], names["metric"].names[metric])
        entry = found.setdefault(key, {"items": 0, "judges": set()})
        entry["items"] += 1
        entry["judges"] |= answering[(method, metric)] - judges
    judge_names = names["judge"].names
    return {
        key: {
            "items": e["items"],
            "judges": sorted(judge_names[j] for j in e["judges"]),
        }
        for key, e in found.items()
    }
