"""Check the judge before spending: one real request per mode of a protocol,
on a fixed example, showing what came back — the raw reply, the verdict the
grammar read (or why none), latency, tokens, why the reply stopped, and
whether the server honoured structured output. ``flask --app app
judge-check`` and the upload page's "Test judge" button share it.

>>> sorted(EXAMPLE) == sorted(set().union(*MODE_FIELDS.values()))
True
"""

from __future__ import annotations

from time import monotonic

from core.problems import Rejected
from evaluator import (
    JudgeClient,
    JudgeConfig,
    JudgeHTTPError,
    names_structured_output,
    response_format,
)
from metrics.judging import JudgeItem, strict_json
from metrics.protocol_checks import MODE_FIELDS

EXAMPLE = {
    "profile": "28-year-old nurse in Busan who runs half-marathons and keeps a cat named Miso.",
    "personality": "warm, practical, a little sarcastic",
    "history": "User: I finally finished my night shifts this week.\n"
    "Assistant: Congratulations! How are you feeling?",
    "user_message": "Tired, but I want to sign up for the autumn race. Good idea?",
    "response": "Sounds like a great goal! Since you're coming off night shifts, give "
    "yourself a week of easy runs first, then build up. Will Miso be your coach?",
    "response_a": "Sounds like a great goal! Give yourself a week of easy runs after "
    "the night shifts, then build up. Will Miso be your coach?",
    "response_b": "Running is a popular hobby. Many races take place in autumn.",
}
CHOICES = {1.0: "A", 0.0: "B", 0.5: "tie"}


def check_judge(config: dict, options: dict, protocol) -> list[dict]:
    """One result per mode of ``protocol``; a 400 when no judge is set."""
    judge = JudgeConfig.from_settings(config, options)
    if judge is None:
        raise Rejected.one("no_judge_configured", path="judge_model")
    client = JudgeClient(judge)
    return [
        _check_mode(client, judge, name, mode) for name, mode in protocol.modes.items()
    ]


def _check_mode(client: JudgeClient, judge: JudgeConfig, name: str, mode) -> dict:
    messages = mode.template.render(**{k: EXAMPLE[k] for k in MODE_FIELDS[name]})
    found: dict = {"mode": name, "model": judge.model, "structured": None}
    extra = (
        {"response_format": response_format(name, mode.schema)} if mode.schema else {}
    )
    started = monotonic()
    try:
        try:
            reply = client.complete(messages, 0, None, **extra)
        except JudgeHTTPError as error:
            if not extra or not names_structured_output(error):
                raise
            found["structured"] = "text"  # refused: what a run falls back to
            reply = client.complete(messages, 0, None)
    except JudgeHTTPError as error:
        return {**found, "error": error.note.translated(), "latency_s": _since(started)}
    if extra and found["structured"] is None:
        honoured = strict_json(reply["text"]) is not None
        found["structured"] = "json_schema" if honoured else "ignored"
    verdict, why = JudgeItem(mode, tuple(messages)).read(reply["text"])
    shown = None
    if verdict is not None:
        choice = mode.verdict is not None and mode.verdict.kind == "choice"
        shown = CHOICES[verdict.score] if choice else verdict.score
    return {
        **found,
        "raw": reply["text"][:4000],
        "verdict": shown,
        "parts": verdict.parts if verdict is not None else {},
        "refused": why.translated() if why is not None else None,
        "latency_s": _since(started),
        "finish_reason": reply["finish_reason"],
        "prompt_tokens": reply["prompt_tokens"],
        "completion_tokens": reply["completion_tokens"],
        "reasoning_tokens": reply["reasoning_tokens"],
    }


def _since(started: float) -> float:
    return round(monotonic() - started, 3)
