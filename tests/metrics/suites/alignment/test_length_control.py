"""The length-controlled AL (``metrics/suites/alignment/length_control.py``): the least-squares
fit numpy's LAPACK gives, to rounding, but the same bits wherever the
arrays sit in memory."""

from __future__ import annotations

import math
import random

import numpy as np

from metrics.suites.alignment.length_control import ExactSum, length_controlled

METHODS = ["Base", "RAG", "Ours"]


def rows(seed: int = 7, items: int = 300) -> list[dict]:
    rng, found = random.Random(seed), []
    for index in range(items):
        method = METHODS[index % 3]
        chars = rng.randint(20, 2000)
        al = 40 + 10 * (index % 3) + 3 * math.log1p(chars) + rng.gauss(0, 5)
        key = {
            "session_id": f"s{index // 30}",
            "round": index % 30 + 1,
            "method": method,
            "status": "ok",
        }
        found += [
            {**key, "metric": "al", "value": al},
            {**key, "metric": "response_chars", "value": float(chars)},
        ]
    return found


def lstsq_reference(found: list[dict]) -> dict[str, float]:
    """The model fitted with numpy's least squares (as the code did before)."""
    by_key: dict[tuple, dict] = {}
    for row in found:
        key = (row["session_id"], row["round"], row["method"])
        by_key.setdefault(key, {})[row["metric"]] = row["value"]
    items = sorted(by_key.items())
    method = [key[2] for key, _ in items]
    logs = np.log1p([values["response_chars"] for _, values in items])
    design = np.column_stack(
        [np.ones(len(items))]
        + [[float(m == name) for m in method] for name in METHODS[1:]]
        + [logs]
    )
    coef, *_ = np.linalg.lstsq(design, [v["al"] for _, v in items], rcond=None)
    at_mean = coef[0] + coef[-1] * logs.mean()
    return {
        m: at_mean + dict(zip(METHODS[1:], coef[1:-1], strict=True)).get(m, 0.0)
        for m in METHODS
    }


def test_the_exact_fit_agrees_with_lapack():
    found = rows()
    exact, reference = length_controlled(found, METHODS), lstsq_reference(found)
    for method in METHODS:
        assert math.isclose(exact[method], reference[method], rel_tol=1e-12)


def test_exact_sums_in_batches_equal_fsum_wherever_the_arrays_sit():
    rng = np.random.default_rng(5)
    values = np.concatenate(
        [
            rng.normal(size=3000) * 10.0 ** rng.integers(-300, 300, 3000),
            [0.0, -0.0, 5e-324, -5e-324, 1e308, -1e308],
        ]
    )
    expected = math.fsum(values.tolist())
    for offset, size in ((1, 7), (3, 500), (5, 4096)):  # other addresses, batches
        moved = np.concatenate([np.zeros(offset), values])[offset:]
        total = ExactSum()
        for start in range(0, len(moved), size):
            total.add(moved[start : start + size])
        assert total.value() == expected


def test_lengths_that_do_not_vary_within_methods_identify_nothing():
    found = rows()
    by_method = {m: float(100 + 50 * i) for i, m in enumerate(METHODS)}
    for row in found:
        if row["metric"] == "response_chars":
            row["value"] = by_method[row["method"]]
    assert length_controlled(found, METHODS) == dict.fromkeys(METHODS)


def test_too_few_items_give_none():
    assert length_controlled(rows(items=4), METHODS) == dict.fromkeys(METHODS)


def test_a_panel_counts_items_not_its_judges_rows():
    """Two judges' rows of two items are two points: a line with a method
    term and a length term fits them exactly, so no al_lc (the witness,
    issue 56: it was 30.0, from four "items")."""
    item = {"session_id": "s", "method": "M", "status": "ok"}
    found = [
        {**item, "round": k, "metric": metric, "value": value, "judge": judge}
        for judge in ("a", "b")
        for k, chars in ((1, 20.0), (2, 40.0))
        for metric, value in (("al", 30.0), ("response_chars", chars))
    ]
    assert length_controlled(found, ["M"]) == {"M": None}
    assert length_controlled(found[:4], ["M"]) == {"M": None}  # one judge: 2 items
    three = found + [dict(row, round=3) for row in found if row["round"] == 1]
    assert length_controlled(three, ["M"])["M"] is not None  # 3 items, 2 parameters
