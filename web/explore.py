"""Pure helpers of the exploration pages: which metric a number comes from,
paging, search snippets over response texts and a word-level diff.

Every piece of user text is escaped here and only our own tags (``<mark>``,
``<del>``, ``<ins>``) are added as markup, so templates can print the
results as they are.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import NamedTuple

from markupsafe import Markup, escape

from metrics import registry
from metrics.suite import Metric

PAGE_SIZE = 50
TOP_DIFFERENCES = 50
MIN_QUERY, MAX_QUERY = 2, 200
MAX_HITS = 100
# bytes of the upload one search request reads; the page links to the next part
SEARCH_BYTES = 16 * 1024 * 1024
SNIPPET_RADIUS = 80
EXACT_DIFF_LIMIT = 500 * 500  # token pairs; longer texts diff heuristically
# The work one diff page does is bounded whatever the upload holds: at most
# this many words of each reply are compared, and this many per page (the
# rest is shown unmarked, and the page says so).
MAX_DIFF_TOKENS = 2000
MAX_DIFF_PAGE_TOKENS = 12_000

# One token each: CJK ideographs, kana, Hangul syllables and jamo, CJK and
# full-width punctuation (these scripts do not separate words with spaces).
_CJK = (
    "\u1100-\u11ff\u2e80-\u2fdf\u3001-\u303f\u3040-\u30ff\u3100-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff"
    "\uff00-\uffef\U00020000-\U0003134f"
)
_TOKEN = re.compile(rf"([{_CJK}]|[^\s{_CJK}]+)(\s*)")
_LEADING_SPACE = re.compile(r"\s*")


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


# -- paging ---------------------------------------------------------------
def page_number(raw: str | None) -> int:
    """A page from the query string; anything else is page 1.

    >>> page_number("3"), page_number("²"), page_number("-1"), page_number(None)
    (3, 1, 1, 1)
    """
    if not raw or not (raw.isascii() and raw.isdecimal()):
        return 1
    return max(1, min(int(raw), 10**9))


def paged(total: int, page: int, size: int = PAGE_SIZE) -> dict:
    """What ``_pager.html`` reads, with the offset of the page.

    >>> paged(101, 9, 50)["page"], paged(101, 9, 50)["pages"], paged(0, 1)["pages"]
    (3, 3, 1)
    """
    pages = max(1, -(-total // size))
    page = min(page, pages)
    return {"page": page, "pages": pages, "total": total,
            "offset": (page - 1) * size, "size": size}  # fmt: skip


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
    sessions: Iterable[dict], needle: str, limit: int = MAX_HITS
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


# -- word-level diff ------------------------------------------------------
class Token(NamedTuple):
    word: str
    space: str  # the whitespace after it


def tokenize(text: str) -> tuple[str, list[Token]]:
    """(leading whitespace, tokens): Latin text splits on whitespace, each CJK
    character is a token of its own; joining them gives the text back.

    >>> tokenize("  Hi, there! 我喜欢 tea")
    ('  ', [Token(word='Hi,', space=' '), Token(word='there!', space=' '), Token(word='我', space=''), Token(word='喜', space=''), Token(word='欢', space=' '), Token(word='tea', space='')])
    >>> [t.word for t in tokenize("안녕하세요 AI모델")[1]]
    ['안', '녕', '하', '세', '요', 'AI', '모', '델']
    """
    lead = _LEADING_SPACE.match(text)
    start = lead.end() if lead else 0
    tokens = [Token(m.group(1), m.group(2)) for m in _TOKEN.finditer(text, start)]
    return text[:start], tokens


class WordDiff(NamedTuple):
    a: Markup  # text a, words only in a inside <del>
    b: Markup  # text b, words only in b inside <ins>
    similarity: float | None  # 0..1, difflib's ratio over the compared tokens
    compared: int | None = None  # words compared per side when cut, else None


def word_diff(a: str, b: str, max_tokens: int = MAX_DIFF_TOKENS) -> WordDiff:
    """Both texts, escaped, with the words that differ marked.

    >>> diff = word_diff("the cat sat", "the dog sat down")
    >>> str(diff.a), str(diff.b)
    ('the <del>cat</del> sat', 'the <ins>dog</ins> sat <ins>down</ins>')
    >>> round(diff.similarity, 2)
    0.57
    >>> str(word_diff("a <b>", "a <i> x").b)
    'a <ins>&lt;i&gt; x</ins>'
    >>> str(word_diff("我喜欢猫", "我喜欢狗").b)
    '我喜欢<ins>狗</ins>'
    >>> word_diff("", "").similarity
    1.0
    """
    (lead_a, tokens_a, rest_a), (lead_b, tokens_b, rest_b) = (
        tokenize_head(text, max_tokens) for text in (a, b)
    )
    if rest_a is not None or rest_b is not None:
        return _cut_diff(lead_a, tokens_a, rest_a, lead_b, tokens_b, rest_b, max_tokens)
    words_a, words_b = [t.word for t in tokens_a], [t.word for t in tokens_b]
    # difflib's popular-token heuristic only where the exact diff could be slow
    quick = len(words_a) * len(words_b) > EXACT_DIFF_LIMIT
    matcher = SequenceMatcher(None, words_a, words_b, autojunk=quick)
    spans_a: list[tuple[int, int, bool]] = []
    spans_b: list[tuple[int, int, bool]] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        spans_a.append((i1, i2, op != "equal"))
        spans_b.append((j1, j2, op != "equal"))
    return WordDiff(
        _render(lead_a, tokens_a, spans_a, "del"),
        _render(lead_b, tokens_b, spans_b, "ins"),
        matcher.ratio(),
    )


def _cut_diff(lead_a, tokens_a, rest_a, lead_b, tokens_b, rest_b, max_tokens: int):
    """The first ``max_tokens`` words of each side compared, the rest (text
    never tokenized) shown as it is.

    >>> cut = word_diff("a b c d", "a x c y", max_tokens=2)
    >>> str(cut.a), str(cut.b), cut.compared
    ('a <del>b</del> c d', 'a <ins>x</ins> c y', 2)
    """
    if max_tokens:
        head = word_diff(
            _joined(lead_a, tokens_a), _joined(lead_b, tokens_b), max_tokens
        )
        shown_a, shown_b, similarity = head.a, head.b, head.similarity
    else:
        shown_a, shown_b = escape(lead_a), escape(lead_b)
        similarity = None
    return WordDiff(
        shown_a + escape(rest_a or ""), shown_b + escape(rest_b or ""),
        similarity, max_tokens,
    )  # fmt: skip


def _joined(lead: str, tokens: list[Token]) -> str:
    return lead + "".join(word + space for word, space in tokens)


def tokenize_head(text: str, limit: int) -> tuple[str, list[Token], str | None]:
    """:func:`tokenize` of the first ``limit`` tokens, and the text after
    them untouched (None when the text has no more): a long reply costs
    what its head costs.

    >>> tokenize_head("a b c", 2)
    ('', [Token(word='a', space=' '), Token(word='b', space=' ')], 'c')
    >>> tokenize_head("a b", 2)[2] is None
    True
    """
    lead = _LEADING_SPACE.match(text)
    start = lead.end() if lead else 0
    tokens: list[Token] = []
    for match in _TOKEN.finditer(text, start):
        if len(tokens) == limit:
            return text[:start], tokens, text[match.start() :]
        tokens.append(Token(match.group(1), match.group(2)))
    return text[:start], tokens, None


def _render(
    lead: str, tokens: list[Token], spans: list[tuple[int, int, bool]], tag: str
) -> Markup:
    parts = [escape(lead)]
    for start, end, changed in spans:
        if start == end:
            continue
        run = tokens[start:end]
        if not changed:
            parts.append(escape("".join(word + space for word, space in run)))
            continue
        inside = "".join(word + space for word, space in run[:-1]) + run[-1].word
        parts += [
            Markup(f"<{tag}>") + escape(inside) + Markup(f"</{tag}>"),
            escape(run[-1].space),
        ]
    return Markup("").join(parts)


# -- page models ----------------------------------------------------------
DETAIL_FIELDS = ("reasoning", "raw")


def detail_text(value) -> str | None:
    """A detail field as text (a raw reply may be stored as JSON data)."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def group_detail_hits(hits: Iterable, needle: str) -> list[dict]:
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
    grouped: dict[tuple, dict] = {}
    for hit in hits:
        for field in DETAIL_FIELDS:
            text = detail_text(hit.detail.get(field))
            found = snippet(text, needle) if text else None
            if found is None:
                continue
            key = (hit.session_id, hit.round, hit.method, field, text)
            entry = grouped.setdefault(key, {
                "session_id": hit.session_id, "round": hit.round,
                "method": hit.method, "field": field, "snippet": found,
                "metrics": [],
            })  # fmt: skip
            entry["metrics"].append(hit.metric)
    return list(grouped.values())


def _response(round_: dict, method: str) -> dict:
    response = round_.get("responses", {}).get(method)
    return response if isinstance(response, dict) else {}


def diff_rounds(rounds: list[dict], a: str, b: str, scores: dict) -> list[dict]:
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


def _words(round_: dict, a: str, b: str) -> int:
    """The longer reply's words (what comparing a whole round took)."""
    texts = [_response(round_, m).get("text") for m in (a, b)]
    return max(len(tokenize(t)[1]) if isinstance(t, str) else 0 for t in texts)


def diff_round(
    round_: dict,
    a: str,
    b: str,
    scores: dict[tuple[int, str], float] | None = None,
    max_tokens: int = MAX_DIFF_TOKENS,
) -> dict:
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
        "a": {"text": marked.a, "missing": text_a is None,
              "user_message": ra.get("user_message"), "score": scores.get((number, a))},
        "b": {"text": marked.b, "missing": text_b is None,
              "user_message": rb.get("user_message"), "score": scores.get((number, b))},
    }  # fmt: skip
