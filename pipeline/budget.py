"""The judge budget of a run: how many calls it would make, known before it
starts, and the refusal when that is over ``MAX_JUDGE_CALLS_PER_RUN``.

An upload of a few megabytes can ask for millions of judge calls (sessions x
rounds x methods x modes x samples x judges); the operator pays for each, so
the server says the figure first and refuses a run over the limit.

>>> class Report:  # what validation counted: calls per suite, one sample
...     estimates = {"alignment": [40, 9000], "quality": [0, 0]}
>>> estimate(Report(), ["alignment", "quality"], {"samples": 3,
...          "judge_models": ["a", "b"]})
240
>>> check(240, 200)
Traceback (most recent call last):
...
core.problems.Rejected: This run would make 240 judge calls; the limit is 200 per run. ...
"""

from __future__ import annotations

from core.problems import Rejected


def estimate(report, suites: list[str], options: dict) -> int:
    """Items x modes x samples x judges of the chosen suites that ask the
    judge. An upper bound: cached verdicts are counted, and pairwise counts
    every pair of methods even when a baseline narrows them."""
    per_sample = sum(report.estimates.get(name, [0, 0])[0] for name in suites)
    judges = len(options.get("judge_models") or [None])
    return per_sample * options["samples"] * judges


def check(calls: int, limit: int) -> None:
    """Refuse (400, translated, naming both figures) a run over the limit."""
    if calls > limit:
        raise Rejected.one("over_judge_budget", path="file", estimate=calls,
                           limit=limit)  # fmt: skip
