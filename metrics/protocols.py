"""Judge protocols are data: one TOML file per protocol under ``protocols/``
(built in) or uploaded with a run. A protocol names its modes — the kinds of
request the suites make: ``alignment`` (a score, optionally with dimensions),
``binary`` and ``pairwise`` — and for each its prompt templates (named
``$placeholders``), its scale or verdict vocabulary, the output format it
asks for (quoted in the one re-ask) and the JSON schema asked for as
structured output. Every reply is read by the one grammar of
:mod:`metrics.verdicts`; ``docs/protocols.md`` describes the file.

A run stores its protocol's text and SHA-256 (``options["protocol"]``); the
version of each mode's prompt carries that digest, so a changed protocol
never meets a cached verdict of another.

>>> protocol = builtin("mt-bench")
>>> sorted(protocol.modes), protocol.modes["alignment"].verdict.high
(['alignment', 'pairwise'], 10.0)
>>> protocol.modes["pairwise"].parse("My final verdict is [[C]]").score
0.5
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.registry import Registry
from metrics.judging import Prompt, Verdict
from metrics.protocol_checks import CRITERION, ProtocolError, check, is_check
from metrics.suite import JudgeMode
from metrics.verdicts import BINARY, Kind, NoVerdict, read, read_parts

if TYPE_CHECKING:
    from string import Template


__all__ = [
    "Label",
    "Protocol",
    "ProtocolError",
    "builtin",
    "builtins",
    "from_options",
    "load",
]

PROTOCOL_DIR = Path(__file__).resolve().parents[1] / "protocols"
DEFAULT = "personasteer"
FIRST_WINS = {"A": 1.0, "B": 0.0, "tie": 0.5}  # share won by the reply shown first
_REASONING = re.compile(
    r"(?:reasoning|explanation|evaluation|理由|分析|이유|근거)\s*[:：]\s*(.*?)"
    r"(?=^\W*[^\W\d_]+\W*[:：]\s*\d|\\boxed|\Z)",
    re.I | re.S | re.M,
)


@dataclass(frozen=True)
class Label:
    """A derived label (``[labels.<name>]``): rules over the verdicts of the
    protocol's yes/no checks, the first that holds gives the label."""

    name: str
    title: str
    rules: tuple[tuple[str, tuple[tuple[str, int], ...]], ...]  # (label, when)
    success: frozenset[str]

    @property
    def labels(self) -> list[str]:
        """Its labels in the order the rules give them."""
        return list(dict.fromkeys(label for label, _ in self.rules))

    @property
    def checks(self) -> list[str]:
        return sorted({check for _, when in self.rules for check, _ in when})

    def decide(self, verdicts: dict[str, float | None]) -> tuple[str | None, list[str]]:
        """``(label, [])``, or ``(None, checks)`` when the label depends on
        those checks' missing verdicts: a rule before the one that holds
        might hold too. A check the decision does not need may be missing
        (never guessed, never required for nothing).

        >>> rule = Label("x", "x", (("bad", (("a", 0),)),
        ...     ("good", (("a", 1), ("b", 1))), ("meh", (("a", 1), ("b", 0)))),
        ...     frozenset({"good"}))
        >>> rule.decide({"a": 0.0, "b": None}), rule.decide({"a": 1.0, "b": None})
        (('bad', []), (None, ['b']))
        >>> rule.decide({"a": None, "b": 1.0})
        (None, ['a'])
        """
        for label, when in self.rules:
            unknown, holds = [], True
            for name, wanted in when:
                got = verdicts.get(name)
                if got is None:
                    unknown.append(name)
                elif got != wanted:
                    holds = False
            if not holds:
                continue
            if unknown:
                return None, sorted(unknown)
            return label, []
        return None, []  # the checker makes every combination labelled


@dataclass(frozen=True)
class Protocol:
    name: str
    title: str
    version: str
    text: str  # the file as given: stored with the run
    sha256: str
    modes: dict[str, JudgeMode]
    # the judge report card's thresholds the protocol sets (metrics/report_card.py)
    report_card: dict[str, Any] = field(default_factory=dict)
    labels: dict[str, Label] = field(default_factory=dict)

    @property
    def checks(self) -> dict[str, JudgeMode]:
        """The yes/no checks, asked by the checks suite (modes of another
        name than the suites' own, of kind binary)."""
        return {
            name: mode
            for name, mode in self.modes.items()
            if mode.criterion is None and is_check(name, mode.verdict.kind)
        }

    def criteria(self) -> dict[str, JudgeMode]:
        """``{criterion: mode}`` of the protocol's criterion modes.

        >>> sorted(builtin("characterbench").criteria())[:2]
        ['attribute_consistency_bot', 'attribute_consistency_human']
        """
        return {
            mode.criterion: mode
            for mode in self.modes.values()
            if mode.criterion is not None
        }

    def stored(self) -> dict[str, Any]:
        """What a run keeps (``options["protocol"]``)."""
        return {
            "name": self.name,
            "version": self.version,
            "sha256": self.sha256,
            "text": self.text,
        }

    def public(self) -> dict[str, Any]:
        """What results and the Methods paragraph show."""
        return {
            "name": self.name,
            "title": self.title,
            "version": self.version,
            "sha256": self.sha256,
        }


def _discover() -> None:
    for path in PROTOCOL_DIR.glob("*.toml"):
        BUILTINS.register(path.stem, path)


# name -> its file under protocols/ (the upload page's choices, --protocol)
BUILTINS: Registry[Path] = Registry(
    "built-in protocol", _discover, order=lambda name, _: name
)


def builtins() -> list[str]:
    return BUILTINS.names()


