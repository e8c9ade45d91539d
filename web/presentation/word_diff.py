"""A word-level diff of two replies, escaped: only our own ``<del>`` and
``<ins>`` tags are added as markup, so templates print it as it is. Latin
text splits on whitespace, each CJK character is a word of its own; the work
is bounded whatever the texts hold."""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from typing import NamedTuple

from markupsafe import Markup, escape

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


def _cut_diff(
    lead_a: str,
    tokens_a: list[Token],
    rest_a: str | None,
    lead_b: str,
    tokens_b: list[Token],
    rest_b: str | None,
    max_tokens: int,
) -> WordDiff:
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
        shown_a + escape(rest_a or ""),
        shown_b + escape(rest_b or ""),
        similarity,
        max_tokens,
    )


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
