"""Text units for the quality heuristics: words, sentences, paragraphs, the
word lists and keywords (the pronoun and topic-shift counts built on them
are in ``metrics.suites.quality.rules``).

The source document's tokenizer (``[^\\w\\s]`` to space, then split on
whitespace; ``docs/metrics/quality.md``) turns a Chinese reply into one
"word". These rules keep Chinese and Korean countable:

* Text is NFKC-normalised (full-width ``？`` becomes ``?``), ``’`` becomes
  ``'`` and words are casefolded.
* Words: a run of Hangul is one word (Korean writes eojeol between spaces);
  each CJK ideograph or kana is one word; any other run of letters or digits
  is one word, inner apostrophes kept (``don't``).
* Sentences: split at runs of ``. ! ? 。 ！ ？`` and newlines; a period
  followed by a digit (``3.5``) is no boundary; pieces without words are
  dropped. A sentence is a question when its terminator holds ``?``.
* Paragraphs: split at blank lines; pieces without words are dropped.

>>> words("AI는 커피를 좋아해요. 我喜欢咖啡! Don't panic")
['ai', '는', '커피를', '좋아해요', '我', '喜', '欢', '咖', '啡', "don't", 'panic']
>>> [(s.text, s.question) for s in analyze("Hi there. Is 3.5 ok?\\n好的").sentences]
[('Hi there', False), ('Is 3.5 ok', True), ('好的', False)]
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain, compress
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from functools import _lru_cache_wrapper

T = TypeVar("T")

_HANGUL = "\u1100-\u11ff\u3130-\u318f\uac00-\ud7a3"
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_OTHER = rf"[^\W_{_HANGUL}{_CJK}]+"
# The branches start on disjoint characters, so their order changes no match:
# the commonest is tried first.
_WORD = re.compile(rf"{_OTHER}(?:'{_OTHER})*|[{_HANGUL}]+|[{_CJK}]")
_ASCII_WORD = re.compile(r"[a-z0-9]+(?:'[a-z0-9]+)*")  # _WORD in lowercase ASCII
_HANGUL_WORD = re.compile(rf"[{_HANGUL}]+")
# A terminator character, but not a period followed by a digit. Starting the
# pattern with a character class lets the regex engine skip ahead to one.
_END = r"[!?。！？\n.](?!(?<=\.)\d)"
_BOUNDARY = re.compile(rf"({_END}(?:{_END})*)")
_BLANK_LINE = re.compile(r"\n\s*\n")


def _normalize(text: str) -> str:
    return unicodedata.normalize("NFKC", text).replace("’", "'")


def words(text: str) -> list[str]:
    """Casefolded word tokens (see the module docstring for the rules)."""
    return [w.casefold() for w in _WORD.findall(_normalize(text))]


@dataclass(frozen=True)
class Sentence:
    text: str  # stripped, without its terminator; its len() is in characters
    words: tuple[str, ...]
    question: bool


@dataclass(frozen=True)
class Units:
    words: tuple[str, ...]
    sentences: tuple[Sentence, ...]
    paragraphs: int


def _tokens(body: str) -> tuple[str, ...]:
    """``words`` of an already normalised piece of text. An ASCII piece is
    lowercased whole (the same as casefolding each word, in one call)."""
    if body.isascii():
        return tuple(_ASCII_WORD.findall(body.lower()))
    return tuple(map(str.casefold, _WORD.findall(body)))


def units(text: str) -> Units:
    """Tokens, sentences and paragraph count of ``text``, not cached (a reply
    is read once per run). Each sentence is tokenised once: the text's words
    are its sentences' words in order, since no word holds a terminator and
    a piece of normalised text is normalised."""
    text = _normalize(text)
    pieces = [*_BOUNDARY.split(text), ""]  # pairs (body, terminator)
    sentences = []
    for body, terminator in zip(pieces[::2], pieces[1::2], strict=True):
        tokens = _tokens(body)
        if tokens:
            sentences.append(Sentence(body.strip(), tokens, "?" in terminator))
    tokens = tuple(chain.from_iterable(sentence.words for sentence in sentences))
    if text.count("\n") < 2:  # no blank line: one paragraph if any word
        paragraphs = int(bool(tokens))
    else:
        paragraphs = sum(1 for p in _BLANK_LINE.split(text) if _WORD.search(p))
    return Units(tokens, tuple(sentences), paragraphs)


@lru_cache(maxsize=4096)
def analyze(text: str) -> Units:
    """:func:`units`, cached (a prompt analysed once for all methods)."""
    return units(text)


CACHED_WORD_CHARS = 64


def per_word(cached: _lru_cache_wrapper[T], tokens: Sequence[str]) -> list[T]:
    """``cached`` (a word rule under ``lru_cache``) of each token, the loop in
    C. A cache entry keeps its word alive, so a token over 64 characters (a
    hash or a blob, up to ``MAX_TEXT_CHARS``) is worked out uncached."""
    if not tokens or max(map(len, tokens)) <= CACHED_WORD_CHARS:
        return list(map(cached, tokens))
    return [
        cached(w) if len(w) <= CACHED_WORD_CHARS else cached.__wrapped__(w)
        for w in tokens
    ]


def is_hangul(word: str) -> bool:
    return bool(_HANGUL_WORD.fullmatch(word))


class PhraseSet:
    """Multi-word phrases matched on word tokens, longest first, without
    overlap. A Hangul phrase word matches an eojeol that starts with it, so
    ``요약하면`` also finds ``요약하면요`` (Korean attaches endings)."""

    def __init__(self, phrases: str):
        self._by_first = defaultdict(list)
        for phrase in phrases.split(";"):
            tokens = tuple(words(phrase))
            self._by_first[tokens[0]].append(tokens)
        for candidates in self._by_first.values():
            candidates.sort(key=len, reverse=True)
        self._longest = max(map(len, self._by_first))  # no longer prefix matches
        # Per word, not per occurrence: most words start no phrase.
        self._starting_with = lru_cache(maxsize=65536)(self._candidates)

    def _candidates(self, word: str) -> tuple[tuple[str, ...], ...]:
        if not is_hangul(word):
            return tuple(self._by_first.get(word, ()))
        longest = min(len(word), self._longest)
        prefixes = (word[:k] for k in range(longest, 0, -1))
        return tuple(p for prefix in prefixes for p in self._by_first.get(prefix, []))

    def spans(self, tokens: tuple[str, ...]) -> list[tuple[int, int]]:
        starting = per_word(self._starting_with, tokens)
        found: list[tuple[int, int]] = []
        # Only where some phrase starts, and not inside the last match.
        for i in compress(range(len(tokens)), starting):
            if found and i < found[-1][1]:
                continue
            match = next((p for p in starting[i] if _at(tokens, i, p)), None)
            if match:
                found.append((i, i + len(match)))
        return found

    def count(self, tokens: tuple[str, ...]) -> int:
        return len(self.spans(tokens))

    def single_words(self) -> set[str]:
        return {p[0] for group in self._by_first.values() for p in group if len(p) == 1}


def _at(tokens: tuple[str, ...], start: int, phrase: tuple[str, ...]) -> bool:
    window = tokens[start : start + len(phrase)]
    return window == phrase or (
        len(window) == len(phrase)
        and all(
            word == part or (is_hangul(part) and word.startswith(part))
            for word, part in zip(window, phrase, strict=True)
        )
    )


# Discourse connectors. Excluded as too ambiguous or too frequent: and, or, so,
# then, also, since, while, first (adjective), 즉 (prefix of 즉시).
CONNECTORS = PhraseSet(
    "however;therefore;furthermore;moreover;additionally;in addition;besides;"
    "consequently;as a result;thus;hence;meanwhile;nevertheless;nonetheless;"
    "otherwise;instead;finally;lastly;firstly;secondly;thirdly;first of all;"
    "similarly;likewise;accordingly;because;but;although;though;whereas;"
    "for example;for instance;in fact;on the other hand;in contrast;"
    "in other words;that is why;after that;in conclusion;overall;"
    "但是;然而;因此;所以;而且;此外;另外;因为;首先;其次;最后;总之;例如;比如;"
    "不过;同时;并且;于是;"
    "그러나;하지만;그래서;따라서;그러므로;또한;그리고;게다가;예를 들어;왜냐하면;"
    "그런데;결론적으로;먼저;마지막으로;반면"
)
# Summary words that make a last sentence a conclusion.
SUMMARY = PhraseSet(
    "in conclusion;to conclude;in summary;to summarize;to summarise;to sum up;"
    "in short;in brief;overall;all in all;therefore;thus;hence;ultimately;"
    "in the end;finally;"
    "总之;总而言之;综上所述;总的来说;因此;所以;最后;"
    "결론적으로;요약하면;요약하자면;요컨대;결국;따라서;그러므로;마지막으로;종합하면"
)
# Third-person personal pronouns. Demonstratives (this, that, ...) are left
# out: a token rule cannot tell them from determiners and conjunctions.
PRONOUNS = PhraseSet(
    "it;its;itself;they;them;their;theirs;themselves;he;him;his;himself;she;"
    "her;hers;herself;它;他;她;그것;이것;저것;그녀;그들"
)
TASK_VERBS = PhraseSet(
    "explain;describe;compare;contrast;analyze;analyse;list;summarize;"
    "summarise;define;discuss;evaluate;outline;recommend;suggest;identify;"
    "illustrate;classify;calculate;translate;review;justify;elaborate;clarify;"
    "propose;give;show;tell;write;"
    "解释;描述;比较;分析;列出;总结;概括;推荐;建议;介绍;说明;评价;讨论;"
    "설명;묘사;비교;분석;나열;요약;추천;소개;정리;알려"
)

# ~170 frequent English words (plus contractions and Chinese function
# characters): never keywords, never "sophisticated".
COMMON_WORDS = frozenset(
    """the be to of and a in that have i it for not on with he as you do at this
    but his by from they we say her she or an will my one all would there their
    what so up out if about who get which go me when make can like time no just
    him know take people into year your good some could them see other than then
    now look only come its over think also back after use two how our work first
    well way even new want because any these give day most us is are was were
    been has had did does am being more very much many such own same should may
    might must shall here where why through between during before again further
    once both each few those while above below under off down too nor yes okay ok
    hi hello hey
    sure please thanks thank really actually probably usually always never often
    maybe little thing things great right still around every going getting
    looking thought though although whether together today tomorrow yesterday
    another something anything nothing everything someone everyone without
    against already example important different let said made got lot lots
    it's i'm don't doesn't didn't can't won't isn't aren't wasn't i've you're
    we're they're that's there's let's i'll you'll what's i'd you'd
    的 了 是 在 和 与 也 就 都 而 及 吗 呢 吧 啊 我 你 您 们 这 那 个 有 不 一 很
    要 会 能 可 以 上 中 对 为 着 过 把 被 给 让 从 到 说 去 来 还 又 或 请
    저는 나는 제가 내가 우리 대해 대한 주세요 해주세요 좀 수 것 것은 정말 너무
    아주 있어요 있습니다 합니다 입니다 해요 네 아니요""".split()
)
_KO_PARTICLES = (
    "에서 에게 으로 까지 부터 처럼 보다 은 는 을 를 의 에 로 와 과 도 만 이 가".split()
)


_FUNCTION_WORDS = COMMON_WORDS | CONNECTORS.single_words() | SUMMARY.single_words()


def key_form(word: str) -> str:
    """The form words are compared in: a crude plural/possessive fold for
    Latin words (``applications`` -> ``application``) and one trailing
    particle off a Korean eojeol (``커피를`` -> ``커피``).

    >>> key_form("applications"), key_form("process"), key_form("커피를")
    ('application', 'process', '커피')
    """
    if is_hangul(word):
        for particle in _KO_PARTICLES:
            if word.endswith(particle) and len(word) > len(particle):
                return word[: -len(particle)]
        return word
    word = word.removesuffix("'s")
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def is_pronoun(word: str) -> bool:
    return PRONOUNS.count((word,)) > 0


def is_content(word: str) -> bool:
    """A word that can carry a topic: not common, not a pronoun, not a
    connector or summary word."""
    return word not in _FUNCTION_WORDS and not is_pronoun(word)


@lru_cache(maxsize=65536)
def word_role(word: str) -> tuple[str | None, bool]:
    """(its key form if a content word else None, whether a pronoun): the
    word rules, worked out once per distinct word.

    >>> word_role("applications"), word_role("it"), word_role("however")
    (('application', False), (None, True), (None, False))
    """
    if is_pronoun(word):
        return None, True
    return (None if word in _FUNCTION_WORDS else key_form(word)), False


def content_keys(tokens: Iterable[str]) -> set[str]:
    return {key for key, _ in per_word(word_role, tuple(tokens)) if key is not None}


def keywords(tokens: tuple[str, ...]) -> set[str]:
    """Content words outside task-verb phrases."""
    inside = {i for start, end in TASK_VERBS.spans(tokens) for i in range(start, end)}
    return content_keys(w for i, w in enumerate(tokens) if i not in inside)


def prompt_demands(prompt: Units) -> tuple[list[set[str]], list[set[str]]]:
    """Keyword sets of the prompt's questions (sentences ending in ``?``) and
    of its tasks (one per task-verb occurrence: its sentence's keywords)."""
    questions = [keywords(s.words) for s in prompt.sentences if s.question]
    tasks = [
        keywords(s.words) for s in prompt.sentences for _ in TASK_VERBS.spans(s.words)
    ]
    return questions, tasks


def topic_keywords(prompt: Units) -> frozenset[str]:
    """Keywords of an analysed prompt (:func:`prompt_keywords`)."""
    return frozenset().union(*(keywords(s.words) for s in prompt.sentences))


@lru_cache(maxsize=1024)
def prompt_keywords(prompt: str) -> frozenset[str]:
    """Keywords of a prompt (content words minus task verbs).

    >>> sorted(prompt_keywords("Explain the concept of AI and describe its uses."))
    ['ai', 'concept', 'use']
    """
    return topic_keywords(analyze(prompt))