@lru_cache(maxsize=16)
def builtin(name: str) -> Protocol:
    """A built-in protocol (read once per process: the files ship with the
    code, and every chunk of a run asks for its protocol)."""
    if name not in BUILTINS:
        raise ProtocolError([(None, "name", "unknown_protocol", {"name": name[:80]})])
    return load(BUILTINS[name].read_text(encoding="utf-8"))


def from_options(options: dict[str, Any]) -> Protocol:
    """The protocol a run stored, or the default one."""
    stored = options.get("protocol")
    return load(stored["text"]) if stored else builtin(DEFAULT)


@lru_cache(maxsize=32)
def load(text: str) -> Protocol:
    """Parse and check a protocol file; :class:`ProtocolError` lists every
    problem with its line and key."""
    data = check(text)
    sha256 = hashlib.sha256(text.encode("utf-8")).hexdigest()
    modes = {
        name: _mode(name, spec, f"{data['name']}/{name}@{sha256[:12]}")
        for name, spec in data["modes"].items()
    }
    return Protocol(
        data["name"],
        data.get("title", data["name"]),
        str(data["version"]),
        text,
        sha256,
        modes,
        dict(data.get("report_card") or {}),
        {
            name: Label(
                name,
                str(spec.get("title") or name),
                tuple(
                    (rule["label"], tuple((c, int(v)) for c, v in rule["when"].items()))
                    for rule in spec["rules"]
                ),
                frozenset(spec["success"]),
            )
            for name, spec in (data.get("labels") or {}).items()
        },
    )


def _mode(name: str, spec: dict[str, Any], version: str) -> JudgeMode:
    kind = _kind(spec)
    prompt = Prompt(version, _template(spec["system"]), _template(spec["user"]))
    parts = {
        d["name"]: tuple(d.get("labels") or [d["name"]])
        for d in spec.get("dimensions", [])
    }
    part_max = max((d["max"] for d in spec.get("dimensions", [])), default=0)
    parse = _parser(kind, parts, part_max, spec.get("total") == "sum")
    return JudgeMode(
        name,
        version,
        parse,
        spec.get("format", "").strip(),
        spec.get("schema"),
        template=prompt,
        dimensions=tuple(parts),
        verdict=kind,
        criterion=spec.get("criterion", name) if spec["kind"] == CRITERION else None,
    )


def _template(text: str) -> Template:
    from string import Template

    return Template(text.strip())


def _kind(spec: dict[str, Any]) -> Kind:
    """The verdict's kind, told what the prompt asks and which JSON fields
    hold the verdict (``Kind.asking``)."""
    prompt = "\n".join(spec.get(key, "") for key in ("system", "user", "format"))
    return _plain_kind(spec).asking(prompt, verdict_fields(spec))


def verdict_fields(spec: dict[str, Any]) -> list[str]:
    """The JSON fields a mode's verdict is read from: those ``verdict_fields``
    names, and the fields of its ``schema`` that can hold a verdict (a
    number, a boolean or one of an ``enum``) and are not its dimensions. A
    verdict under any other key is not read on this mode's scale.

    >>> verdict_fields({"schema": {"properties": {"reasoning": {"type": "string"},
    ...     "style": {"type": "integer"}, "total": {"type": "integer"}}},
    ...     "dimensions": [{"name": "style", "max": 20}], "verdict_fields": ["score"]})
    ['score', 'total']
    """
    dimensions = {
        str(label).lower()
        for dimension in spec.get("dimensions", [])
        for label in (dimension["name"], *(dimension.get("labels") or []))
    }
    properties = (spec.get("schema") or {}).get("properties")
    from_schema = [
        name
        for name, prop in (properties if isinstance(properties, dict) else {}).items()
        if name.lower() not in dimensions and _holds_verdict(prop)
    ]
    return [*spec.get("verdict_fields", []), *from_schema]


def _holds_verdict(prop: object) -> bool:
    """A schema property a verdict fits: free text and objects do not."""
    if not isinstance(prop, dict):
        return False
    return "enum" in prop or prop.get("type") in ("integer", "number", "boolean")


def _plain_kind(spec: dict[str, Any]) -> Kind:
    if spec["kind"] == "binary":
        return BINARY
    if spec["kind"] == "choice":
        words = {}
        for verdict, written in spec["choices"].items():
            for word in written:
                words[word.lower().replace(" ", "")] = verdict
        return Kind.choice(words)
    scale = spec["scale"]
    # a criterion's ladder is whole points unless the protocol says otherwise
    whole = scale.get("integer", spec["kind"] == CRITERION)
    return Kind.score(scale["min"], scale["max"], bool(whole))


def _parser(
    kind: Kind, parts: dict[str, Any], part_max: float, summed: bool
) -> Callable[[str], Verdict | NoVerdict]:

    def parse(text: str) -> Verdict | NoVerdict:
        found = read(text, kind)
        if isinstance(found, NoVerdict):
            return found
        if isinstance(found, str):  # a choice's word (``kind.kind == "choice"``)
            return Verdict(FIRST_WINS[found], reasoning=_reasoning(text))
        values = read_parts(text, parts, part_max) if parts else {}
        flags = []
        if (
            summed
            and len(values) == len(parts)
            and abs(sum(values.values()) - found) > 1e-9
        ):
            flags.append("sum_mismatch")
        return Verdict(found, values, flags, _reasoning(text))

    return parse


def _reasoning(text: str) -> str | None:
    match = _REASONING.search(text)
    if match:
        return match.group(1).strip() or None
    return text.rsplit("\\boxed", 1)[0].strip()[:4000] or None
