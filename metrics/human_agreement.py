"""Agreement between the judge and people who labelled a run's replies in an
annotation queue, and among those people (pure; ``pipeline/service/annotations.py``).

* Per judge: Spearman ρ and Kendall τ between its AL and the annotators'
  mean AL of each item, Cohen's κ between its binary verdict and the
  annotators' majority, each with a 95% bootstrap interval (items
  resampled, ``RESAMPLES``, fixed seed) and n. Items whose annotators'
  votes tie have no majority and are left out of κ; ``majority_tied``
  counts them (0 too), so κ is read with what it left out.
* Among the annotators: Krippendorff's α, interval for AL and nominal for
  the binary answer, over the items two or more of them labelled, with n.
* The judge beside the people: α of the annotators with the judge added as
  one more coder. When it is not below the annotators' own α, the judge
  disagrees with them no more than they disagree with each other.
* Per method: the annotators' mean AL (over items) beside each judge's mean
  AL on the same items, so a reader sees whether the rankings agree.

Labels are ``(item key, annotator, al, binary)``; an item key is
``(session_id, round, method)``; ``judged[judge][key] = (al, binary)``.

>>> labels = [(("s", 1, "A"), "ann", 80.0, 1), (("s", 1, "A"), "bob", 70.0, 1),
...           (("s", 2, "A"), "ann", 20.0, 0), (("s", 2, "A"), "bob", 30.0, 0),
...           (("s", 1, "B"), "ann", 50.0, 1), (("s", 1, "B"), "bob", 60.0, 0)]
>>> judged = {"j": {("s", 1, "A"): (90.0, 1), ("s", 2, "A"): (10.0, 0), ("s", 1, "B"): (55.0, 1)}}
>>> found = human_agreement(labels, judged)
>>> found["judges"]["j"]["al_spearman"]["value"], found["judges"]["j"]["n"]
(1.0, 3)
>>> found["judges"]["j"]["n_binary"], found["judges"]["j"]["majority_tied"]  # B's votes tie
(2, 1)
>>> round(found["alpha_al"]["value"], 3), found["alpha_al"]["n"]
(0.907, 3)
>>> found["methods"]["A"]["human_al"], found["methods"]["A"]["judge_al"]
(50.0, {'j': 50.0})
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from statistics import fmean
from typing import Any, Literal

from metrics.agreement import (
    cohen_kappa,
    kendall,
    kendall_rows,
    spearman,
    spearman_rows,
)
from metrics.notes import note
from metrics.stats import CI_NO_SPREAD, spread_or_none

RESAMPLES, SEED = 1000, 20261126
Key = tuple[str, int, str]  # (session_id, round, method) of a labelled reply
Vote = tuple[float | None, int | None]  # (AL, binary) of one annotator or judge
Label = tuple[
    Sequence[Any], str, float | None, int | None
]  # (key, annotator, AL, binary)
Judged = Mapping[str, Mapping[Key, Vote]]  # judge -> key -> its verdicts
# a statistic's version over rows of resamples (metrics/agreement.py)
ROWS: dict[Callable[..., float | None], Callable[..., Any]] = {
    spearman: spearman_rows,
    kendall: kendall_rows,
}


def human_agreement(labels: Iterable[Label], judged: Judged) -> dict[str, Any] | None:
    """See the module; None without labels."""
    by_item: dict[Key, dict[str, Vote]] = defaultdict(dict)
    for key, annotator, al, binary in labels:
        by_item[tuple(key)][annotator] = (al, binary)
    if not by_item:
        return None
    annotators = sorted({a for found in by_item.values() for a in found})
    return {
        "n_items": len(by_item),
        "n_labels": sum(map(len, by_item.values())),
        "annotators": annotators,
        "alpha_al": _alpha(by_item, annotators, 0, "interval"),
        "alpha_binary": _alpha(by_item, annotators, 1, "nominal"),
        "judges": {
            judge: _judge(by_item, annotators, values)
            for judge, values in sorted(judged.items())
        },
        "methods": _methods(by_item, judged),
    }


def _mean_al(found: Mapping[str, Vote]) -> float | None:
    values = [al for al, _ in found.values() if al is not None]
    return fmean(values) if values else None


def _majority(found: Mapping[str, Vote]) -> int | None:
    votes = [b for _, b in found.values() if b is not None]
    ones = sum(votes)
    if not votes or ones * 2 == len(votes):
        return None  # no label, or a tie
    return int(ones * 2 > len(votes))


def _judge(
    by_item: dict[Key, dict[str, Vote]],
    annotators: list[str],
    values: Mapping[Key, Vote],
) -> dict[str, Any]:
    pairs_al: list[tuple[float, float]] = []
    pairs_binary: list[tuple[float, float]] = []
    tied = 0
    for key, found in by_item.items():
        judge_al, judge_binary = values.get(key, (None, None))
        human_al, majority = _mean_al(found), _majority(found)
        if judge_al is not None and human_al is not None:
            pairs_al.append((judge_al, human_al))
        if judge_binary is not None and majority is not None:
            pairs_binary.append((judge_binary, majority))
        elif judge_binary is not None and any(b is not None for _, b in found.values()):
            tied += 1  # the annotators' votes tied: no majority to compare
    with_judge = {
        key: {**found, "\x00judge": values[key]}
        for key, found in by_item.items()
        if key in values
    }
    kappa = _with_ci(pairs_binary, cohen_kappa, "kappa_one_class")
    if kappa["value"] is None and tied and len(pairs_binary) < 2:
        kappa = _missing(kappa, "agreement_majority_tied", tied=tied)
    return {
        "al_spearman": _with_ci(pairs_al, spearman),
        "al_kendall": _with_ci(pairs_al, kendall),
        "binary_kappa": kappa,
        "n": len({key for key in by_item if key in values}),
        "n_al": len(pairs_al),
        "n_binary": len(pairs_binary),
        # items the judge gave a verdict whose annotators' votes tied: no
        # majority, so left out of κ (said even when 0)
        "majority_tied": tied,
        "alpha_with_judge": _alpha(
            with_judge, [*annotators, "\x00judge"], 0, "interval"
        ),
    }


def _with_ci(
    pairs: list[tuple[float, float]],
    statistic: Callable[[list[float], list[float]], float | None],
    undefined: str = "agreement_one_side_constant",
) -> dict[str, Any]:
    """The statistic of the pairs with a 95% percentile bootstrap interval
    (None with ``ci_note`` ``ci_no_spread`` when it has width 0: every
    resample gives the same value, as perfect agreement does);
    when it has no value, why (``reason_code``: fewer than two items, or
    ``undefined``: the statistic is undefined on these items)."""
    if len(pairs) < 2:
        empty = {"value": None, "ci": None, "n": len(pairs)}
        return _missing(empty, "agreement_too_few")
    a, b = (list(side) for side in zip(*pairs, strict=True))
    value = statistic(a, b)
    if value is None:
        return _missing({"value": None, "ci": None, "n": len(pairs)}, undefined)
    import numpy as np

    draw = np.random.default_rng(SEED)
    picks = np.array(
        [draw.integers(0, len(pairs), len(pairs)) for _ in range(RESAMPLES)]
    )
    rows = ROWS.get(statistic)
    if rows is not None:  # every resample in one pass: the same values
        again = rows(np.asarray(a)[picks], np.asarray(b)[picks])
        found = again[~np.isnan(again)].tolist()
    else:
        found = [
            again
            for picked in picks
            if (again := statistic([a[i] for i in picked], [b[i] for i in picked]))
            is not None
        ]
    ends = (
        spread_or_none(
            float(np.percentile(found, 2.5)), float(np.percentile(found, 97.5))
        )
        if found
        else None
    )
    ci = list(ends) if ends else None
    if found and ends is None:  # every resample agrees: width 0, not shown
        return {"value": value, "ci": None, "n": len(pairs), "ci_note": CI_NO_SPREAD}
    return {"value": value, "ci": ci, "n": len(pairs)}


def _missing(found: dict[str, Any], code: str, **params: object) -> dict[str, Any]:
    """A statistic without a value, with why (a ``metrics/notes.py`` code)."""
    reason = note(code, **params)
    said = {"reason": reason.english, "reason_code": code, "reason_params": params}
    return {**found, **said}


def _alpha(
    by_item: Mapping[Key, Mapping[str, Vote]],
    coders: list[str],
    part: int,
    level: Literal["interval", "nominal"],
) -> dict[str, Any]:
    """Krippendorff's α over the items two or more coders labelled; without
    a value, why: one annotator (α compares annotators), no item labelled
    twice, or every label the same."""
    shared = [
        found
        for found in by_item.values()
        if sum(found.get(c, (None, None))[part] is not None for c in coders) >= 2
    ]
    if len(coders) < 2:
        return _missing({"value": None, "n": 0}, "agreement_one_annotator")
    if not shared:
        return _missing({"value": None, "n": 0}, "agreement_none_labelled_twice")
    import krippendorff
    import numpy as np

    data = np.array(
        [[_value(found.get(coder), part) for found in shared] for coder in coders],
        dtype=float,
    )
    if len({v for v in data.flatten() if not math.isnan(v)}) < 2:
        return _missing({"value": None, "n": len(shared)}, "agreement_labels_constant")
    value = float(krippendorff.alpha(data, level_of_measurement=level))
    return {"value": value if math.isfinite(value) else None, "n": len(shared)}


def _value(found: Vote | None, part: int) -> float:
    value = None if found is None else found[part]
    return math.nan if value is None else float(value)


def _methods(by_item: dict[Key, dict[str, Vote]], judged: Judged) -> dict[str, Any]:
    """Per method: the annotators' mean AL and each judge's on those items."""
    found: dict[str, dict[str, Any]] = {}
    means = {
        key: m for key, found in by_item.items() if (m := _mean_al(found)) is not None
    }
    for method in sorted({key[2] for key in means}):
        keys = [key for key in means if key[2] == method]
        found[method] = {
            "human_al": fmean(means[key] for key in keys),
            "n": len(keys),
            "judge_al": {
                judge: fmean(scored)
                for judge, values in sorted(judged.items())
                if (
                    scored := [
                        al
                        for k in keys
                        if k in values and (al := values[k][0]) is not None
                    ]
                )
            },
        }
    return found
