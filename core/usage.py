"""What a run's judges used, per judge model, and what it cost.

The evaluator counts per model; the counters travel to the store as flat
``{name: gain}`` pairs with the run's totals (``judge_calls``, ...) and one
pair per model and field (:func:`key`), so one throttled progress write
carries both. Cost is tokens x price (:func:`cost`, prices from
``JUDGE_PRICES``, :mod:`core.prices`); a model without a price has cost
null, never a guess. Reasoning tokens are part of the completion tokens and
cached tokens part of the prompt tokens (as OpenAI reports them), so each
token is priced once.

>>> split({"judge_calls": 2, key("gpt-4o", "calls"): 2})
({'judge_calls': 2}, {'gpt-4o': {'calls': 2}})
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from core.prices import parse_prices

__all__ = [
    "FIELDS",
    "batch_cost",
    "cost",
    "cost_note",
    "has_batch",
    "key",
    "of_reply",
    "parse_prices",
    "split",
    "totals",
]

FIELDS = (
    "calls",  # requests sent (re-asks and failed requests included)
    "cached",  # verdicts taken from the cache: no request, no tokens
    "prompt_tokens",
    "completion_tokens",
    "reasoning_tokens",  # where the server reports them (a part of completion)
    # prompt tokens the provider served from its prompt cache (a part of
    # prompt_tokens: usage.prompt_tokens_details.cached_tokens)
    "cached_tokens",
    "reasks",  # requests re-asking for the format or for more tokens
    # structured output (response_format json_schema): replies that honoured
    # it, 400s that refused the parameter, replies that ignored it
    "structured",
    "structured_rejected",
    "structured_ignored",
    # requests sent in batch files (also counted in calls) and their tokens
    # (parts of the totals above), billed at the batch prices
    "batch_calls",
    "batch_prompt_tokens",
    "batch_cached_tokens",
    "batch_completion_tokens",
    # milliseconds requests waited for their turn under the endpoint's rate
    # limits before they were sent (judge_client/pacing.py), summed
    "paced_ms",
)
_PREFIX = "judge_usage|"
_MILLION = Decimal(1_000_000)
_TOKENS = ("prompt_tokens", "cached_tokens", "completion_tokens")

# counters by name, and a model's prices by name (US$ per million tokens)
Counts = Mapping[str, int]
Price = Mapping[str, float]


def key(model: str, field: str) -> str:
    return f"{_PREFIX}{model}|{field}"


def split(
    counters: Mapping[str, int],
) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
    """(the run's own counters, {model: {field: n}})."""
    run: dict[str, int] = {}
    models: dict[str, dict[str, int]] = {}
    for name, value in counters.items():
        if name.startswith(_PREFIX):
            model, field = name[len(_PREFIX) :].rsplit("|", 1)
            models.setdefault(model, {})[field] = value
        else:
            run[name] = value
    return run, models


def of_reply(reply: Mapping[str, Any]) -> dict[str, int]:
    """The token counters of one reply (``judge_client.http.read_completion``);
    a reply marked ``"via": "batch"`` also counts its tokens as batch ones.

    >>> of_reply({"prompt_tokens": 9, "cached_tokens": 4, "completion_tokens": 2,
    ...           "reasoning_tokens": 0, "via": "batch"})["batch_cached_tokens"]
    4
    """
    tokens = {
        "prompt_tokens": reply["prompt_tokens"],
        "cached_tokens": reply.get("cached_tokens", 0),
        "completion_tokens": reply["completion_tokens"],
    }
    if reply.get("via") == "batch":  # billed at the batch prices
        tokens |= {f"batch_{name}": n for name, n in tokens.items()}
    paced_ms = round(reply.get("paced_s", 0.0) * 1000)
    return tokens | {
        "reasoning_tokens": reply.get("reasoning_tokens", 0),
        "paced_ms": paced_ms,
    }


def _at(price: Price, name: str, fallback: str) -> Decimal:
    return Decimal(str(price.get(name, price.get(fallback))))


def _tokens(price: Price, counts: list[int], pre: str) -> Decimal:
    """Dollars x 10^6 for tokens at the ``pre``-prefixed prices; cached
    input at the input price where no cached price is given; ``counts``
    are prompt, cached and completion tokens."""
    prompt, cached, completion = counts
    return (
        _at(price, f"{pre}input", f"{pre}input") * (prompt - cached)
        + _at(price, f"{pre}cached_input", f"{pre}input") * cached
        + _at(price, f"{pre}output", f"{pre}output") * completion
    )


def cost_note(counts: Counts, price: Price | None) -> str | None:
    """Why :func:`cost` is null: ``no_price`` (the model has none) or
    ``no_batch_price`` (requests went in batch files and no batch price is
    given); None when it is known.

    >>> cost_note({"batch_prompt_tokens": 5}, {"input": 1, "output": 2})
    'no_batch_price'
    """
    if not price:
        return "no_price"
    if _batched(counts) and not has_batch(price):
        return "no_batch_price"
    return None


def has_batch(price: Price | None) -> bool:
    """Whether ``price`` gives the batch input and output prices."""
    return bool(price) and {"batch_input", "batch_output"} <= set(price or ())


def _batched(counts: Counts) -> bool:
    return any(
        counts.get(f"batch_{n}", 0)
        for n in ("calls", "prompt_tokens", "completion_tokens")
    )


def cost(counts: Counts, price: Price | None) -> float | None:
    """US dollars for the tokens in ``counts`` at ``price`` (per million
    tokens), exact (decimal sums): online prompt tokens not cached at the
    input price, cached ones at the cached-input price (the input price
    where none is given), completion tokens at the output price; the batch
    parts (``batch_*``) at the batch prices. Null without a price, or with
    batch tokens and no batch price (:func:`cost_note`).

    >>> cost({"prompt_tokens": 1_000_000, "completion_tokens": 500_000},
    ...      {"input": 2.5, "output": 10.0})
    7.5
    >>> price = {"input": 2.5, "output": 10, "cached_input": 1.25}
    >>> cost({"prompt_tokens": 1_000_000, "cached_tokens": 400_000}, price)
    2.0
    >>> cost({"prompt_tokens": 1_000_000, "cached_tokens": 400_000},
    ...      {"input": 2.5, "output": 10})  # no cached price: input price
    2.5
    >>> price |= {"batch_input": 1.25, "batch_output": 5, "batch_cached_input": 0.625}
    >>> cost({"prompt_tokens": 2_000_000, "completion_tokens": 200_000,
    ...       "batch_prompt_tokens": 1_000_000, "batch_cached_tokens": 1_000_000,
    ...       "cached_tokens": 1_000_000, "batch_completion_tokens": 100_000}, price)
    4.625
    >>> cost({"prompt_tokens": 10}, None) is None
    True
    """
    if cost_note(counts, price) is not None or price is None:
        return None
    got = counts.get
    batch = [got(f"batch_{n}", 0) for n in _TOKENS]
    online = [got(n, 0) - part for n, part in zip(_TOKENS, batch, strict=True)]
    total = _tokens(price, online, "")
    if _batched(counts):
        total += _tokens(price, batch, "batch_")
    return float(total / _MILLION)


def batch_cost(counts: Counts, price: Price | None) -> float | None:
    """What every request of ``counts`` would have cost at the batch prices
    (cached prompt tokens at the batch cached-input price, else the batch
    input price); null without a batch price (``cost_note`` of a batched
    count says why), never a guessed discount.

    >>> price = {"input": 2.5, "output": 10, "batch_input": 1.25, "batch_output": 5}
    >>> batch_cost({"prompt_tokens": 1_000_000, "completion_tokens": 100_000}, price)
    1.75
    >>> batch_cost({"prompt_tokens": 1}, {"input": 2.5, "output": 10}) is None
    True
    """
    if not price or not has_batch(price):
        return None
    total = _tokens(price, [counts.get(n, 0) for n in _TOKENS], "batch_")
    return float(total / _MILLION)


def output_mode(counts: Counts) -> str | None:
    """How a judge gave its verdicts: ``json_schema`` (structured output
    honoured by every reply asked for it), ``text`` (the server refused the
    parameter; the text grammar read the replies), ``ignored`` (asked, every
    reply in text), ``mixed`` (some replies JSON, some text: the counts say
    how many) or None (never asked: no mode of the run's protocol has a
    schema, or every verdict came from the cache).

    >>> output_mode({"structured": 3}), output_mode({"structured_rejected": 1})
    ('json_schema', 'text')
    >>> output_mode({"structured": 3, "structured_ignored": 1})
    'mixed'
    """
    if counts.get("structured_rejected"):
        return "text"
    honoured, ignored = counts.get("structured", 0), counts.get("structured_ignored", 0)
    if honoured and ignored:
        return "mixed"
    if honoured:
        return "json_schema"
    return "ignored" if ignored else None


def priced(counts: Counts, price: Price | None) -> dict[str, Any]:
    """What ``judge_usage`` shows beside a model's counters: the share of
    its prompt tokens served from the provider's cache (null without prompt
    tokens), the cost and why it is null, the price its cached tokens were
    billed at (``cached_input``, or ``input`` where no cached price is
    given), and what every request would have cost in batch with why that
    is null.

    >>> priced({"prompt_tokens": 1000, "cached_tokens": 250}, {"input": 1, "output": 2})
    ... # doctest: +NORMALIZE_WHITESPACE
    {'cached_share': 0.25, 'cost_usd': 0.001, 'cost_note': None,
     'cached_price': 'input', 'batch_cost_usd': None, 'batch_cost_note': 'no_batch_price'}
    """
    prompt = counts.get("prompt_tokens", 0)
    cached_price = None
    if price:
        cached_price = "cached_input" if "cached_input" in price else "input"
    return {
        "cached_share": counts.get("cached_tokens", 0) / prompt if prompt else None,
        "cost_usd": cost(counts, price),
        "cost_note": cost_note(counts, price),
        "cached_price": cached_price,
        "batch_cost_usd": batch_cost(counts, price),
        "batch_cost_note": None
        if has_batch(price)
        else ("no_batch_price" if price else "no_price"),
    }


def totals(used: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """A run's ``judge_usage`` summed over its judges: ``requests`` sent
    (``calls``: re-asks and failed requests included), ``cached`` verdicts
    (taken from the cache: no request, no cost), ``tokens`` and
    ``cost_usd``, null when a judge that used tokens has no price (a
    partial sum would understate it). A judge that used none cost nothing,
    priced or not: a run cancelled before its first request cost US$ 0, not
    an unknown sum "because no price is set" (found by the witness).

    >>> totals({"a": {"calls": 2, "cached": 1, "prompt_tokens": 3,
    ...               "completion_tokens": 1, "cost_usd": 0.5},
    ...         "b": {"calls": 0, "cached": 4, "prompt_tokens": 2,
    ...               "completion_tokens": 2, "cost_usd": 0.25}})
    {'requests': 2, 'cached': 5, 'tokens': 8, 'cost_usd': 0.75}
    >>> totals({})["cost_usd"], totals({"c": {"cached": 3, "cost_usd": None}})["cost_usd"]
    (0.0, 0.0)
    >>> totals({"c": {"prompt_tokens": 3, "cost_usd": None}})["cost_usd"] is None
    True
    """
    costs: list[float | None] = [
        counts.get("cost_usd") if _used_tokens(counts) else 0.0
        for counts in used.values()
    ]
    known = [cost for cost in costs if cost is not None]
    return {
        "requests": sum(c.get("calls", 0) for c in used.values()),
        "cached": sum(c.get("cached", 0) for c in used.values()),
        "tokens": sum(_used_tokens(c) for c in used.values()),
        "cost_usd": float(sum(known)) if len(known) == len(costs) else None,
    }


def _used_tokens(counts: Counts) -> int:
    return counts.get("prompt_tokens", 0) + counts.get("completion_tokens", 0)
