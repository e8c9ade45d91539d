"""How the scripted judge writes a verdict it has decided: the ways real
judges write (GPT-4-class markdown, a local model's "Total: 85/100", a
reasoning model's draft and self-correction, JSON, Chinese and Korean
labels, a counterfactual remark after the verdict, an echo of the
instructions). A test that passes against these proves the grammar reads
real replies, not only our own format (``docs/judge-replies.md``).

The style is ``style-<name>`` in the model name, else drawn from a hash of
the prompt: the same request always gets the same wording.

>>> "Total: 85/100" in alignment_text(85, [17] * 5, "local")
True
>>> binary_text(1, "json")
'```json\\n{"reasoning": "I would keep chatting.", "continue": true}\\n```'
"""

from __future__ import annotations

import hashlib
import json
import re

NAMES = ("Style", "Content", "Naturalness", "Personalization", "Conversation")
ZH = ("风格", "内容", "自然度", "个性化", "对话")
KO = ("스타일", "내용", "자연스러움", "개인화", "대화")
ALIGNMENT_STYLES = (
    "ours",
    "markdown",
    "local",
    "json",
    "reasoning",
    "selfcorrect",
    "hypothetical",
    "chinese",
    "korean",
    "numbered",
    "oneline",
)
BINARY_STYLES = ("ours", "yesno", "final", "json", "echo", "think", "chinese", "korean")
PAIRWISE_STYLES = ("ours", "brackets", "final", "json", "arena", "chinese", "think")
_FORCED = re.compile(r"style-(\w+)")


def pick(styles: tuple[str, ...], model: str, prompt: str) -> str:
    forced = _FORCED.search(model)
    if forced and forced.group(1) == "structured":
        return "structured"  # the server honours response_format
    if "text-only" in model:  # it ignores response_format: text, as the prompt asks
        styles = tuple(style for style in styles if style != "json")
    if forced and forced.group(1) in styles:
        return forced.group(1)
    if forced and forced.group(1) == "strict":
        return "ours"
    digest = int(hashlib.sha256(prompt.encode()).hexdigest()[:8], 16)
    return styles[digest % len(styles)]


def alignment_text(total: int, parts: list[int], style: str) -> str:
    pairs = list(zip(NAMES, parts, strict=True))
    if style == "structured":
        body = {"reasoning": "Fits the user.", **{n.lower(): v for n, v in pairs}}
        return json.dumps({**body, "total": total})
    if style == "markdown":
        lines = "\n".join(f"- **{n}:** {v}/20" for n, v in pairs)
        return (
            "**Reasoning:** The reply engages with the user's situation.\n\n"
            f"**Scores:**\n{lines}\n\n**Total:** \\boxed{{{total}}}"
        )
    if style == "local":
        lines = "\n".join(f"{n} - {v} out of 20" for n, v in pairs)
        return f"Here is my evaluation.\n{lines}\nTotal: {total}/100"
    if style == "json":
        body = {
            "reasoning": "The reply fits the user.",
            **{n.lower(): v for n, v in pairs},
        }
        return "```json\n" + json.dumps({**body, "total": total}) + "\n```"
    if style == "reasoning":
        draft = f"First impression: maybe {max(total - 7, 0)} overall. Let me check."
        lines = "\n".join(f"{i}. {n}: {v}" for i, (n, v) in enumerate(pairs, 1))
        return f"<think>\n{draft}\nTotal: {max(total - 7, 0)}\n</think>\n{lines}\nTotal: {total}"
    if style == "selfcorrect":
        lines = "\n".join(f"{n}: {v}/20" for n, v in pairs)
        sums = " + ".join(str(v) for v in parts)
        wrong = total + 5 if total <= 95 else total - 5
        return (
            f"{lines}\nTotal: {wrong}\n\nWait, let me recompute: {sums} = {sum(parts)}."
            f" Corrected Total: {total}"
        )
    if style == "hypothetical":
        other = total + 10 if total <= 90 else total - 10
        return (
            f"{_ours(pairs, total)}\n\nHad the reply used the user's name, "
            f"\\boxed{{{other}}} would have been justified."
        )
    if style in ("chinese", "korean"):
        names = ZH if style == "chinese" else KO
        lines = "\n".join(f"{n}：{v}/20" for n, v in zip(names, parts, strict=True))
        last = (
            f"总分：\\boxed{{{total}}}" if style == "chinese" else f"총점: {total}/100"
        )
        return f"{lines}\n{last}"
    if style == "numbered":
        lines = "\n".join(f"{i}. {n} (0-20): {v}" for i, (n, v) in enumerate(pairs, 1))
        return f"{lines}\n\nFinal score: {total}"
    if style == "oneline":
        return ", ".join(f"{n} {v}" for n, v in pairs) + f". Total \\boxed{{{total}}}."
    return _ours(pairs, total)


def _ours(pairs, total: int) -> str:
    lines = "\n".join(f"{n}: {v}/20" for n, v in pairs)
    return f"Reasoning: scripted verdict.\n{lines}\nTotal: \\boxed{{{total}}}"


def binary_text(answer: int, style: str) -> str:
    word = "Yes" if answer else "No"
    if style == "structured":
        return json.dumps({"reasoning": "Criteria checked.", "answer": answer})
    if style == "yesno":
        return f"All things considered, my answer:\n\n\\boxed{{{word}}}"
    if style == "final":
        return f"1. Naturalness: ok\n2. Relevance: ok\n\nFinal answer: {answer}"
    if style == "json":
        body = {"reasoning": "I would keep chatting.", "continue": bool(answer)}
        return "```json\n" + json.dumps(body) + "\n```"
    if style == "echo":
        return (
            "I must answer \\boxed{1} (continue) or \\boxed{0} (stop).\n"
            f"Final answer: \\boxed{{{answer}}}"
        )
    if style == "think":
        return f"<think>maybe \\boxed{{{1 - answer}}}?</think>\nOn reflection: \\boxed{{{answer}}}"
    if style == "chinese":
        return f"理由：已考虑五项标准。\n最终答案：{'是' if answer else '否'}"
    if style == "korean":
        return f"이유: 다섯 가지 기준을 검토했습니다.\n최종 답변: {'예' if answer else '아니오'}"
    return f"Reasoning: scripted decision.\n\\boxed{{{answer}}}"


def pairwise_text(verdict: str, style: str) -> str:
    """``verdict`` is A, B or tie."""
    named = f"Assistant {verdict}" if verdict != "tie" else "tie"
    if style == "brackets":
        return f"Both replies are polite.\nMy final verdict is [[{verdict}]]."
    if style == "final":
        return f"Comparing the two replies.\nFinal verdict: {named}"
    if style in ("json", "structured"):
        return json.dumps({"reasoning": "compared.", "winner": verdict})
    if style == "arena":
        return {"A": "[[A>B]]", "B": "[[B>A]]", "tie": "[[A=B]]"}[verdict]
    if style == "chinese":
        return f"理由：比较了两个回复。\n最终判断：{verdict}"
    if style == "think":
        other = {"A": "B", "B": "A", "tie": "A"}[verdict]
        return f"<think>\\boxed{{{other}}} at first?</think>\n\\boxed{{{verdict}}}"
    return f"Reasoning: scripted pairwise verdict.\n\\boxed{{{verdict}}}"
