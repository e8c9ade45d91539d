"""What the alignment suite can say about its own judge, pure.

Beside every judged response the suite stores two facts that need no judge:
its length in characters (``response_chars``) and, when the file carries
them, the human labels (``human_al``, ``human_binary``). From the rows of a
run this module computes the judge-validity quantities of the results'
``judge_validity`` (``metrics/validity.py``):

* ``length_spearman``: ``{judge: ρ}``, Spearman between response length and
  ``al``, per judge;
* ``inter_judge_alpha``: with a judge panel, Krippendorff's α (interval) of
  the judges' ``al`` on the same items;
* ``cross_mode_auc``: the area under the ROC curve of ``al`` separating the
  judge's binary verdicts 1 from 0 on the same items (0.5: no relation);
* ``human``: ``{al_spearman, al_kendall, binary_kappa, n}`` against the
  human labels;
* ``samples_alpha``: Krippendorff's α of the judge's samples of one item
  (with ``samples`` ≥ 2; each sample is stored as ``al_sample@k``);

and the length-controlled score ``al_lc`` per method. The model: an
ordinary least-squares regression over every scored item,
``al = b0 + Σ_m b_m·[method = m] + c·ln(1 + chars)`` (the first method is
the reference), and ``al_lc[m] = b0 + b_m + c·mean(ln(1 + chars))``: the
method's AL predicted at the run's mean log length. When lengths do not vary
apart from the methods, ``c`` is not identified and ``al_lc`` is None.

>>> rows = [{"session_id": "s", "round": k, "method": m, "metric": metric,
...          "value": v, "status": "ok"}
...         for k, (m, al, chars) in enumerate([("A", 40, 10), ("A", 50, 20),
...                                             ("B", 60, 30), ("B", 70, 40)])
...         for metric, v in (("al", al), ("response_chars", chars))]
>>> checks = validity(rows)
>>> checks["length_spearman"], checks["cross_mode_auc"], checks["human"]
({'': 1.0}, None, None)
"""

from __future__ import annotations

import math
from collections import defaultdict

from metrics.agreement import cohen_kappa, spearman
from metrics.rows import ResultRow, result_row, scored, scored_value

# (session, round, method, judge): with a panel each judge's rows pair with
# the facts stored beside them (the facts are stored once per judge)
Item = tuple[str, int | None, str, str]


def fact_rows(key: dict, response: dict) -> list[ResultRow]:
    """The response's length and its human labels, when present."""
    rows = [result_row(key, "response_chars", float(len(response["text"])))]
    human = response.get("human") or {}
    for field, metric in (("al", "human_al"), ("binary", "human_binary")):
        if human.get(field) is not None:
            rows.append(result_row(key, metric, float(human[field])))
    return rows


def item_of(row: ResultRow) -> Item:
    return row["session_id"], row["round"], row["method"], row.get("judge") or ""


def _order(item: Item) -> tuple:
    return item[0], item[1] or 0, item[2], item[3]


def by_item(rows: list[ResultRow], metric: str) -> dict[Item, float]:
    return {
        item_of(r): scored_value(r) for r in rows if r["metric"] == metric and scored(r)
    }


def _paired(a: dict, b: dict) -> tuple[list[float], list[float]]:
    shared = sorted(set(a) & set(b), key=_order)
    return [a[i] for i in shared], [b[i] for i in shared]


def validity(rows: list[ResultRow]) -> dict:
    al, chars = by_item(rows, "al"), by_item(rows, "response_chars")
    verdicts, fine = _paired(by_item(rows, "binary"), al)
    return {
        "length_spearman": _length_spearman(al, chars),
        "cross_mode_auc": _auc(verdicts, fine),
        "human": _human(rows, al),
        "samples_alpha": samples_alpha(rows),
        "inter_judge_alpha": inter_judge_alpha(al),
    }


def _length_spearman(al: dict, chars: dict) -> dict[str, float | None] | None:
    """``{judge: ρ}`` ("" for a run whose rows name no judge)."""
    judges = sorted({item[3] for item in al})
    found = {}
    for judge in judges:
        mine = {i: v for i, v in al.items() if i[3] == judge}
        scores, lengths = _paired(mine, chars)
        found[judge] = spearman(scores, lengths) if len(scores) >= 2 else None
    return found if any(v is not None for v in found.values()) else None


