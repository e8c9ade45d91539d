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
* ``human``: ``{judge: {al_spearman, al_kendall, binary_kappa, n, n_al,
  n_binary, binary_base_rate}}`` against the human labels, each judge on its
  own (``binary_base_rate``: the majority label's share, beside κ);
* ``samples_alpha``: Krippendorff's α of the judge's samples of one item
  (with ``samples`` ≥ 2; each sample is stored as ``al_sample@k``);
* ``judge_offsets``: with a judge panel, each judge's mean signed AL
  difference from the other judges on the items they share, with n, a t
  interval, the ratio of spreads and a note (:func:`judge_offsets`): α stays
  high under a constant offset that the panel mean silently pools;

(``al_lc``, the length-controlled score, is in :mod:`metrics.suites.alignment.length_control`.)

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
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from metrics import row_source, stats
from metrics.agreement import cohen_kappa, kendall, spearman
from metrics.columns import RowColumns
from metrics.correlation_ci import criterion_agreement
from metrics.items import (
    HUMAN,
    HUMAN_SCORES,
    JUDGE_SCORES,
    MODES,
    RECORDED,
    SAMPLES,
    Items,
    Rows,
    Scored,
    lookup,
    paired,
)
from metrics.rows import ResultRow, RowKey, result_row
from metrics.suites.alignment import rank_checks

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


def fact_rows(key: RowKey, response: dict[str, Any]) -> list[ResultRow]:
    """The response's length and its human labels, when present."""
    rows = [result_row(key, "response_chars", float(len(response["text"])))]
    human = response.get("human") or {}
    for field, metric in (("al", "human_al"), ("binary", "human_binary")):
        if human.get(field) is not None:
            rows.append(result_row(key, metric, float(human[field])))
    for criterion, score in (human.get("scores") or {}).items():
        low, high = score["scale"]
        detail = {"criterion": criterion, "scale": [low, high]}
        rows.append(
            result_row(
                key,
                score_metric(criterion, low, high),
                float(score["value"]),
                detail=detail,
            )
        )
    for judge, scores in (response.get("judges") or {}).items():
        for criterion, score in scores.items():
            low, high = score["scale"]
            detail = {
                "judge": judge,
                "criterion": criterion,
                "scale": [low, high],
                "recorded": True,
            }
            rows.append(
                result_row(
                    key,
                    recorded_metric(judge, criterion, low, high),
                    float(score["value"]),
                    detail=detail,
                )
            )
    return rows


def recorded_metric(judge: str, criterion: str, low: int, high: int) -> str:
    """The row id of a recorded judge's verdict on a criterion's scale
    (stored with no judge of the run: the judge is in the id).

    >>> recorded_metric("CharacterJudge/zh", "engagement", 1, 5)
    'recorded@CharacterJudge/zh@engagement:1-5'
    >>> recorded_judge("recorded@CharacterJudge/zh@engagement:1-5")
    ('CharacterJudge/zh', 'human_score@engagement:1-5')
    """
    return f"{RECORDED}{judge}@{criterion}:{low}-{high}"


def recorded_judge(metric: str) -> tuple[str, str]:
    """A recorded row's judge, and the human score's row id it is checked against."""
    judge, _, criterion = metric.removeprefix(RECORDED).rpartition("@")
    return judge, f"{HUMAN_SCORES}{criterion}"


def score_metric(criterion: str, low: int, high: int) -> str:
    """The row id of a human score on its own scale: the scale is in the id,
    so scores of one criterion on two scales are never pooled.

    >>> score_metric("engagement", 1, 5), criterion_scale("human_score@engagement:1-5")
    ('human_score@engagement:1-5', ('engagement', [1, 5]))
    """
    return f"{HUMAN_SCORES}{criterion}:{low}-{high}"


def criterion_scale(metric: str) -> tuple[str, list[int]]:
    criterion, _, scale = metric.removeprefix(HUMAN_SCORES).rpartition(":")
    low, _, high = scale.partition("-")
    return criterion, [int(low), int(high)]


def validity(rows: Rows) -> dict[str, Any]:
    """Each check reads only its own metrics' rows (one part at a time);
    beside each quantity ``<quantity>_n``, what it rests on (responses or
    items; the human agreement carries its own n)."""
    combined, by_method, counted = rank_checks.length_spearman(rows)
    auc, auc_n = rank_checks.cross_mode_auc(rows)
    samples, samples_n = samples_alpha_n(rows)
    judges, judges_n = inter_judge_alpha_n(rows)
    return {
        "length_spearman": combined,
        "length_spearman_n": _weights(by_method, counted),
        "length_spearman_by_method": by_method,
        "length_spearman_by_method_n": counted,
        "cross_mode_auc": auc,
        "cross_mode_auc_n": auc_n,
        "human": _human(rows),
        "samples_alpha": samples,
        "samples_alpha_n": samples_n,
        "inter_judge_alpha": judges,
        "inter_judge_alpha_n": judges_n,
        # only with recorded judges (a run without them aggregates as before)
        **({"recorded_judges": named} if (named := recorded_judges(rows)) else {}),
        "judge_offsets": judge_offsets(rows),
    }


def _weights(
    by_method: dict[str, Any] | None, counted: dict[str, Any] | None
) -> dict[str, Any] | None:
    """``{judge: n}``: the responses behind a judge's combined ρ (those of
    the methods that have a ρ, as it weighs them).

    >>> _weights({"j": {"A": 0.5, "B": None}}, {"j": {"A": 12, "B": 1}})
    {'j': 12}
    """
    if not by_method or not counted:
        return None
    return {
        judge: sum(counted[judge][m] for m, rho in per.items() if rho is not None)
        for judge, per in by_method.items()
    }


def inter_judge_alpha(rows: Rows) -> float | None:
    """Krippendorff's α (interval) of a panel's AL: the items are the units,
    the judges the coders. None with fewer than two judges.

    >>> rows = [{"session_id": "s", "round": k, "method": "M", "judge": j,
    ...          "metric": "al", "value": v, "status": "ok"}
    ...         for k, scores in ((1, (40, 50)), (2, (80, 70)))
    ...         for j, v in zip(("a", "b"), scores)]
    >>> round(inter_judge_alpha(rows), 4)
    0.85
    """
    return inter_judge_alpha_n(rows)[0]


def inter_judge_alpha_n(rows: Rows) -> tuple[float | None, int | None]:
    """:func:`inter_judge_alpha` and its n: the items two judges or more
    scored (None with fewer than two judges)."""
    if len(set(row_source.judge_names(rows)) - {""}) < 2:
        return None, None  # (from a source: no judge's rows are read)
    items = Items(row_source.part(rows, ["al"]))
    return _inter_judge_alpha(items, items.scored("al"))


def _inter_judge_alpha(items: Items, al: Scored) -> tuple[float | None, int]:
    import numpy as np

    judges = np.unique(items.judge(al.keys)).tolist()
    units, raters = np.unique(al.keys // items.size["judge"], return_counts=True)
    units = units[raters >= 2]
    if len(judges) < 2 or not len(units):
        return None, len(units)
    alpha = _alpha([lookup(al, units * items.size["judge"] + j) for j in judges])
    return alpha, len(units)


def _alpha(
    rows: Sequence[Sequence[float]] | Sequence[NDArray[np.float64]],
    level: Literal["interval", "ordinal"] = "interval",
) -> float | None:
    """Krippendorff's α (``level``: interval or ordinal) of coders x units
    (NaN: not rated); None when undefined (no variation, no unit rated
    twice)."""
    import krippendorff
    import numpy as np

    data = np.array(rows, dtype=float)
    if np.nanstd(data) == 0:
        return None
    try:
        value = float(krippendorff.alpha(data, level_of_measurement=level))
    except ValueError:  # e.g. no unit with values from two coders
        return None
    return value if math.isfinite(value) else None


def samples_alpha(rows: Rows) -> dict[str, float | None] | None:
    """``{judge: α}``: Krippendorff's α (interval) of each judge with itself:
    items are the units, sample k is coder k (``al_sample@k``). None with
    one sample.

    >>> rows = [{"session_id": "s", "round": r, "method": "M", "status": "ok",
    ...          "metric": f"al_sample@{k}", "value": v}
    ...         for r, values in ((1, (40, 50)), (2, (80, 70))) for k, v in ((1, values[0]), (2, values[1]))]
    >>> {judge: round(alpha, 4) for judge, alpha in samples_alpha(rows).items()}
    {'': 0.85}
    """
    return samples_alpha_n(rows)[0]


def samples_alpha_n(rows: Rows) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """:func:`samples_alpha` and ``{judge: n}``, the items sampled twice or
    more (None with one sample)."""
    items = Items(row_source.part(rows, (), (SAMPLES,)))
    found = {
        judge: _samples_alpha(items, index) for index, judge in enumerate(items.judges)
    }
    values = {judge: alpha for judge, (alpha, _n) in found.items()}
    if not any(v is not None for v in values.values()):
        return None, None
    return values, {judge: n for judge, (_alpha, n) in found.items()}


def _samples_alpha(items: Items, judge: int) -> tuple[float | None, int]:
    import numpy as np

    table = items.table
    by_sample: dict[int, list[str]] = defaultdict(list)
    for metric in table.names["metric"].names:
        if metric.startswith(SAMPLES) and len(table.where(metric)):
            by_sample[int(metric.partition("@")[2])].append(metric)
    if len(by_sample) < 2:
        return None, 0
    scored = {
        k: _of_judge(items, items.scored(index=_rows_of(table, names)), judge)
        for k, names in by_sample.items()
    }
    keys = np.unique(np.concatenate([found.keys for found in scored.values()]))
    if not len(keys):
        return None, 0
    coded = [lookup(scored[k], keys) for k in sorted(scored)]
    twice = int((np.sum(~np.isnan(np.array(coded, dtype=float)), axis=0) >= 2).sum())
    return _alpha(coded), twice


def _rows_of(table: RowColumns, metrics: list[str]) -> NDArray[np.intp]:
    import numpy as np

    return np.unique(np.concatenate([table.where(metric) for metric in metrics]))


def _human(rows: Rows) -> dict[str, Any] | None:
    """``{judge: agreement}`` with the human labels, each judge on its own:
    pooling a panel pairs every labelled response once per judge (two judges
    10 points apart gave ρ 0.78 where each alone has 1.0). ``n`` counts the
    labelled responses the judge scored (``n_al``, ``n_binary`` by label).
    Human scores on their own scales (``human.scores``) give ``scores``:
    ``{"<criterion>:<low>-<high>": {criterion, scale, spearman, kendall, n}}``,
    the judge's AL against each criterion's scores; with no AL or binary
    label, ``n`` counts the items with a score."""
    prefixes = (HUMAN_SCORES, RECORDED, JUDGE_SCORES)
    scored = row_source.part(rows, HUMAN, prefixes)  # one read
    has_labels = bool(len(scored.where(HUMAN)))
    criteria, recorded, judged_on = (
        sorted(
            {
                scored.names["metric"].names[code]
                for code in scored.col("metric")[scored.where(prefix=prefix)].tolist()
            }
        )
        for prefix in prefixes
    )
    if not has_labels and not criteria:
        return None  # (labels are rare: the judge's rows are read only with them)
    items = Items(row_source.part(rows, MODES + HUMAN, prefixes))
    human_al, human_binary = items.scored("human_al"), items.scored("human_binary")
    found = _recorded(items, recorded, criteria)
    for index, judge in enumerate(items.judges):
        if scores := _criteria(items, criteria, index, judged_on):
            found[judge] = {"n": _labelled_items(scores), "scores": scores}
        if not has_labels:
            continue
        al = _of_judge(items, items.scored("al"), index)
        binary = _of_judge(items, items.scored("binary"), index)
        mine_al = _labels_for(items, human_al, index)
        mine_binary = _labels_for(items, human_binary, index)
        judged, labelled = paired(al, mine_al)
        votes, labels = paired(binary, mine_binary)
        import numpy as np

        both = np.union1d(
            np.intersect1d(al.keys, mine_al.keys),
            np.intersect1d(binary.keys, mine_binary.keys),
        )
        if not len(both):
            continue
        found[judge] = {
            **found.get(judge, {}),
            **{
                "al_spearman": spearman(judged, labelled) if len(judged) >= 2 else None,
                "al_kendall": kendall(judged, labelled),
                "binary_kappa": cohen_kappa(votes, labels) if len(votes) >= 2 else None,
                "n": len(both),
                "n_al": len(judged),
                "n_binary": len(votes),
                "binary_base_rate": base_rate(labels),
            },
        }
    return found or None


def _criteria(
    items: Items, criteria: list[str], judge: int, judged_on: list[str] | None = None
) -> dict[str, Any]:
    """``{criterion: {spearman, kendall, n, scale, keys, source}}``: the
    judge's score of each criterion on the criterion's own scale (a
    protocol's criterion mode: ``judge_score@…``, ``source`` "criterion",
    with the weighted κ as the scales are the same) against the human
    scores, else its AL against them (``source`` "al": ranks only, the two
    scales need not be the same); ``keys``, the items, taken out by
    :func:`_labelled_items`."""
    import numpy as np

    al = _of_judge(items, items.scored("al"), judge)
    found = {}
    for metric in criteria:
        labels = _labels_for(items, items.scored(metric), judge)
        criterion, scale = criterion_scale(metric)
        key = f"{criterion}:{scale[0]}-{scale[1]}"
        own = f"{JUDGE_SCORES}{key}"
        mine = (
            _of_judge(items, items.scored(own), judge)
            if own in (judged_on or ())
            else None
        )
        if mine is not None and len(mine.keys):
            judged, labelled = paired(mine, labels)
            same, source, values = scale, "criterion", mine
        else:
            judged, labelled = paired(al, labels)
            same, source, values = None, "al", al
        if not judged:
            continue
        found[key] = {
            "criterion": criterion,
            "scale": scale,
            "source": source,
            **criterion_agreement(judged, labelled, same_scale=same),
            "keys": np.intersect1d(values.keys, labels.keys),
        }
    return found


def _recorded(items: Items, recorded: list[str], criteria: list[str]) -> dict[str, Any]:
    """``{judge: {recorded: True, n, scores}}``: each recorded judge's
    verdicts against the human scores of the same criterion and scale, item
    by item (both are stored with no judge of the run, or the human scores
    once per live judge: read per item, whatever judge)."""
    import numpy as np

    found: dict[str, Any] = {}
    for metric in recorded:
        judge, human = recorded_judge(metric)
        if human not in criteria:
            continue
        mine, labels = (
            _by_item(items, items.scored(metric)),
            _by_item(items, items.scored(human)),
        )
        judged, labelled = paired(mine, labels)
        if not judged:
            continue
        criterion, scale = criterion_scale(human)
        entry = found.setdefault(judge, {"recorded": True, "scores": {}})
        entry["scores"][f"{criterion}:{scale[0]}-{scale[1]}"] = {
            "criterion": criterion,
            "scale": scale,
            **criterion_agreement(judged, labelled, same_scale=scale),
            "keys": np.intersect1d(mine.keys, labels.keys),
        }
    for entry in found.values():
        entry["n"] = _labelled_items(entry["scores"])
    _alpha_with_live(items, found)
    return found


def _alpha_with_live(items: Items, found: dict[str, Any]) -> None:
    """Beside each recorded judge's criterion, ``alpha_with``: ``{live
    judge: {alpha, n, level}}``, Krippendorff's α of the recorded verdicts
    and a judge of the run's own scores of the same criterion and scale
    (``judge_score@…``) on the items both scored; ``ordinal`` when every
    value is a point of the scale, else ``interval`` (a recorded mean of
    samples, 2.4, is between points). Left out when no judge of the run
    scored the criterion."""
    import numpy as np

    for judge, entry in found.items():
        for key, scores in entry["scores"].items():
            theirs = _by_item(items, items.scored(f"{RECORDED}{judge}@{key}"))
            live = items.scored(f"{JUDGE_SCORES}{key}")
            alphas = {}
            for index, name in enumerate(items.judges):
                mine = _of_judge(items, live, index)
                if not len(mine.keys):
                    continue
                mine = Scored(mine.keys // items.size["judge"], mine.values)
                a, b = paired(theirs, mine, as_lists=False)
                points = set(range(scores["scale"][0], scores["scale"][1] + 1))
                whole = bool(len(a)) and all(
                    float(v).is_integer() and int(v) in points
                    for v in np.concatenate([a, b]).tolist()
                )
                level: Literal["interval", "ordinal"] = (
                    "ordinal" if whole else "interval"
                )
                alphas[name] = {
                    "alpha": _alpha([a.tolist(), b.tolist()], level)
                    if len(a)
                    else None,
                    "n": len(a),
                    "level": level,
                }
            if alphas:
                scores["alpha_with"] = alphas


def _by_item(items: Items, scored: Scored) -> Scored:
    """Values by item whatever judge stored them (the first of an item's)."""
    import numpy as np

    keys, first = np.unique(scored.keys // items.size["judge"], return_index=True)
    return Scored(keys, scored.values[first])


def recorded_judges(rows: Rows) -> list[str] | None:
    """The names of the recorded judges whose verdicts the rows carry."""
    table = row_source.part(rows, (), (RECORDED,))
    names = table.names["metric"].names
    codes = set(table.col("metric")[table.where(prefix=RECORDED)].tolist())
    return sorted({recorded_judge(names[code])[0] for code in codes}) or None


def _labelled_items(scores: dict[str, Any]) -> int:
    """The items with a human score the judge scored (each once), with the
    item numbers dropped from ``scores``."""
    import numpy as np

    keys = [found.pop("keys") for found in scores.values()]
    return len(np.unique(np.concatenate(keys)))


def base_rate(labels: Iterable[float]) -> float | None:
    """The majority class's share of binary labels: the agreement a judge
    that always answers the commoner label reaches (read beside κ).

    >>> base_rate([1.0, 1.0, 0.0, 1.0]), base_rate([])
    (0.75, None)
    """
    labels = list(labels)
    if not labels:
        return None
    share = sum(1 for label in labels if label == 1) / len(labels)
    return max(share, 1 - share)


def _labels_for(items: Items, labels: Scored, judge: int) -> Scored:
    """The human labels as judge ``judge``'s items: a label stored with no
    judge (as runs store them) stands beside every judge's score of the
    item; one stored under a judge (an earlier release) beside that one's."""
    import numpy as np

    of = items.judge(labels.keys)
    keys, values = labels.keys[of == judge], labels.values[of == judge]
    if "" in items.judges and items.judges.index("") != judge:
        unjudged = of == items.judges.index("")
        moved = labels.keys[unjudged] - of[unjudged] + judge  # the judge: last digit
        keys = np.concatenate([keys, moved])
        values = np.concatenate([values, labels.values[unjudged]])
    keys, first = np.unique(keys, return_index=True)
    return Scored(keys, values[first])


def _of_judge(items: Items, scored: Scored, judge: int) -> Scored:
    mine = items.judge(scored.keys) == judge
    return Scored(scored.keys[mine], scored.values[mine])


# an offset's spread ratio outside [1/SCALE_RATIO, SCALE_RATIO]: the judges'
# scores spread so differently that they may use different scales
SCALE_RATIO = 2.0


def judge_offsets(rows: Rows) -> dict[str, Any] | None:
    """``{judge: {offset, n, ci_low, ci_high, spread_ratio, note}}`` of a
    panel: per judge, the mean signed difference of its AL from the mean of
    the panel's other judges on the items it and at least one other judge
    scored, with n (those items) and a Student-t 95% interval; the ratio of
    its scores' standard deviation to the other judges' mean standard
    deviation on the same items; and a note when the interval excludes 0
    (``judge_offset``), the offset is the same non-zero difference on every
    item (``judge_offset_constant``) or the ratio is outside [1/2, 2]
    (``judge_scale``).
    A panel mean pools these offsets; α can stay high under a constant one.
    None with fewer than two judges.

    >>> rows = [{"session_id": "s", "round": k, "method": "M", "judge": j,
    ...          "metric": "al", "value": v + (6 if j == "b" else 0), "status": "ok"}
    ...         for k, v in enumerate((40, 55, 62, 70, 81), start=1) for j in "ab"]
    >>> found = judge_offsets(rows)
    >>> found["b"]["offset"], found["b"]["n"], found["b"]["ci_low"], found["b"]["ci_note"]
    (6.0, 5, None, 'ci_no_variation')
    >>> found["b"]["note"]
    {'code': 'judge_offset_constant', 'params': {'judge': 'b', 'offset': '+6.00'}}

    An offset the same on every item has a t interval of width 0, which is
    never shown as one: both ends None, ``ci_note`` ``ci_no_variation``,
    and the note ``judge_offset_constant`` (no interval to quote).
    """
    if len(set(row_source.judge_names(rows)) - {""}) < 2:
        return None
    items = Items(row_source.part(rows, ["al"]))
    al = items.scored("al")
    import numpy as np

    judges = np.unique(items.judge(al.keys)).tolist()
    if len(judges) < 2:
        return None
    units = np.unique(al.keys // items.size["judge"])
    table = np.array([lookup(al, units * items.size["judge"] + j) for j in judges])
    found = {}
    for row, judge in enumerate(judges):
        others = np.delete(table, row, axis=0)
        rated = ~np.isnan(others)
        shared = ~np.isnan(table[row]) & rated.any(axis=0)
        mine = table[row][shared]
        theirs = np.nanmean(others[:, shared], axis=0) if shared.any() else mine
        ci = stats.mean_ci((mine - theirs).tolist())
        name = items.judges[judge]
        found[name] = {
            "offset": ci["mean"],
            "n": ci["n"],
            "ci_low": ci["ci_low"],
            "ci_high": ci["ci_high"],
            **({"ci_note": ci["ci_note"]} if ci.get("ci_note") else {}),
            "spread_ratio": _spread_ratio(mine, others[:, shared]),
        }
        found[name]["note"] = _offset_note(name, found[name])
    return found


def _spread_ratio(
    mine: NDArray[np.float64], others: NDArray[np.float64]
) -> float | None:
    """SD of a judge's scores over the SD of each other judge's scores on the
    same items (their mean); None when undefined (under two items, or the
    others do not vary)."""
    import numpy as np

    if len(mine) < 2:
        return None
    spreads = [
        np.std(v[~np.isnan(v)], ddof=1) for v in others if (~np.isnan(v)).sum() >= 2
    ]
    theirs = float(np.mean(spreads)) if spreads else 0.0
    return float(np.std(mine, ddof=1)) / theirs if theirs > 0 else None


def _offset_note(judge: str, found: dict[str, Any]) -> dict[str, Any] | None:
    low, high, ratio = found["ci_low"], found["ci_high"], found["spread_ratio"]
    if ratio is not None and not 1 / SCALE_RATIO <= ratio <= SCALE_RATIO:
        return {
            "code": "judge_scale",
            "params": {"judge": judge, "ratio": f"{ratio:.2f}"},
        }
    if found.get("ci_note") and stats.at_resolution(found["offset"]) != 0.0:
        # the same difference on every item: no interval to quote
        params = {"judge": judge, "offset": f"{found['offset']:+.2f}"}
        return {"code": "judge_offset_constant", "params": params}
    if low is not None and (low > 0 or high < 0):
        params = {
            "judge": judge,
            "offset": f"{found['offset']:+.2f}",
            "ci_low": f"{low:.2f}",
            "ci_high": f"{high:.2f}",
        }
        return {"code": "judge_offset", "params": params}
    return None
