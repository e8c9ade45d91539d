"""What the scripted judge answers to one request: the mode it is (from
the declared templates, ``judge_forms``), the directives of the text under
evaluation, the faults they script, and the verdict in the mode's form
(``testing/judge_server.py`` describes the directives)."""

from __future__ import annotations

import hashlib
import math
import re
import time

from testing import judge_forms, judge_natives, judge_styles
from testing.judge_state import JudgeState

# ``[[al=80]]``, or for one judge of a panel only ``[[al@judge-b=80]]``
_DIRECTIVE = re.compile(r"\[\[(\w+(?:@[\w.+-]+)?)=([\w.]+)\]\]")
DIMENSIONS = ("Style", "Content", "Naturalness", "Personalization", "Conversation")


def split_total(total: int) -> list[int]:
    base, extra = divmod(total, 5)
    return [base + (1 if index < extra else 0) for index in range(5)]


def alignment_reply(total: int, mismatch: bool = False, style: str = "ours") -> str:
    parts = split_total(total)
    if mismatch:
        parts[0] = max(parts[0] - 3, 0)
    return judge_styles.alignment_text(total, parts, style)


_OFFSET = re.compile(r"\+(\d+)$")
DRIP = "x-scripted-drip"  # an internal marker: send this body slowly


def strength(reply: str) -> float:
    found = dict(_DIRECTIVE.findall(reply)).get("strength")
    if found is not None:
        return float(found)
    return float(int(hashlib.md5(reply.encode()).hexdigest(), 16) % 10)


def pairwise_verdict(first: str, second: str, model: str) -> str:
    """A, B or tie for replies A (``first``) and B (``second``)."""
    if "judge-prefers-longer" in model:  # length bias: the longer reply, always
        longer = len(first) - len(second)
        return "A" if longer > 0 else "B" if longer < 0 else "tie"
    gap = strength(first) - strength(second)
    if "position-a" in model and abs(gap) <= 1:
        return "A"
    if gap == 0:
        return "tie"
    pair = "\n".join(sorted((first, second))).encode()
    draw = int(hashlib.sha256(pair).hexdigest(), 16) % 10_000 / 10_000
    stronger_wins = draw < 1 / (1 + math.exp(-abs(gap)))
    return "A" if (gap > 0) == stronger_wins else "B"


def pairwise_reply(first: str, second: str, model: str, style: str = "ours") -> str:
    """A verdict on replies A (``first``) and B (``second``)."""
    if "[[fault=garbage]]" in first + second:
        return "Both are fine, I suppose."
    return judge_styles.pairwise_text(pairwise_verdict(first, second, model), style)


def decide(
    state: JudgeState, prompt: str, model: str = "", system: str = ""
) -> tuple[int, str, dict]:
    """(HTTP status, reply text or error body, extra headers) for one request:
    ``prompt`` its first user message, ``system`` its system message."""
    form = judge_forms.form_of(system, prompt, state.protocols)
    pair = _pair(form)
    if pair and not state.outage_status:
        state.count(hashlib.sha256(prompt.encode()).hexdigest())  # calls served
        return 200, _pairwise(form, *pair, model, prompt), {}
    response = form.evaluated(prompt) if form else prompt
    directives = of_model(dict(_DIRECTIVE.findall(response)), model)
    attempt = state.count(hashlib.sha256(prompt.encode()).hexdigest())
    fault = directives.get("fault", "")
    if state.outage_status:
        return state.outage_status, "outage", {"Retry-After": "1"}
    if "reply" in directives:  # a real judge's reply with no usable verdict
        kind = form.mode.verdict.kind if form and form.mode else "score"
        return 200, unusable_reply(directives["reply"], kind), {}
    if (fault == "429" and attempt == 1) or fault == "429_always":
        return 429, "slow down", {"Retry-After": "1"}
    if fault.startswith("500x") and attempt <= int(fault[4:]):
        return 500, "boom", {}
    if fault == "401":
        return 401, "bad key", {}
    if fault == "timeout":
        time.sleep(state.timeout_sleep)
    if fault == "garbage" or (fault == "garbage_once" and attempt == 1):
        return 200, "I think this reply is quite good overall!", {}
    if fault == "huge":  # a reply far over any sensible size (300 KB)
        return 200, "Total: \\boxed{50}\n" + "blah " * 60_000, {}
    if fault == "drip":  # a slow server: the body one byte at a time
        return 200, alignment_reply(50), {DRIP: "1"}
    digest = int(hashlib.md5(response.encode()).hexdigest(), 16)
    verdict = _verdict(form, response, directives, digest, model, prompt)
    return 200, verdict, _stated_limits(directives)


def _stated_limits(directives: dict[str, str]) -> dict[str, str]:
    """``[[limits=inf]]``: the reply states that value as both rate limits,
    as a provider's headers would (a hostile or broken one: issue 57)."""
    said = directives.get("limits")
    if said is None:
        return {}
    return {"x-ratelimit-limit-requests": said, "x-ratelimit-limit-tokens": said}


