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

from typing import TYPE_CHECKING, Any

from core import usage
from core.problems import Rejected

if TYPE_CHECKING:
    from dataset.validation import ValidationReport


def estimate(
    report: ValidationReport, suites: list[str], options: dict[str, Any]
) -> int:
    """Items x modes x samples x judges of the chosen suites that ask the
    judge. An upper bound: cached verdicts are counted, and pairwise counts
    every pair of methods even when a baseline narrows them."""
    per_sample = sum(report.estimates.get(name, [0, 0])[0] for name in suites)
    judges = len(options.get("judge_models") or [None])
    samples: int = options["samples"]
    return per_sample * samples * judges


CHARS_PER_TOKEN = 4  # a rough rule for English; CJK text has fewer per token


def spend(
    report: ValidationReport,
    suites: list[str],
    options: dict[str, Any],
    config: dict[str, Any],
    history: dict[str, dict[str, int]] | None = None,
) -> dict[str, dict[str, Any]]:
    """What a run would spend before it starts, per judge: calls, prompt
    tokens (characters / 4: an estimate), completion tokens at most
    (``max_tokens`` per call: a ceiling) and the cost ceiling where the
    model has a price (``JUDGE_PRICES``), else null, online and in batch;
    then the expected cost (:func:`expected`) from ``history``, what the
    model used in the workspace's earlier runs of the run's protocol
    (``store.progress.workspace_usage``).

    >>> class Report:
    ...     estimates = {"alignment": [10, 40_000]}
    >>> found = spend(Report(), ["alignment"], {"samples": 1, "judge_model": "m"},
    ...       {"JUDGE_MAX_TOKENS": 100, "JUDGE_PRICES": {"m": {"input": 1, "output": 2}}})
    >>> found["m"]["cost_usd_max"], found["m"]["cost_usd"], found["m"]["cost_note"]
    (0.012, None, 'no_earlier_run')
    >>> list(spend(Report(), ["alignment"], {"samples": 1, "judge_model": None},
    ...            {"JUDGE_MAX_TOKENS": 100, "JUDGE_PRICES": {}, "JUDGE_MODEL": "gpt-x"}))
    ['gpt-x']
    """
    calls = estimate(report, suites, options)
    # a run that names no model is judged by the configured one
    # (judge_client/config.py), so its estimate says that model, not "None"
    named = options.get("judge_model") or config.get("JUDGE_MODEL")
    judges = options.get("judge_models") or [named]
    chars = sum(report.estimates.get(name, [0, 0])[1] for name in suites)
    per_judge_calls = calls // max(len(judges), 1)
    prompt_tokens = chars * options["samples"] // CHARS_PER_TOKEN
    completion = per_judge_calls * config["JUDGE_MAX_TOKENS"]
    found: dict[str, dict[str, Any]] = {}
    for model in judges:
        price = config["JUDGE_PRICES"].get(model)
        counts = {"prompt_tokens": prompt_tokens, "completion_tokens": completion}
        found[str(model)] = {
            "calls": per_judge_calls,
            "prompt_tokens": prompt_tokens,
            "completion_tokens_max": completion,
            "cost_usd_max": usage.cost(counts, price),
            "batch_cost_usd_max": usage.batch_cost(counts, price),
            **expected(
                per_judge_calls, prompt_tokens, price, (history or {}).get(str(model))
            ),
        }
    return found


