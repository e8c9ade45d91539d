"""``metrics/agreement.py``: Cohen's κ is scikit-learn's, bit for bit; ρ and
τ of many rows at once (a bootstrap's resamples) are scipy's, bit for bit."""

from __future__ import annotations

import random

import pytest

from metrics import agreement
from metrics.agreement import (
    cohen_kappa,
    kendall,
    kendall_rows,
    spearman,
    spearman_rows,
)


def test_kappa_is_scikit_learn_s_float_exactly():
    """Seeded pairs of raters: 2-60 items, 2-5 labels, independent or
    mostly agreeing (what a judge and a majority give), each rater using two
    labels or more (κ is None otherwise)."""
    from sklearn.metrics import cohen_kappa_score

    draw = random.Random(60)
    compared = 0
    while compared < 2000:
        labels = [0.0, 1.0, 2.0, 3.0, 0.5][: draw.randint(2, 5)]
        a = [draw.choice(labels) for _ in range(draw.randint(2, 60))]
        b = [x if draw.random() < 0.8 else draw.choice(labels) for x in a]
        if draw.random() < 0.5:
            b = [draw.choice(labels) for _ in a]
        if len(set(a)) < 2 or len(set(b)) < 2:
            continue
        expected = cohen_kappa_score([str(x) for x in a], [str(x) for x in b])
        assert cohen_kappa(a, b) == float(expected), (a, b)
        compared += 1


def test_a_constant_rater_has_no_kappa():
    assert cohen_kappa([1.0, 1.0, 1.0], [1.0, 0.0, 1.0]) is None
    assert cohen_kappa([1.0, 0.0, 1.0], [0.0, 0.0, 0.0]) is None


def test_raters_of_different_lengths_are_refused_as_scikit_learn_refuses_them():
    with pytest.raises(ValueError, match="differ in number: 3 and 2"):
        cohen_kappa([0.0, 1.0, 0.0], [0.0, 1.0])


@pytest.mark.parametrize(
    ("one", "rows"), [(spearman, spearman_rows), (kendall, kendall_rows)]
)
def test_rows_are_scipy_s_floats_exactly(one, rows):
    """Seeded rows of 2-40 values: few distinct values (ties, constant
    rows: NaN where one row gives None), many, fractions; then rows longer
    than kendall_rows counts pairwise (scipy's, one call a row)."""
    import numpy as np

    draw = random.Random(60)
    longer = agreement.PAIRWISE_UP_TO + 10
    for size in [*(draw.randint(2, 40) for _ in range(300)), longer]:
        kinds = draw.choice([2, 3, 6, 1000])
        a, b = (
            np.array(
                [
                    [
                        float(draw.randrange(kinds))
                        if draw.random() < 0.9
                        else draw.random() * 100
                        for _ in range(size)
                    ]
                    for _ in range(8)
                ]
            )
            for _ in "ab"
        )
        a[0] = a[0][0]  # a constant row
        found = rows(a, b)
        for i in range(8):
            expected = one(a[i], b[i])
            assert (None if np.isnan(found[i]) else float(found[i])) == expected
