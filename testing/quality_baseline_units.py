"""Frozen copy of ``metrics/suites/quality/text_units.py`` as it was before issue 17 (commit
07b8a4b): the text units of :mod:`testing.quality_baseline`, the quality suite's
benchmark baseline. Not used by the product; do not optimise it (it is what
the optimised ``metrics`` code is measured and checked against).
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache

_HANGUL = "\u1100-\u11ff\u3130-\u318f\uac00-\ud7a3"
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_OTHER = rf"[^\W_{_HANGUL}{_CJK}]+"
_WORD = re.compile(rf"[{_HANGUL}]+|[{_CJK}]|{_OTHER}(?:'{_OTHER})*")
_HANGUL_WORD = re.compile(rf"[{_HANGUL}]+")
_BOUNDARY = re.compile(r"((?:[!?。！？\n]|\.(?!\d))+)")
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


@lru_cache(maxsize=4096)
def analyze(text: str) -> Units:
    """Tokens, sentences and paragraph count of ``text`` (cached: the prompt
    of a round is analysed once for all methods)."""
    text = _normalize(text)
    pieces = [*_BOUNDARY.split(text), ""]  # pairs (body, terminator)
    sentences = []
    for body, terminator in zip(pieces[::2], pieces[1::2], strict=True):
        tokens = tuple(words(body))
        if tokens:
            sentences.append(Sentence(body.strip(), tokens, "?" in terminator))
    paragraphs = sum(1 for p in _BLANK_LINE.split(text) if _WORD.search(p))
    return Units(tuple(words(text)), tuple(sentences), paragraphs)


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

    def _starting_with(self, word: str) -> list[tuple[str, ...]]:
        if not is_hangul(word):
            return self._by_first.get(word, [])
        prefixes = (word[:k] for k in range(len(word), 0, -1))
        return [p for prefix in prefixes for p in self._by_first.get(prefix, [])]

    def spans(self, tokens: tuple[str, ...]) -> list[tuple[int, int]]:
        found, i = [], 0
        while i < len(tokens):
            match = next(
                (p for p in self._starting_with(tokens[i]) if _at(tokens, i, p)), None
            )
            if match:
                found.append((i, i + len(match)))
            i += len(match) if match else 1
        return found

    def count(self, tokens: tuple[str, ...]) -> int:
        return len(self.spans(tokens))

    def single_words(self) -> set[str]:
        return {p[0] for group in self._by_first.values() for p in group if len(p) == 1}


def _at(tokens: tuple[str, ...], start: int, phrase: tuple[str, ...]) -> bool:
    window = tokens[start : start + len(phrase)]
    return len(window) == len(phrase) and all(
        word == part or (is_hangul(part) and word.startswith(part))
        for word, part in zip(window, phrase, strict=True)
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


def content_keys(tokens) -> set[str]:
    return {key_form(w) for w in tokens if is_content(w)}


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


@lru_cache(maxsize=1024)
def prompt_keywords(prompt: str) -> frozenset[str]:
    """Keywords of a prompt (content words minus task verbs).

    >>> sorted(prompt_keywords("Explain the concept of AI and describe its uses."))
    ['ai', 'concept', 'use']
    """
    return frozenset().union(*(keywords(s.words) for s in analyze(prompt).sentences))


def pronoun_counts(units: Units, prompt: Units) -> tuple[int, int]:
    """(pronouns, unclear ones). A pronoun is unclear when no content word
    precedes it in its sentence or occurs in the previous sentence; the first
    sentence's previous sentence is the prompt's last (a reply may say "it"
    about what the user just said)."""
    previous = content_keys(prompt.sentences[-1].words) if prompt.sentences else ()
    total = unclear = 0
    for sentence in units.sentences:
        seen = bool(previous)
        for word in sentence.words:
            if is_pronoun(word):
                total, unclear = total + 1, unclear + (not seen)
            seen = seen or is_content(word)
        previous = content_keys(sentence.words)
    return total, unclear


def topic_shifts(units: Units) -> int:
    """Sentences that share no content word with the previous one (both
    having some) and hold no connector and no pronoun to bridge the gap."""
    shifts = 0
    for before, sentence in zip(units.sentences, units.sentences[1:], strict=False):
        old, new = content_keys(before.words), content_keys(sentence.words)
        bridged = CONNECTORS.count(sentence.words) or any(
            is_pronoun(w) for w in sentence.words
        )
        shifts += bool(old and new and not old & new and not bridged)
    return shifts
