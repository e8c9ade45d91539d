"""Check the judge before spending: one real request per mode of a protocol,
on a fixed example, showing what came back — the raw reply, the verdict the
grammar read (or why none), latency, tokens, why the reply stopped, and
whether the server honoured structured output. ``flask --app app
judge-check`` and the upload page's "Test judge" button share it.

The example fills every field a mode's templates may use: those of the
modes the suites ask by name (the registry's protocol modes) and a
criterion's.

>>> from metrics.protocol_checks import CRITERION_FIELDS, fixed_modes
>>> fields = [mode.fields for mode in fixed_modes().values()]
>>> sorted(EXAMPLE) == sorted(set().union(*fields, CRITERION_FIELDS))
True
"""

from __future__ import annotations

from time import monotonic
from typing import TYPE_CHECKING, Any

from core.problems import Rejected
from evaluator import Judge, JudgeConfig, JudgeHTTPError, run_on_loop
from metrics.judging import JudgeItem
from metrics.protocol_checks import fields_of

if TYPE_CHECKING:
    from metrics.protocols import Protocol
    from metrics.suite import JudgeMode

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
    # a criterion mode's (kind "criterion"): the character and its reference
    "character": "Name: Coach Min\nPersona: a patient running coach who speaks in short sentences.",
    "reference": "The user said earlier that they work night shifts.",
}
CHOICES = {1.0: "A", 0.0: "B", 0.5: "tie"}


def check_judge(
    config: dict[str, Any], options: dict[str, Any], protocol: Protocol
) -> list[dict[str, Any]]:
    """One result per mode of ``protocol``; a 400 when no judge is set."""
    settings = JudgeConfig.from_settings(config, options)
    if settings is None:
        raise Rejected.one("no_judge_configured", path="judge_model")
    return [_check_mode(settings, name, mode) for name, mode in protocol.modes.items()]


def _check_mode(settings: JudgeConfig, name: str, mode: JudgeMode) -> dict[str, Any]:
    """The request a run would send, asked the way a run asks it
    (``Judge.ask``: structured output first, text when refused)."""
    messages = mode.template.render(**{k: EXAMPLE[k] for k in fields_of(name)})
    item = JudgeItem(mode, tuple(messages))
    judge = Judge(settings)  # ``ask`` alone, on the judge loop: no pool
    found: dict[str, Any] = {"mode": name, "model": settings.model, "structured": None}
    started = monotonic()
    try:
        reply = run_on_loop(judge.ask(item, messages, 0, settings.max_tokens))
    except JudgeHTTPError as error:
        return {**found, "error": error.note.translated(), "latency_s": _since(started)}
    if mode.schema is not None:
        found["structured"] = judge.structured.state  # json_schema, ignored or text
    verdict, why = item.read(reply["text"])
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
