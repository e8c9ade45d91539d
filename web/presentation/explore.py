"""Pure helpers of the exploration pages: which metric a number comes from,
search snippets over response texts and the diff page's rounds (paging is
``web/presentation/paging.py``, the word diff ``web/presentation/word_diff.py``).

Every piece of user text is escaped here and only our own tags (``<mark>``,
``<del>``, ``<ins>``) are added as markup, so templates can print the
results as they are.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from markupsafe import Markup, escape

from metrics import registry
from metrics.suite import Metric
from web.presentation.word_diff import (
    MAX_DIFF_PAGE_TOKENS,
    MAX_DIFF_TOKENS,
    tokenize,
    word_diff,
)

if TYPE_CHECKING:
    from store.explore import DetailHit

TOP_DIFFERENCES = 50
MIN_QUERY, MAX_QUERY = 2, 200
MAX_HITS = 100
# bytes of the upload one search request reads; the page links to the next part
SEARCH_BYTES = 16 * 1024 * 1024
SNIPPET_RADIUS = 80


# -- metrics --------------------------------------------------------------
def source_metric(metric_id: str) -> str | None:
    """The row- or session-level metric whose per-session means make a
    number: itself, or for a summary ``<id>_avg`` (or one naming the metric
    it is compared on) that metric; None when none is stored per session.

    >>> source_metric("nvcs"), source_metric("quality_avg"), source_metric("jera_avg")
    ('nvcs', 'quality', 'jera')
    >>> source_metric("al_slope") is None, source_metric("no_such") is None
    (True, True)
    """
    metric = registry.spec(metric_id)
    if metric is None:
        return None
    if metric.level != "summary":
        return metric_id
    candidates = [metric.compare, metric_id.removesuffix("_avg")]
    for candidate in candidates:
        found = registry.spec(candidate) if candidate else None
        if found is not None and found.level != "summary":
            return candidate
    return None


def run_metrics(suites: Iterable[str]) -> list[Metric]:
    """The row- and session-level metrics of a run's suites, in suite order."""
    known = set(registry.names())
    return [
        metric
        for suite in suites
        if suite in known
        for metric in registry.get(suite).metrics
        if metric.level in ("row", "session")
    ]


def higher_is_better(metric_id: str) -> bool:
    metric = registry.spec(metric_id)
    return metric.higher_is_better if metric is not None else True


# -- search ---------------------------------------------------------------
def query_problem(text: str) -> str | None:
    """Why a search text cannot be used (a code), or None.

    >>> query_problem("a"), query_problem("ab"), query_problem("x" * 201)
    ('too_short', None, 'too_long')
    """
    if len(text) < MIN_QUERY:
        return "too_short"
    if len(text) > MAX_QUERY:
        return "too_long"
    return None


def _pattern(needle: str) -> re.Pattern[str]:
    return re.compile(re.escape(needle), re.IGNORECASE)


def snippet(text: str, needle: str, radius: int = SNIPPET_RADIUS) -> Markup | None:
    """``radius`` characters either side of the first match of ``needle``
    (ignoring case), every match inside marked; None when there is none.

    >>> str(snippet("a <b> AND b", "and", radius=4))
    '…&lt;b&gt; <mark>AND</mark> b'
    >>> str(snippet("50% off_50%", "50%"))
    '<mark>50%</mark> off_<mark>50%</mark>'
    >>> snippet("nothing here", "xyz") is None
    True
    """
    pattern = _pattern(needle)
    first = pattern.search(text)
    if first is None:
        return None
    start = max(0, first.start() - radius)
    end = min(len(text), first.end() + radius)
    parts = [Markup("…") if start > 0 else Markup("")]
    cursor = start
    for match in pattern.finditer(text, start, end):
        parts += [
            escape(text[cursor : match.start()]),
            Markup("<mark>") + escape(match.group()) + Markup("</mark>"),
        ]
        cursor = match.end()
    parts.append(escape(text[cursor:end]))
    if end < len(text):
        parts.append(Markup("…"))
    return Markup("").join(parts)


@dataclass(frozen=True)
class ResponseHit:
    session_id: str
    round: int
    method: str
    snippet: Markup
    matches: int  # occurrences in the whole response


def find_in_responses(
    sessions: Iterable[dict[str, Any]], needle: str, limit: int = MAX_HITS
) -> tuple[list[ResponseHit], bool]:
    """Responses containing ``needle`` (ignoring case), in file order: at
    most ``limit`` hits, and whether there were more.

    >>> session = {"session_id": "s", "rounds": [{"round": 1, "responses": {
    ...     "A": {"text": "Tea or coffee?"}, "B": {"text": "Coffee, coffee."}}}]}
    >>> hits, more = find_in_responses([session], "COFFEE")
    >>> [(h.method, h.matches, str(h.snippet)) for h in hits], more
    ([('A', 1, 'Tea or <mark>coffee</mark>?'), ('B', 2, '<mark>Coffee</mark>, <mark>coffee</mark>.')], False)
    """
    pattern = _pattern(needle)
    hits: list[ResponseHit] = []
    for session in sessions:
        for round_ in session.get("rounds", ()):
            for method, response in round_.get("responses", {}).items():
                text = response.get("text") if isinstance(response, dict) else None
                if not isinstance(text, str):
                    continue
                found = snippet(text, needle)
                if found is None:
                    continue
                if len(hits) == limit:
                    return hits, True
                count = sum(1 for _ in pattern.finditer(text))
                hits.append(
                    ResponseHit(
                        session["session_id"], round_["round"], method, found, count
                    )
                )
    return hits, False