def inter_judge_alpha(al: dict[Item, float]) -> float | None:
    """Krippendorff's α (interval) of a panel's AL: the items are the units,
    the judges the coders. None with fewer than two judges.

    >>> al = {("s", k, "M", j): v for k, scores in ((1, (40, 50)), (2, (80, 70)))
    ...       for j, v in zip(("a", "b"), scores)}
    >>> round(inter_judge_alpha(al), 4)
    0.85
    """
    judges = sorted({item[3] for item in al})
    raters: dict[tuple, int] = defaultdict(int)
    for item in al:
        raters[item[:3]] += 1
    units = sorted((u for u, n in raters.items() if n >= 2),
                   key=lambda u: (u[0], u[1] or 0, u[2]))  # fmt: skip
    if len(judges) < 2 or not units:
        return None
    import numpy as np

    return _alpha(
        [[al.get((*unit, judge), np.nan) for unit in units] for judge in judges]
    )


def _alpha(rows: list[list[float]]) -> float | None:
    """Krippendorff's α (interval) of coders x units (NaN: not rated); None
    when undefined (no variation, no unit rated twice)."""
    import krippendorff
    import numpy as np

    data = np.array(rows, dtype=float)
    if np.nanstd(data) == 0:
        return None
    try:
        value = float(krippendorff.alpha(data, level_of_measurement="interval"))
    except ValueError:  # e.g. no unit with values from two coders
        return None
    return value if math.isfinite(value) else None


def samples_alpha(rows: list[ResultRow]) -> float | None:
    """Krippendorff's α (interval) of the judge with itself: items are the
    units, sample k is coder k (``al_sample@k``). None with one sample.

    >>> rows = [{"session_id": "s", "round": r, "method": "M", "status": "ok",
    ...          "metric": f"al_sample@{k}", "value": v}
    ...         for r, values in ((1, (40, 50)), (2, (80, 70))) for k, v in ((1, values[0]), (2, values[1]))]
    >>> round(samples_alpha(rows), 4)
    0.85
    """
    by_sample: dict[int, dict[Item, float]] = defaultdict(dict)
    for row in rows:
        if row["metric"].startswith("al_sample@") and scored(row):
            sample = int(row["metric"].partition("@")[2])
            by_sample[sample][item_of(row)] = scored_value(row)
    if len(by_sample) < 2:
        return None
    items = sorted({i for values in by_sample.values() for i in values}, key=_order)
    import numpy as np

    return _alpha(
        [[by_sample[k].get(i, np.nan) for i in items] for k in sorted(by_sample)]
    )


def _auc(labels: list[float], scores: list[float]) -> float | None:
    if len(set(labels)) < 2:
        return None
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(labels, scores))


def _human(rows: list[ResultRow], al: dict) -> dict | None:
    human_al, human_binary = by_item(rows, "human_al"), by_item(rows, "human_binary")
    if not human_al and not human_binary:
        return None
    judged, labelled = _paired(al, human_al)
    votes, labels = _paired(by_item(rows, "binary"), human_binary)
    return {
        "al_spearman": spearman(judged, labelled) if len(judged) >= 2 else None,
        "al_kendall": _kendall(judged, labelled),
        "binary_kappa": cohen_kappa(votes, labels) if len(votes) >= 2 else None,
        "n": len(judged) + len(votes),
        "n_al": len(judged),
        "n_binary": len(votes),
    }


def _kendall(a: list[float], b: list[float]) -> float | None:
    if len(a) < 2 or len(set(a)) < 2 or len(set(b)) < 2:
        return None
    from scipy import stats as scipy_stats

    value = float(scipy_stats.kendalltau(a, b).statistic)
    return value if math.isfinite(value) else None


def length_controlled(
    rows: list[ResultRow], methods: list[str]
) -> dict[str, float | None]:
    """``al_lc`` per method (the model is in the module docstring)."""
    al, chars = by_item(rows, "al"), by_item(rows, "response_chars")
    items = sorted((i for i in al if i in chars and i[2] in methods), key=_order)
    present = [m for m in methods if any(i[2] == m for i in items)]
    if len(items) < len(present) + 2:
        return dict.fromkeys(methods)
    import numpy as np

    logs = np.log1p([chars[i] for i in items])
    design = np.column_stack(
        [np.ones(len(items))]
        + [[1.0 if i[2] == m else 0.0 for i in items] for m in present[1:]]
        + [logs]
    )
    if np.linalg.matrix_rank(design) < design.shape[1]:
        return dict.fromkeys(methods)
    coef, *_ = np.linalg.lstsq(design, np.array([al[i] for i in items]), rcond=None)
    at_mean = coef[0] + coef[-1] * logs.mean()
    effects = defaultdict(float, zip(present[1:], coef[1:-1], strict=True))
    return {m: float(at_mean + effects[m]) if m in present else None for m in methods}
