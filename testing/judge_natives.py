"""The scripted judge answering other protocols in their native formats:
MT-Bench single-answer grading ("Rating: [[7]]", 1-10), MT-Bench pairwise
("[[A]]", "[[B]]", "[[C]]" for a tie) and ALOE (a bare number, 1-5), as the
judges of those benchmarks write them. The verdict comes from the same
directives as ours (``[[al=N]]`` rescaled: 1-10 = round(N / 10), 1-5 =
round(N / 20); ``[[strength=N]]`` for pairs).

>>> mt_single(73, "").splitlines()[-1], aloe(95)
('Rating: [[7]]', '5')

The replies of the roleplay (JERA, ALMP) and slot-judge prompts are here too.
Which mode a request is comes from ``judge_forms`` (the declared templates).
"""

from __future__ import annotations

import json
import re

JERA_SCALES = ("immersivity", "consistency", "creativity")
_ATTRIBUTE = re.compile(r"\[\[(attr|implied)=([^\]]+)\]\]")


def scaled(total: int, high: int) -> int:
    return max(1, min(high, round(total * high / 100)))


def mt_single(total: int, model: str) -> str:
    rating = scaled(total, 10)
    if "style-structured" in model:
        return json.dumps({"explanation": "Relevant and accurate.", "rating": rating})
    return (
        "The assistant's answer is relevant and addresses the question.\n\n"
        f"Rating: [[{rating}]]"
    )


def mt_pair(verdict: str, model: str) -> str:
    """``verdict``: A, B or tie (MT-Bench writes a tie as C)."""
    letter = {"A": "A", "B": "B", "tie": "C"}[verdict]
    if "style-structured" in model:
        return json.dumps({"explanation": "Compared both.", "verdict": letter})
    return (
        "Both assistants answer the question; comparing helpfulness and accuracy, "
        f"my final verdict is:\n\n[[{letter}]]"
    )


def aloe(total: int, model: str = "") -> str:
    score = scaled(total, 5)
    return json.dumps({"score": score}) if "style-structured" in model else str(score)


def jera_reply(answer: str | None, digest: int) -> str:
    """30 Likert answers, all ``answer`` if given, else 4 hash bits each."""
    answers = [int(answer) if answer else 1 + (digest >> 4 * i) % 10 for i in range(30)]
    payload = {"reasoning": "scripted questionnaire."}
    for index, scale in enumerate(JERA_SCALES):
        payload[scale] = answers[10 * index : 10 * index + 10]
    return "```json\n" + json.dumps(payload) + "\n```"


def almp_reply(scene: str, kind: str) -> str:
    values = [value.strip() for key, value in _ATTRIBUTE.findall(scene) if key == kind]
    return json.dumps(values, ensure_ascii=False)


def slot_judge_reply(block: str) -> str:
    """Every listed slot: 1.0 if predicted == ground truth, else 0.5."""
    scores = []
    for line in filter(None, block.splitlines()):
        slot = json.loads(line)
        score = 1.0 if slot["predicted"] == slot["ground_truth"] else 0.5
        scores.append({"topic": slot["topic"], "field": slot["field"], "score": score})
    return json.dumps({"reasoning": "scripted slot verdict.", "scores": scores})


def prefeval_check(answer: int, model: str = "") -> str:
    """A yes/no check of ``protocols/prefeval.toml`` as it asks: a short
    explanation, then ``\\boxed{yes}`` or ``\\boxed{no}`` (``style-words``:
    a final "Answer: Yes" line, as judges also write)."""
    word = "yes" if answer else "no"
    if "style-words" in model:
        return f"The reply was read against the request.\nAnswer: {word.title()}"
    return f"Explanation: the reply was read against the request.\n\\boxed{{{word}}}"
