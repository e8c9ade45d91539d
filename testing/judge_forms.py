"""Which judge mode a request is, read from what the product declares, and
a verdict in the form that mode asks for.

The scripted judge spells no phrase of any prompt. It knows the modes the
product declares: every suite's own (``Suite.modes``: a prompt file and a
parser) and every protocol's (``protocols/*.toml``, and any protocol a test
gives it). A request is the mode whose system template its system message
fills, preferring one whose user template its user message fills too (a
user's copy of a protocol may reword the user prompt; it keeps the system
prompt). The fields come out of the user template by name, so the judge
reads the directives of the text under evaluation, not of the history.

A mode with a native writer (``judge_styles``, ``judge_natives``) is
answered by it. Any other mode, a new suite's for example, is answered in
the form it declares: its JSON schema when structured output is asked,
else its output ``format`` with every ``<...>`` filled (a number in the
range the placeholder or the scale gives, text where it asks for words).

>>> form = form_of(*_rendered("personasteer", "binary"))
>>> form.protocol, form.mode.name, sorted(form.fields)[:2]
('personasteer', 'binary', ['history', 'personality'])
>>> fill_format("Politeness: <1 to 5>\\nWhy: <short reasoning>", 7, None)
'Politeness: 3\\nWhy: scripted reasoning'
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from string import Template
from typing import Any

from metrics import protocols, registry
from metrics.judging import mode_prompt
from metrics.suite import JudgeMode

# the fields that hold what a mode evaluates (a template names them)
EVALUATED = ("response", "scene", "slots")
PAIRED = ("response_a", "response_b")
_FIELD = re.compile(r"\$(?:\{(\w+)\}|(\w+))")
_PLACEHOLDER = re.compile(r"<([^<>\n]{1,80})>")
_RANGE = re.compile(r"(-?\d+(?:\.\d+)?)\s*(?:to|-|–|~)\s*(-?\d+(?:\.\d+)?)")
_NUMERIC = re.compile(r"score|number|rating|sum|total|points|1|0", re.I)


@dataclass(frozen=True)
class Form:
    """A declared mode, and the pattern of each of its two messages."""

    mode: JudgeMode
    protocol: str  # the protocol's name; "" for a suite's own mode
    system: re.Pattern
    user: re.Pattern
    fields: dict[str, str] = field(default_factory=dict)  # once matched

    def evaluated(self, prompt: str) -> str:
        """The text under evaluation (its directives script the verdict)."""
        for name in EVALUATED:
            if name in self.fields:
                return self.fields[name]
        return "\n".join(self.fields.values()) if self.fields else prompt


def pattern(template: Template) -> re.Pattern:
    """A template as a pattern: its text literal, each field a named group."""
    parts, seen, at = [], set(), 0
    text = template.template
    for found in _FIELD.finditer(text):
        parts.append(re.escape(text[at : found.start()]))
        name = found.group(1) or found.group(2)
        parts.append(f"(?P={name})" if name in seen else f"(?P<{name}>.*?)")
        seen.add(name)
        at = found.end()
    parts.append(re.escape(text[at:]))
    return re.compile("".join(parts), re.S)


@lru_cache(maxsize=8)
def declared(extra: tuple[str, ...] = ()) -> tuple[Form, ...]:
    """Every declared mode: the protocols' (built in, then ``extra``:
    protocol texts a test gives the judge), then the suites' own (a suite
    that asks a protocol's modes lists them too: the protocol's come first)."""
    found = []
    loaded = [protocols.builtin(name) for name in protocols.builtins()]
    loaded += [protocols.load(text) for text in extra]
    for protocol in loaded:
        found += [_form(mode, protocol.name) for mode in protocol.modes.values()]
    for suite in registry.suites():
        found += [_form(mode, "") for mode in suite.modes]
    return tuple(found)


def _form(mode: JudgeMode, protocol: str) -> Form:
    prompt = mode_prompt(mode)
    return Form(mode, protocol, pattern(prompt.system), pattern(prompt.user))


def form_of(system: str, user: str, extra: tuple[str, ...] = ()) -> Form | None:
    """The declared mode of a request, with its fields; None if it is none."""
    fallback = None
    for form in declared(extra):
        if not form.system.fullmatch(system):
            continue
        matched = form.user.fullmatch(user)
        if matched:
            return Form(
                form.mode, form.protocol, form.system, form.user, matched.groupdict()
            )
        fallback = fallback or form
    return fallback


def scale_of(mode: JudgeMode) -> tuple[float, float]:
    kind = mode.verdict
    if kind is not None and kind.kind == "score":
        return kind.low, kind.high
    return 0.0, 1.0 if kind is not None else 10.0


def number_in(low: float, high: float, digest: int, integer: bool) -> float | int:
    """A number of [low, high] drawn from ``digest`` (the same text, the same
    number); whole when the range is whole."""
    if integer:
        return int(low) + digest % (int(high) - int(low) + 1)
    return round(low + (high - low) * (digest % 101) / 100, 2)


def fill_format(
    text: str, digest: int, mode: JudgeMode | None, value: str | None = None
) -> str:
    """The format with each placeholder filled: a number where it asks for
    one (``value`` when given, else one in the range it writes, else the
    mode's scale), else words."""
    scale = scale_of(mode) if mode is not None else (0.0, 10.0)

    def filled(found: re.Match) -> str:
        wanted = found.group(1)
        written = _RANGE.search(wanted)
        if value is not None and (written or _NUMERIC.search(wanted)):
            return value
        if written:
            low, high = float(written.group(1)), float(written.group(2))
            whole = "." not in written.group(0)
            return str(number_in(low, high, digest, whole))
        if _NUMERIC.search(wanted) and "reason" not in wanted.lower():
            whole = all(float(end).is_integer() for end in scale)
            return str(number_in(*scale, digest, whole))
        return "scripted reasoning"

    return _PLACEHOLDER.sub(filled, text)


def fill_schema(schema: dict[str, Any], digest: int, mode: JudgeMode) -> Any:
    """A value of the JSON schema: numbers in its bounds (else the mode's
    scale), the first of an enum, words for strings."""
    kind = schema.get("type")
    if "enum" in schema:
        return schema["enum"][digest % len(schema["enum"])]
    if kind == "object":
        properties = schema.get("properties", {})
        return {
            name: fill_schema(spec, digest >> 3, mode)
            for name, spec in properties.items()
        }
    if kind == "array":
        return [fill_schema(schema.get("items", {}), digest, mode)]
    if kind in ("integer", "number"):
        low, high = scale_of(mode)
        low = schema.get("minimum", low)
        high = schema.get("maximum", high)
        return number_in(low, high, digest, kind == "integer")
    if kind == "boolean":
        return bool(digest % 2)
    return "scripted reasoning"


def generic_reply(
    form: Form, digest: int, structured: bool, value: str | None = None
) -> str:
    """A mode without a native writer, answered in the form it declares
    (``value``: the number a directive scripts, e.g. ``[[score=3]]``)."""
    mode = form.mode
    if mode.schema and (structured or not mode.format):
        return json.dumps(fill_schema(mode.schema, digest, mode))
    if mode.format:
        return fill_format(mode.format, digest, mode, value)
    low, high = scale_of(mode)
    return f"\\boxed{{{number_in(low, high, digest, True)}}}"


def _rendered(protocol: str, mode: str) -> tuple[str, str]:
    """(system, user) of a protocol mode with every field ``x`` (doctest)."""
    prompt = mode_prompt(protocols.builtin(protocol).modes[mode])
    names = {(m.group(1) or m.group(2)) for m in _FIELD.finditer(prompt.user.template)}
    filled = dict.fromkeys(names, "x")
    return prompt.system.substitute(filled), prompt.user.substitute(filled)
