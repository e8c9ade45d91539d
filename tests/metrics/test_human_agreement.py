"""The judge against annotators' labels (metrics/human_agreement.py): κ
compares the judge's verdict with the annotators' majority, so items whose
votes tie are left out; how many is always said beside κ (issue 58, F8)."""

from __future__ import annotations

import pytest

from metrics.human_agreement import human_agreement


def _labels(votes: dict[int, tuple[int, int]]) -> list:
    return [
        ((f"s{item}", 1, "A"), annotator, 50.0, vote)
        for item, pair in votes.items()
        for annotator, vote in zip(("ann", "bob"), pair, strict=True)
    ]


@pytest.mark.slow
def test_kappa_says_how_many_tied_majorities_it_left_out():
    # items 0-5 agree (majority = the vote), items 6-8 tie (one yes, one no)
    from sklearn.metrics import cohen_kappa_score

    votes = {i: (i % 2, i % 2) for i in range(6)} | {i: (1, 0) for i in range(6, 9)}
    judge = {
        (f"s{i}", 1, "A"): (50.0, 1 if i in (0, 1, 3, 5, 7) else 0) for i in range(9)
    }
    found = human_agreement(_labels(votes), {"j": judge})["judges"]["j"]
    assert found["majority_tied"] == 3
    kept = range(6)
    expected = cohen_kappa_score(
        [judge[(f"s{i}", 1, "A")][1] for i in kept], [i % 2 for i in kept]
    )
    assert abs(found["binary_kappa"]["value"] - expected) < 1e-12
    assert found["binary_kappa"]["n"] == found["n_binary"] == 6


@pytest.mark.slow
def test_no_tie_is_said_as_zero():
    votes = {i: (i % 2, i % 2) for i in range(4)}
    judge = {(f"s{i}", 1, "A"): (50.0, i % 2) for i in range(4)}
    found = human_agreement(_labels(votes), {"j": judge})["judges"]["j"]
    assert found["majority_tied"] == 0