def expected(
    calls: int,
    prompt_tokens: int,
    price: dict[str, float] | None,
    earlier: dict[str, int] | None,
) -> dict[str, Any]:
    """The expected cost of ``calls`` requests of ``prompt_tokens`` in all,
    online and in batch, from ``earlier``: what the judge model used in the
    workspace's earlier runs of the same protocol
    (``store.progress.workspace_usage``). Completion tokens at their mean
    per call; the share of the prompt served from the provider's cache as
    the earlier runs sent the same way got it (an online run's cache says
    nothing of a batch's: one run got 88% online and 34% in batch), or none
    where no earlier run was sent that way (``cached_runs``, ``batch_runs``:
    0), an upper bound for the prompt's cost. Null, with the reason
    in ``cost_note`` / ``batch_cost_note``, without a price (``no_price``),
    a batch price (``no_batch_price``) or an earlier run of that model and
    protocol (``no_earlier_run``): no reply length is assumed.

    >>> earlier = {"runs": 2, "calls": 100, "completion_tokens": 5_000,
    ...            "online_runs": 2, "prompt_tokens": 80_000, "cached_tokens": 20_000,
    ...            "batch_runs": 0, "batch_prompt_tokens": 0, "batch_cached_tokens": 0}
    >>> price = {"input": 1, "output": 2, "cached_input": 0.5,
    ...          "batch_input": 0.5, "batch_output": 1}
    >>> found = expected(10, 8_000, price, earlier)
    >>> found["cached_share"], found["cost_usd"], found["batch_cached_share"]
    (0.25, 0.008, 0.0)
    >>> found["batch_cost_usd"]  # no earlier batch run: no cache savings assumed
    0.0045
    """
    if not earlier or not earlier.get("calls"):
        unknown = "no_earlier_run" if price else "no_price"
        return {
            **dict.fromkeys(_EXPECTED),
            "earlier_runs": 0,
            "cost_note": unknown,
            "batch_cost_note": _batch_note(price) or unknown,
        }
    per_call = earlier["completion_tokens"] / earlier["calls"]
    completion = round(per_call * calls)
    online_share = _share(earlier, "")
    batch_share = _share(earlier, "batch_")
    online = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion,
        "cached_tokens": round(online_share * prompt_tokens),
    }
    batched = {**online, "cached_tokens": round(batch_share * prompt_tokens)}
    return {
        "completion_tokens": completion,
        "completion_per_call": per_call,
        "earlier_runs": earlier["runs"],
        "cached_tokens": online["cached_tokens"],
        "cached_share": online_share,
        "cached_runs": earlier.get("online_runs", 0),
        "cost_usd": usage.cost(online, price),
        "cost_note": None if price else "no_price",
        "batch_cached_tokens": batched["cached_tokens"],
        "batch_cached_share": batch_share,
        "batch_runs": earlier.get("batch_runs", 0),
        "batch_cost_usd": usage.batch_cost(batched, price),
        "batch_cost_note": _batch_note(price),
    }


# what :func:`expected` says only from earlier runs
_EXPECTED = (
    "completion_tokens",
    "completion_per_call",
    "cached_tokens",
    "cached_share",
    "cached_runs",
    "cost_usd",
    "batch_cached_tokens",
    "batch_cached_share",
    "batch_runs",
    "batch_cost_usd",
)


def _share(earlier: dict[str, int], prefix: str) -> float:
    """The cached share of the prompt of the earlier runs sent one way
    (``prefix``: "" online, "batch_" in batch files); 0 without any."""
    prompt = earlier.get(f"{prefix}prompt_tokens", 0)
    return earlier.get(f"{prefix}cached_tokens", 0) / prompt if prompt else 0.0


def _batch_note(price: dict[str, float] | None) -> str | None:
    if not price:
        return "no_price"
    return None if usage.has_batch(price) else "no_batch_price"


def check(calls: int, limit: int) -> None:
    """Refuse (400, translated, naming both figures) a run over the limit."""
    if calls > limit:
        raise Rejected.one(
            "over_judge_budget", path="file", estimate=calls, limit=limit
        )


def check_daily(calls: int, used: int, limit: int | None) -> None:
    """Refuse a run its workspace's judge calls of today cannot cover
    (``WORKSPACE_DAILY_JUDGE_CALLS``; ``used``: reserved today so far).

    >>> check_daily(10, 95, None)
    >>> check_daily(5, 95, 100)
    >>> check_daily(10, 95, 100)
    Traceback (most recent call last):
    ...
    core.problems.Rejected: This run would make 10 judge calls; its workspace has 5 of its 100 calls of today (UTC) left. ...
    """
    if limit is None:
        return
    left = limit - used
    if left <= 0:
        raise Rejected.one("daily_budget_used", http=409, limit=limit)
    if calls > left:
        raise Rejected.one(
            "over_daily_budget", path="file", estimate=calls, left=left, limit=limit
        )