def of_model(directives: dict[str, str], model: str) -> dict[str, str]:
    """The directives that apply to ``model``: ``key@<model>=v`` overrides
    ``key=v`` for that judge of a panel and is ignored by the others (the
    model may carry a prefix the server added, "style-structured judge-b").

    >>> of_model({"al": "50", "al@judge-b": "70", "fault@judge-c": "500x9"}, "x judge-b")
    {'al': '70'}
    """
    name = model.split()[-1] if model.split() else ""
    plain = {key: value for key, value in directives.items() if "@" not in key}
    for key, value in directives.items():
        base, _, judge = key.partition("@")
        if judge and judge == name:
            plain[base] = value
    return plain


# Replies real judges wrote that carry no verdict on the mode's scale
# (issue 56): a JSON object whose score is under a key the mode does not
# declare (WildBench's, on 1-10), the prompt's format example repeated, a
# number without a scale. ``[[reply=<name>]]`` answers one of them.
UNUSABLE_REPLIES = {
    "undeclared_json": {
        "score": '{"strengths": "Warm and specific.", "weaknesses": "A little long.", '
        '"score": "6"}',
        "binary": '{"score": "1"}',
    },
    "format_example": {
        "score": 'I will answer in the format "Rating: [[5]]", for example.',
        "binary": "The format is \\boxed{1} (continue). Let me think about it.",
        "pairwise": 'For example, "\\boxed{A}" if A is better. Let me compare them.',
    },
    "scaleless": {"score": "I would give this reply a 7.", "binary": "Mostly yes."},
}


def unusable_reply(name: str, kind: str) -> str:
    """The canned reply ``name`` in the form of a verdict of ``kind``."""
    found = UNUSABLE_REPLIES[name]
    return found.get(kind) or found["score"]


def _pair(form: judge_forms.Form | None) -> tuple[str, str] | None:
    if form is None or not all(name in form.fields for name in judge_forms.PAIRED):
        return None
    first, second = (form.fields[name] for name in judge_forms.PAIRED)
    return first, second


def _pairwise(form, first: str, second: str, model: str, prompt: str) -> str:
    if form.protocol == "mt-bench":
        return judge_natives.mt_pair(pairwise_verdict(first, second, model), model)
    style = judge_styles.pick(judge_styles.PAIRWISE_STYLES, model, prompt)
    return pairwise_reply(first, second, model, style)


# A suite's own modes the judge writes natively: (text, directives, digest) -> reply
SUITE_WRITERS = {
    "jera": lambda text, found, digest: judge_natives.jera_reply(
        found.get("jera"), digest
    ),
    "almp_extract": lambda text, found, digest: judge_natives.almp_reply(text, "attr"),
    "almp_infer": lambda text, found, digest: judge_natives.almp_reply(text, "implied"),
    "slot_judge": lambda text, found, digest: judge_natives.slot_judge_reply(text),
}
STYLED = ("personasteer", "personasteer-zh")  # protocols written in judge_styles


def _verdict(
    form, response: str, directives: dict, digest: int, model: str, prompt: str
) -> str:
    """The reply to a request that is no pair, in its mode's form. A request
    of no declared mode is read as the default protocol's alignment."""
    mode = form.mode if form else None
    if form is not None and not form.protocol:
        writer = SUITE_WRITERS.get(mode.name)
        if writer is not None:
            return writer(response, directives, digest)
        return judge_forms.generic_reply(form, digest, "style-structured" in model)
    if mode is not None and mode.criterion is not None:
        # a protocol's criterion: ``[[score=N]]`` scripts the number (one
        # judge of a panel: ``[[score@judge-b=N]]``), else one of its scale
        value = directives.get("score")
        structured = "style-structured" in model
        return judge_forms.generic_reply(form, digest, structured, value)
    if mode is not None and mode.verdict.kind == "binary":
        # a protocol's own yes/no check answers ``[[<check>=1]]`` (PrefEval's
        # ``[[violate=1]]``), else ``[[binary=…]]``, else the reply's hash
        said = directives.get(mode.name, directives.get("binary"))
        if said == "none":  # a reply with no verdict (as after truncation)
            return "I would need to read more of it before deciding."
        answer = int(digest % 2 if said is None else said)
        if form is not None and form.protocol == "prefeval":
            return judge_natives.prefeval_check(answer, model)
        style = judge_styles.pick(judge_styles.BINARY_STYLES, model, prompt)
        return judge_styles.binary_text(answer, style)
    total = int(directives.get("al", 40 + digest % 61))
    offset = _OFFSET.search(model)
    total = min(100, total + int(offset.group(1))) if offset else total
    protocol = form.protocol if form else STYLED[0]
    if protocol == "mt-bench":
        return judge_natives.mt_single(total, model)
    if protocol == "aloe":
        return judge_natives.aloe(total, model)
    if protocol not in STYLED:
        return judge_forms.generic_reply(form, digest, "style-structured" in model)
    styles = judge_styles.ALIGNMENT_STYLES
    if protocol == "personasteer-zh":  # asked in Chinese: never answers in Korean
        styles = tuple(style for style in styles if style != "korean")
    style = judge_styles.pick(styles, model, prompt)
    return alignment_reply(total, directives.get("fault") == "mismatch", style)
