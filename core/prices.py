"""``JUDGE_PRICES``: what a judge model's tokens cost, in US dollars per
million tokens, read once at start-up (config.py) and stored with each run.

One entry per model, entries separated by commas; an entry is
``model=input/output``, optionally followed (after spaces, or as the next
comma-separated parts) by

* ``cached=P``: prompt tokens served from the provider's prompt cache;
* ``batch=I/O``: input and output through the Batch API;
* ``batch_cached=P``: cached prompt tokens in a batch.

>>> parse_prices("gpt-4o=2.5/10 cached=1.25 batch=1.25/5 batch_cached=0.625, local=0/0")
... # doctest: +NORMALIZE_WHITESPACE
{'gpt-4o': {'input': 2.5, 'output': 10.0, 'cached_input': 1.25, 'batch_input': 1.25,
            'batch_output': 5.0, 'batch_cached_input': 0.625},
 'local': {'input': 0.0, 'output': 0.0}}

A price that is not given is never guessed: without ``cached``, cached
tokens are billed at the input price (what a provider without a cache
discount charges); without ``batch``, what a run would have cost in batch
is null (``core.usage.batch_cost``), not an assumed 50%.
"""

from __future__ import annotations

import json
import re
from typing import Any

# the keys of an entry's qualifiers, and the price names they give
QUALIFIERS = {
    "cached": ("cached_input",),
    "batch": ("batch_input", "batch_output"),
    "batch_cached": ("batch_cached_input",),
}
NAMES = (
    "input",
    "output",
    "cached_input",
    "batch_input",
    "batch_output",
    "batch_cached_input",
)


def parse_prices(raw: str) -> dict[str, dict[str, float]]:
    """Prices per model from the text form above or JSON:
    ``{"model": {"input": 2.5, "output": 10, "cached_input": 1.25,
    "batch_input": 1.25, "batch_output": 5, "batch_cached_input": 0.625}}``
    (only input and output required) or ``{"model": [2.5, 10]}``.

    >>> parse_prices("gpt-4o=2.5/10, local=0/0")
    {'gpt-4o': {'input': 2.5, 'output': 10.0}, 'local': {'input': 0.0, 'output': 0.0}}
    >>> parse_prices("m=1/2,cached=0.5")
    {'m': {'input': 1.0, 'output': 2.0, 'cached_input': 0.5}}
    >>> parse_prices('{"m": {"input": 1, "output": 2, "batch_input": 0.5, "batch_output": 1}}')
    {'m': {'input': 1.0, 'output': 2.0, 'batch_input': 0.5, 'batch_output': 1.0}}
    >>> parse_prices("m=1/2 batch=0.5")
    Traceback (most recent call last):
    ...
    ValueError: 'batch' of 'm' wants 2 figures (a/b)
    """
    text = raw.strip()
    found = _from_json(text) if text.startswith("{") else _from_text(text)
    prices = {}
    for model, given in found.items():
        if not model or "input" not in given or "output" not in given:
            raise ValueError(f"bad price for {model!r}: input and output are needed")
        unknown = set(given) - set(NAMES)
        if unknown:
            raise ValueError(f"unknown price {sorted(unknown)[0]!r} for {model!r}")
        prices[model] = {name: float(given[name]) for name in NAMES if name in given}
        if min(prices[model].values()) < 0:
            raise ValueError(f"bad price for {model!r}")
    return prices


def _from_json(text: str) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for model, value in json.loads(text).items():
        if isinstance(value, dict):
            found[model] = dict(value)
        else:
            given_in, given_out = value
            found[model] = {"input": given_in, "output": given_out}
    return found


def _from_text(text: str) -> dict[str, dict[str, str]]:
    found: dict[str, dict[str, str]] = {}
    model = None
    for part in filter(None, re.split(r"[,\s]+", text)):
        name, _, figures = part.rpartition("=")
        name = name.strip()
        if name in QUALIFIERS and model is not None:
            found[model].update(_figures(QUALIFIERS[name], figures, model, name))
        else:
            model = name
            found[model] = _figures(("input", "output"), figures, model, "price")
    return found


def _figures(
    names: tuple[str, ...], figures: str, model: str, what: str
) -> dict[str, str]:
    values = figures.split("/")
    if len(values) != len(names):
        wanted = "/".join("ab"[: len(names)])
        raise ValueError(f"{what!r} of {model!r} wants {len(names)} figures ({wanted})")
    return dict(zip(names, values, strict=True))