# -- page models ----------------------------------------------------------
DETAIL_FIELDS = ("reasoning", "raw")


def detail_text(value: object) -> str | None:
    """A detail field as text (a raw reply may be stored as JSON data)."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def group_detail_hits(hits: Iterable[DetailHit], needle: str) -> list[dict[str, Any]]:
    """One entry per (session, round, method, field, text) with the metrics
    sharing it (a failed judge call leaves its reply on every metric of the
    call), each with a marked snippet, in the order given.

    >>> from collections import namedtuple
    >>> Hit = namedtuple("Hit", "session_id round method metric detail")
    >>> same = {"raw": "Not JSON at all", "reasoning": None}
    >>> found = group_detail_hits([Hit("s", 1, "M", "al", same),
    ...     Hit("s", 1, "M", "al_style", same), Hit("s", 2, "M", "al", {})], "json")
    >>> [(h["round"], h["field"], h["metrics"], str(h["snippet"])) for h in found]
    [(1, 'raw', ['al', 'al_style'], 'Not <mark>JSON</mark> at all')]
    """
    grouped: dict[tuple[str, int, str, str, str | None], dict[str, Any]] = {}
    for hit in hits:
        for field in DETAIL_FIELDS:
            text = detail_text(hit.detail.get(field))
            found = snippet(text, needle) if text else None
            if found is None:
                continue
            key = (hit.session_id, hit.round, hit.method, field, text)
            entry = grouped.setdefault(
                key,
                {
                    "session_id": hit.session_id,
                    "round": hit.round,
                    "method": hit.method,
                    "field": field,
                    "snippet": found,
                    "metrics": [],
                },
            )
            entry["metrics"].append(hit.metric)
    return list(grouped.values())


def _response(round_: dict[str, Any], method: str) -> dict[str, Any]:
    response = round_.get("responses", {}).get(method)
    return response if isinstance(response, dict) else {}


def diff_rounds(
    rounds: list[dict[str, Any]],
    a: str,
    b: str,
    scores: dict[tuple[int, str], float],
) -> list[dict[str, Any]]:
    """Every round of a session, within the page's diff budget: each round
    compares at most ``MAX_DIFF_TOKENS`` words a side, all rounds together
    ``MAX_DIFF_PAGE_TOKENS``; the page then shows the rest unmarked."""
    left, found = MAX_DIFF_PAGE_TOKENS, []
    for round_ in rounds:
        view = diff_round(round_, a, b, scores, min(MAX_DIFF_TOKENS, left))
        compared = view["compared"]
        left -= compared if compared is not None else _words(round_, a, b)
        found.append(view)
    return found


def _words(round_: dict[str, Any], a: str, b: str) -> int:
    """The longer reply's words (what comparing a whole round took)."""
    texts = [_response(round_, m).get("text") for m in (a, b)]
    return max(len(tokenize(t)[1]) if isinstance(t, str) else 0 for t in texts)


def diff_round(
    round_: dict[str, Any],
    a: str,
    b: str,
    scores: dict[tuple[int, str], float] | None = None,
    max_tokens: int = MAX_DIFF_TOKENS,
) -> dict[str, Any]:
    """One round of the diff page: both responses marked, their per-method
    user messages (simulations) and, if given, their scores.

    >>> round_ = {"round": 2, "user_message": "Hi", "responses": {
    ...     "A": {"text": "Hello there"}, "B": "ignored: not normalised"}}
    >>> view = diff_round(round_, "A", "B", {(2, "A"): 0.5})
    >>> str(view["a"]["text"]), view["b"]["missing"], view["a"]["score"]
    ('<del>Hello there</del>', True, 0.5)
    """
    scores = scores or {}
    ra, rb = _response(round_, a), _response(round_, b)
    text_a, text_b = ra.get("text"), rb.get("text")
    text_a = text_a if isinstance(text_a, str) else None
    text_b = text_b if isinstance(text_b, str) else None
    marked = word_diff(text_a or "", text_b or "", max_tokens)
    number: int = round_["round"]
    return {
        "round": number,
        "user_message": round_.get("user_message"),
        "similarity": marked.similarity,
        "compared": marked.compared,
        "a": {
            "text": marked.a,
            "missing": text_a is None,
            "user_message": ra.get("user_message"),
            "score": scores.get((number, a)),
        },
        "b": {
            "text": marked.b,
            "missing": text_b is None,
            "user_message": rb.get("user_message"),
            "score": scores.get((number, b)),
        },
    }
