"""What a run's judges used, said in the Methods paragraph
(:mod:`reports.paper_methods`): the requests sent and, apart from them, the
verdicts taken from the cache, tokens, the share of the prompt the
provider's prompt cache served, the cost at the prices recorded with the
run and what the requests would have cost in batch; a figure that is not
known (no price, no batch price) is said to be unknown, never guessed.
The sentence is English, like the rest of the paragraph (it is pasted into
papers); the dashboard says the same in the reader's language
(``templates/_judge_usage.html``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["plural", "spent_sentence"]


def plural(count: int, noun: str) -> str:
    """A count and its noun.

    >>> plural(1, "session"), plural(2000, "resample")
    ('1 session', '2,000 resamples')
    """
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def spent_sentence(used: dict[str, Any] | None) -> str:
    """What the judges used: the requests sent to each (``calls``: each
    paid, re-asks included) and, apart from them, the verdicts taken from
    the cache (``cached``: no request, no cost); tokens, the share of the
    prompt tokens the provider's prompt cache served, the cost (when priced)
    and what the requests would have cost in batch (or why that is not
    stated).

    >>> spent_sentence({"m": {"calls": 3, "cached": 1, "prompt_tokens": 10,
    ...     "completion_tokens": 5, "reasks": 0, "cost_usd": 0.25}})
    'The judge m was sent 3 requests (10 prompt and 5 completion tokens; US$0.2500); 1 more verdict was taken from the cache, without a request.'
    >>> spent_sentence({"m": {"calls": 0, "cached": 294, "prompt_tokens": 0,
    ...     "completion_tokens": 0, "cost_usd": 0.0}})
    'The judge m was sent no request: all 294 verdicts were taken from the cache.'
    >>> print(spent_sentence({"m": {"calls": 2, "prompt_tokens": 4000,
    ...     "cached_tokens": 1024, "cached_share": 0.256, "completion_tokens": 50,
    ...     "cost_usd": 0.0105, "cached_price": "input", "batch_cost_usd": None,
    ...     "batch_cost_note": "no_batch_price"}}))
    The judge m was sent 2 requests (4,000 prompt and 50 completion tokens; 1,024 prompt tokens (25.6%) served from the provider's prompt cache; US$0.0105, cached tokens billed at the input price as no cached-input price was given; no batch price was given, so what batch would have cost is not stated).
    >>> spent_sentence({"m": {"calls": 200, "batch_calls": 200, "prompt_tokens": 9,
    ...     "completion_tokens": 1, "cost_usd": 0.5, "batch_cost_usd": 0.5}})
    "The judge m was sent 200 requests, 200 of them through the provider's Batch API (9 prompt and 1 completion tokens; US$0.5000)."
    """
    parts = []
    for model, counts in sorted((used or {}).items()):
        sent, cached = counts.get("calls", 0), counts.get("cached", 0)
        if not sent and cached:
            parts.append(
                f"The judge {model} was sent no request: all "
                f"{plural(cached, 'verdict')} were taken from the cache."
            )
            continue
        reasks = counts.get("reasks", 0)
        asked = f", {plural(reasks, 're-ask')}" if reasks else ""
        batched = counts.get("batch_calls", 0)
        if batched:
            asked += f", {batched:,} of them through the provider's Batch API"
        reasoning = counts.get("reasoning_tokens", 0)
        thought = f", {reasoning:,} of them reasoning" if reasoning else ""
        more = "verdict was" if cached == 1 else "verdicts were"
        reused = (
            f"; {cached:,} more {more} taken from the cache, without a request"
            if cached
            else ""
        )
        parts.append(
            f"The judge {model} was sent {plural(sent, 'request')}{asked} "
            f"({counts.get('prompt_tokens', 0):,} prompt and "
            f"{counts.get('completion_tokens', 0):,} completion tokens{thought}"
            f"{_cache_and_cost(counts)}){reused}."
        )
    return " ".join(parts)


def _cache_and_cost(counts: dict[str, Any]) -> str:
    """The cached share, the cost and what batch would have cost, as the
    clauses of :func:`spent_sentence` (nothing about a cost never priced)."""
    text = ""
    if counts.get("cached_tokens"):
        share = counts.get("cached_share") or 0.0
        text += (
            f"; {counts['cached_tokens']:,} prompt tokens ({share:.1%}) served "
            "from the provider's prompt cache"
        )
    cost = counts.get("cost_usd")
    if cost is None:
        if counts.get("cost_note") == "no_batch_price":
            text += (
                "; cost not stated: requests went in batch and no batch price was given"
            )
        return text
    text += f"; US${cost:,.4f}"
    if counts.get("cached_tokens") and counts.get("cached_price") == "input":
        text += ", cached tokens billed at the input price as no cached-input price was given"
    batch = counts.get("batch_cost_usd")
    if counts.get("batch_calls", 0) >= counts.get("calls", 0) > 0:
        return text  # every request went in batch: its cost is the batch cost
    if batch is not None:
        text += f"; in batch it would have cost US${batch:,.4f}"
    elif counts.get("batch_cost_note") == "no_batch_price":
        text += (
            "; no batch price was given, so what batch would have cost is not stated"
        )
    return text
