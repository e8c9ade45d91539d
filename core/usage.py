"""What a run's judges used, per judge model, and what it cost.

The evaluator counts per model; the counters travel to the store as flat
``{name: gain}`` pairs with the run's totals (``judge_calls``, ...) and one
pair per model and field (:func:`key`), so one throttled progress write
carries both. Cost is tokens x price: ``JUDGE_PRICES`` gives, per model,
US dollars per million input (prompt) and output (completion) tokens; a
model without a price has cost null, never a guess. Reasoning tokens are
part of the completion tokens (as OpenAI reports them), so they are priced
once.

>>> split({"judge_calls": 2, key("gpt-4o", "calls"): 2})
({'judge_calls': 2}, {'gpt-4o': {'calls': 2}})
>>> cost({"prompt_tokens": 1_000_000, "completion_tokens": 500_000},
...      {"input": 2.5, "output": 10.0})
7.5
>>> cost({"prompt_tokens": 10}, None) is None
True
"""

from __future__ import annotations

from decimal import Decimal

FIELDS = (
    "calls",  # requests sent (re-asks and failed requests included)
    "cached",  # verdicts taken from the cache: no request, no tokens
    "prompt_tokens",
    "completion_tokens",
    "reasoning_tokens",  # where the server reports them (a part of completion)
    "reasks",  # requests re-asking for the format or for more tokens
    # structured output (response_format json_schema): replies that honoured
    # it, 400s that refused the parameter, replies that ignored it
    "structured",
    "structured_rejected",
    "structured_ignored",
)
_PREFIX = "judge_usage|"


def key(model: str, field: str) -> str:
    return f"{_PREFIX}{model}|{field}"


def split(counters: dict[str, int]) -> tuple[dict[str, int], dict[str, dict]]:
    """(the run's own counters, {model: {field: n}})."""
    run: dict[str, int] = {}
    models: dict[str, dict] = {}
    for name, value in counters.items():
        if name.startswith(_PREFIX):
            model, field = name[len(_PREFIX) :].rsplit("|", 1)
            models.setdefault(model, {})[field] = value
        else:
            run[name] = value
    return run, models


def cost(counts: dict, price: dict | None) -> float | None:
    """US dollars for the tokens in ``counts`` at ``price`` (per million
    input and output tokens), exact to the cent's fraction (decimal sums)."""
    if not price:
        return None
    total = Decimal(str(price["input"])) * counts.get("prompt_tokens", 0) + Decimal(
        str(price["output"])
    ) * counts.get("completion_tokens", 0)
    return float(total / 1_000_000)


def parse_prices(raw: str) -> dict[str, dict[str, float]]:
    """``JUDGE_PRICES``: ``model=input/output`` pairs separated by commas
    (US dollars per million tokens), or the same as JSON
    (``{"model": {"input": 2.5, "output": 10}}`` or ``{"model": [2.5, 10]}``).

    >>> parse_prices("gpt-4o=2.5/10, local=0/0")
    {'gpt-4o': {'input': 2.5, 'output': 10.0}, 'local': {'input': 0.0, 'output': 0.0}}
    """
    import json

    text = raw.strip()
    if text.startswith("{"):
        pairs = {
            model: (value["input"], value["output"])
            if isinstance(value, dict)
            else value
            for model, value in json.loads(text).items()
        }
    else:
        pairs = {}
        for part in filter(None, (p.strip() for p in text.split(","))):
            model, _, figures = part.rpartition("=")
            pairs[model.strip()] = figures.split("/")
    prices = {}
    for model, (given_in, given_out) in pairs.items():
        prices[model] = {"input": float(given_in), "output": float(given_out)}
        if not model or min(prices[model].values()) < 0:
            raise ValueError(f"bad price for {model!r}")
    return prices


def output_mode(counts: dict) -> str | None:
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
