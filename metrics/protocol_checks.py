"""Checking a protocol file before any run uses it: TOML syntax, then every
key, with the line it is on. A user's protocol with a typo gets a 400 that
names the line and the key (``protocol_problem`` codes in
``core/problems.py``), never a run that asks the judge something half-formed.

>>> check('name = "x"\\nversion = 1\\nmodez = {}')
Traceback (most recent call last):
...
metrics.protocol_checks.ProtocolError: line 3: modez: unknown key
>>> check('name = "x"\\nversion = ' + "9" * 5001)
Traceback (most recent call last):
...
metrics.protocol_checks.ProtocolError: line 2: : not valid TOML: an integer of more than 4,300 digits
"""

from __future__ import annotations

import importlib
import re
import tomllib
from string import Template
from typing import Any, Protocol

from core.registry import Registry
from metrics.suite import ProtocolMode

NAME = re.compile(r"[a-z0-9][a-z0-9_.-]{0,39}")


class Bad(Protocol):
    """Records one problem: the key it is at, its code and the code's
    parameters (``needle``: text whose line is more precise than the key's)."""

    def __call__(
        self, key: str, code: str, needle: str | None = None, **params: object
    ) -> None: ...


# The modes a suite asks by name (their kind and the fields their templates
# may use) are declared by the suites (``Suite.protocol_modes``) and read
# from PROTOCOL_MODES when a protocol is checked (``fixed_modes``).
# A mode of any other name is a criterion (kind "criterion"): a score on the
# scale the protocol declares for it, stored as judge_score@<criterion>:<low>-<high>
# and asked of the sessions that name the criterion (``docs/protocols.md``).
# Its templates may use the session's profile, personality, history, user
# message and response, and the evaluated character's persona and the
# criterion's reference, when the session carries them.
CRITERION = "criterion"
CRITERION_FIELDS = frozenset(
    {
        "profile",
        "personality",
        "history",
        "user_message",
        "response",
        "character",
        "reference",
    }
)
CRITERION_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")
# A mode of another name with kind "binary" is a yes/no check, asked by the
# suite that asks checks, with the criterion's fields; the
# protocol's derived labels (``[labels.<name>]``) are rules over the checks.
CHECK = "binary"
TOP_KEYS = {
    "labels",
    "name",
    "version",
    "title",
    "description",
    "language",
    "modes",
    "report_card",
}
MODE_KEYS = {
    "kind",
    "system",
    "user",
    "format",
    "scale",
    "dimensions",
    "total",
    "choices",
    "schema",
    "verdict_fields",
    "description",
    "criterion",
}
MAX_TEXT = 20_000  # characters of one template


class ProtocolError(ValueError):
    """Every problem of a protocol file: ``(line, key, code, params)``."""

    def __init__(self, problems: list[tuple[int | None, str, str, dict[str, Any]]]):
        self.problems = problems
        first = problems[0]
        where = f"line {first[0]}: " if first[0] else ""
        super().__init__(f"{where}{first[1]}: {_english(first[2], first[3])}")


def _english(code: str, params: dict[str, Any]) -> str:
    return {
        "unknown_key": "unknown key",
        "missing_key": "required key is missing",
        "bad_value": "{detail}",
        "toml_syntax": "not valid TOML: {detail}",
        "unknown_protocol": "no built-in protocol {name}",
    }[code].format(**params)


def check(text: str) -> dict[str, Any]:
    try:
        data = tomllib.loads(text)
    except RecursionError:  # arrays nested 100,000 deep: a refusal, not a 500
        raise ProtocolError(
            [(None, "", "toml_syntax", {"detail": "nested too deeply"})]
        ) from None
    except tomllib.TOMLDecodeError as exc:
        line = re.search(r"line (\d+)", str(exc))
        detail = str(exc).split(" (at line")[0]
        raise ProtocolError(
            [
                (
                    int(line.group(1)) if line else None,
                    "",
                    "toml_syntax",
                    {"detail": detail},
                )
            ]
        ) from None
    except ValueError:  # int(): "Exceeds the limit (4300 digits) ..."
        long = re.search(r"[0-9_]{4301,}", text)
        at = text.count("\n", 0, long.start()) + 1 if long else None
        detail = "an integer of more than 4,300 digits"
        raise ProtocolError([(at, "", "toml_syntax", {"detail": detail})]) from None
    problems: list[tuple[int | None, str, str, dict[str, Any]]] = []

    def bad(key: str, code: str, needle: str | None = None, **params: object) -> None:
        """``needle``: text whose line is more precise than the key's."""
        line = _line_of(text, key)
        if needle is not None and line is not None:
            start = sum(len(row) + 1 for row in text.split("\n")[: line - 1])
            found = text.find(needle, start)
            line = text.count("\n", 0, found) + 1 if found != -1 else line
        problems.append((line, key, code, params))

    for key in sorted(set(data) - TOP_KEYS):
        bad(key, "unknown_key")
    for key in ("name", "version", "modes"):
        if key not in data:
            bad(key, "missing_key")
    if "name" in data and not (
        isinstance(data["name"], str) and NAME.fullmatch(data["name"])
    ):
        bad(
            "name",
            "bad_value",
            detail="lower-case letters, digits, '-', '_' or '.', at most 40",
        )
    modes = data.get("modes")
    if "modes" in data and (not isinstance(modes, dict) or not modes):
        bad(
            "modes",
            "bad_value",
            detail=f"a table with at least one of {', '.join(fixed_modes())}, "
            "a criterion or a check",
        )
    for name, spec in (modes or {}).items() if isinstance(modes, dict) else ():
        _check_mode(name, spec, bad)
    if "labels" in data:
        _check_labels(data["labels"], modes if isinstance(modes, dict) else {}, bad)
    if "report_card" in data:
        _check_report_card(data["report_card"], bad)
    if problems:
        raise ProtocolError(problems)
    return data


def _check_report_card(table: object, bad: Bad) -> None:
    """``[report_card]``: a threshold for some of the judge report card's
    criteria (``metrics/report_card.py``), each a number: in [0, 1] for a
    correlation, agreement or share, else at least 0.

    >>> _check_report_card({"length_spearman": 2, "speed": 1, "samples_alpha": 0.9},
    ...                    lambda key, code, **params: print(key, code, params))
    report_card.length_spearman bad_value {'detail': 'a number from 0 to 1'}
    report_card.speed unknown_key {}
    """
    from metrics.report_card import CRITERIA, UNIT_THRESHOLDS

    if not isinstance(table, dict):
        return bad("report_card", "bad_value", detail="a table of thresholds")
    for key in sorted(table):
        where = f"report_card.{key}"
        if key not in CRITERIA:
            bad(where, "unknown_key")
            continue
        value = table[key]
        high = 1.0 if key in UNIT_THRESHOLDS else float("inf")
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not 0 <= value <= high
        ):
            wanted = "from 0 to 1" if high == 1.0 else "of at least 0"
            bad(where, "bad_value", detail=f"a number {wanted}")
    return None


def _discover_suites() -> None:
    """The suites register their protocol modes (``metrics/registry.py``),
    found by name, as the registry finds the suites' modules: the suites
    read protocols, so this checker imports none of them."""
    importlib.import_module("metrics.registry").names()


# name -> ProtocolMode: the modes of a protocol the suites ask by name, each
# declared by its suite (``Suite.protocol_modes``); filled on the first read
PROTOCOL_MODES: Registry[ProtocolMode] = Registry(
    "protocol mode", _discover_suites, order=lambda name, _: name
)


def fixed_modes() -> dict[str, ProtocolMode]:
    """The modes the suites ask by name, as they declare them.

    >>> modes = fixed_modes()
    >>> all(kind_of(name) == mode.kind for name, mode in modes.items())
    True
    """
    return dict(PROTOCOL_MODES.items())


def kind_of(name: str, spec: object = None) -> str:
    """The kind a mode of this name must be: a fixed mode's own, else a
    criterion's, or a yes/no check's when it says ``kind = "binary"``.

    >>> kind_of("engagement"), kind_of("helpful", {"kind": "binary"})
    ('criterion', 'binary')
    """
    fixed = fixed_modes().get(name)
    if fixed is not None:
        return fixed.kind
    return CHECK if isinstance(spec, dict) and spec.get("kind") == CHECK else CRITERION


def is_check(name: str, kind: str) -> bool:
    """A yes/no check: a mode of another name than the fixed ones, of kind binary."""
    return name not in fixed_modes() and kind == CHECK


def fields_of(name: str) -> frozenset[str]:
    """The placeholders the templates of a mode of this name may use."""
    fixed = fixed_modes().get(name)
    return fixed.fields if fixed is not None else CRITERION_FIELDS


def _listed(names: list[str], last: str) -> str:
    """>>> _listed(["a", "b", "c"], "or"), _listed(["a"], "or")
    ('a, b or c', 'a')
    """
    return f"{', '.join(names[:-1])} {last} {names[-1]}" if len(names) > 1 else names[0]


def _check_mode(name: str, spec: object, bad: Bad) -> None:
    where = f"modes.{name}"
    kind = kind_of(name, spec)
    if name not in fixed_modes() and not CRITERION_NAME.fullmatch(name):
        return bad(
            where,
            "bad_value",
            detail="a criterion's mode name: lower-case letters, digits and '_', "
            "at most 40, starting with a letter",
        )
    if not isinstance(spec, dict):
        return bad(where, "bad_value", detail="must be a table")
    if kind != CRITERION and spec.get("kind") == CRITERION:
        return bad(where, "unknown_key")  # a criterion cannot take a fixed name
    for key in sorted(set(spec) - MODE_KEYS):
        bad(f"{where}.{key}", "unknown_key")
    if kind != CRITERION and "criterion" in spec:
        bad(f"{where}.criterion", "unknown_key")
    for key in ("kind", "system", "user"):
        if key not in spec:
            bad(f"{where}.{key}", "missing_key")
    if "kind" in spec and spec["kind"] != kind:
        detail = (
            f"the {name} mode is of kind {kind}"
            if kind != CRITERION
            else f"a mode other than {_listed(list(fixed_modes()), 'or')} is a "
            'criterion (kind = "criterion") or a yes/no check (kind = "binary")'
        )
        bad(f"{where}.kind", "bad_value", detail=detail)
    for key in ("system", "user", "format"):
        if key in spec:
            _check_template(f"{where}.{key}", spec[key], fields_of(name), bad)
    if kind == CRITERION:
        _check_criterion(where, spec, bad)
    if kind in ("score", CRITERION):
        _check_scale(where, spec, bad)
    if kind == "choice":
        _check_choices(where, spec.get("choices"), bad)
    if "schema" in spec and not isinstance(spec["schema"], dict):
        bad(f"{where}.schema", "bad_value", detail="a JSON schema as a TOML table")
    fields = spec.get("verdict_fields", [])
    if not (isinstance(fields, list) and all(isinstance(f, str) and f for f in fields)):
        bad(
            f"{where}.verdict_fields",
            "bad_value",
            detail="a list of the JSON field names the verdict may be written in",
        )


def _check_criterion(where: str, spec: dict[str, Any], bad: Bad) -> None:
    """A criterion's name (``criterion``, else the mode's) and its scale:
    whole numbers, as human scores on a criterion's scale are
    (``human_score@<criterion>:<low>-<high>``); no dimensions or total.

    >>> _check_criterion("modes.x", {"criterion": "A b", "scale": {"min": 1, "max": 4.5},
    ...     "total": "sum"}, lambda key, code, **params: print(key, code, params))
    modes.x.criterion bad_value {'detail': 'lower-case letters, digits and _, at most 40'}
    modes.x.scale bad_value {'detail': 'whole numbers: {min = 1, max = 5}'}
    modes.x.total unknown_key {}
    """
    name = spec.get("criterion")
    if name is not None and not (
        isinstance(name, str) and CRITERION_NAME.fullmatch(name)
    ):
        bad(
            f"{where}.criterion",
            "bad_value",
            detail="lower-case letters, digits and _, at most 40",
        )
    scale = spec.get("scale")
    if isinstance(scale, dict) and not all(
        isinstance(scale.get(end), int) and not isinstance(scale.get(end), bool)
        for end in ("min", "max")
    ):
        bad(f"{where}.scale", "bad_value", detail="whole numbers: {min = 1, max = 5}")
    for key in ("dimensions", "total", "choices"):
        if key in spec:
            bad(f"{where}.{key}", "unknown_key")


def _check_template(where: str, text: object, fields: frozenset[str], bad: Bad) -> None:
    if not isinstance(text, str) or len(text) > MAX_TEXT:
        return bad(where, "bad_value", detail=f"text of at most {MAX_TEXT} characters")
    if where.endswith(".format"):
        return None
    try:
        used = {
            m.group("named") or m.group("braced")
            for m in Template.pattern.finditer(text)
            if not m.group("escaped")
        }
    except (TypeError, ValueError):
        used = set()
    if None in used or "" in used:
        return bad(where, "bad_value", detail="a '$' that is no placeholder: write $$")
    unknown = sorted(used - fields)
    if unknown:
        bad(
            where,
            "bad_value",
            needle=f"${unknown[0]}",
            detail=f"unknown placeholder(s) {', '.join(unknown)}; "
            f"allowed: {', '.join(sorted(fields))}",
        )


def _check_scale(where: str, spec: dict[str, Any], bad: Bad) -> None:
    scale = spec.get("scale")
    if not isinstance(scale, dict):
        scale = {}
    low, high = scale.get("min"), scale.get("max")
    numeric = all(
        isinstance(n, int | float) and not isinstance(n, bool) for n in (low, high)
    )
    if not numeric or float(low) >= float(high):  # type: ignore[arg-type]
        return bad(
            f"{where}.scale",
            "bad_value",
            detail="{min = ..., max = ...} with min < max",
        )
    for index, dimension in enumerate(spec.get("dimensions") or []):
        if not (
            isinstance(dimension, dict)
            and isinstance(dimension.get("name"), str)
            and isinstance(dimension.get("max"), int | float)
        ):
            bad(
                f"{where}.dimensions",
                "bad_value",
                detail=f"dimension {index + 1} needs name and max",
            )
    if spec.get("total") not in (None, "sum"):
        bad(f"{where}.total", "bad_value", detail='"sum" or absent')


LABEL_KEYS = {"title", "description", "rules", "success"}
MAX_LABEL_CHECKS = 8  # checks one derived label may read (2**8 combinations)


def _check_labels(table: object, modes: dict[str, Any], bad: Bad) -> None:
    """``[labels.<name>]``: a derived label, a rule over the verdicts of the
    protocol's yes/no checks. ``rules`` are tried in order, the first whose
    ``when`` holds gives its ``label``; ``success`` lists the labels that
    count as a success. Every combination of the checks it reads must get a
    label.

    >>> modes = {"a": {"kind": "binary"}, "b": {"kind": "binary"}}
    >>> _check_labels({"x": {"rules": [{"label": "ok", "when": {"a": 1}}],
    ...     "success": ["ok"]}}, modes, lambda key, code, **p: print(key, p))
    labels.x.rules {'detail': 'no rule gives a label when a = 0'}
    """
    if not isinstance(table, dict) or not table:
        return bad("labels", "bad_value", detail="a table of derived labels")
    binary = {
        name
        for name, spec in modes.items()
        if isinstance(spec, dict) and is_check(name, kind_of(name, spec))
    }
    for name, spec in table.items():
        where = f"labels.{name}"
        if not NAME.fullmatch(name) or not isinstance(spec, dict):
            bad(where, "bad_value", detail="a table named in lower-case letters")
            continue
        for key in sorted(set(spec) - LABEL_KEYS):
            bad(f"{where}.{key}", "unknown_key")
        rules = spec.get("rules")
        if not isinstance(rules, list) or not rules:
            bad(f"{where}.rules", "missing_key")
            continue
        ok = True
        for index, rule in enumerate(rules):
            problem = _rule_problem(rule, binary)
            if problem:
                ok = False
                bad(
                    f"{where}.rules", "bad_value", detail=f"rule {index + 1}: {problem}"
                )
        labels = {rule["label"] for rule in rules} if ok else set()
        success = spec.get("success")
        if not (
            isinstance(success, list)
            and success
            and all(isinstance(s, str) for s in success)
        ):
            bad(f"{where}.success", "bad_value", detail="a list of its labels")
        elif ok and set(success) - labels:
            missing = ", ".join(sorted(set(success) - labels))
            bad(f"{where}.success", "bad_value", detail=f"no rule gives {missing}")
        if ok:
            gap = _uncovered(rules)
            if gap:
                bad(f"{where}.rules", "bad_value", detail=gap)


def _rule_problem(rule: object, binary: set[str]) -> str | None:
    if not isinstance(rule, dict) or set(rule) - {"label", "when"}:
        return "{label = ..., when = {check = 0 or 1, ...}}"
    label, when = rule.get("label"), rule.get("when")
    if not (isinstance(label, str) and NAME.fullmatch(label)):
        return "label: lower-case letters, digits, '-', '_' or '.'"
    if not isinstance(when, dict) or not when:
        return "when: a table of checks and the verdict (0 or 1) each must have"
    for check, want in when.items():
        if check not in binary:
            return f"{check} is not a yes/no check of this protocol"
        if isinstance(want, bool) or want not in (0, 1):
            return f"{check} = 0 or 1"
    return None


def _uncovered(rules: list[dict[str, Any]]) -> str | None:
    """The first combination of verdicts no rule labels, in words."""
    from itertools import product

    checks = sorted({check for rule in rules for check in rule["when"]})
    if len(checks) > MAX_LABEL_CHECKS:
        return f"at most {MAX_LABEL_CHECKS} checks per label"
    for values in product((0, 1), repeat=len(checks)):
        verdicts = dict(zip(checks, values, strict=True))
        if not any(
            all(verdicts[c] == w for c, w in rule["when"].items()) for rule in rules
        ):
            said = ", ".join(f"{c} = {v}" for c, v in verdicts.items())
            return f"no rule gives a label when {said}"
    return None


def _check_choices(where: str, choices: object, bad: Bad) -> None:
    if not isinstance(choices, dict) or set(choices) - {"A", "B", "tie"}:
        return bad(
            f"{where}.choices",
            "bad_value",
            detail="a table of A, B and tie, each a list of words",
        )
    for verdict, words in choices.items():
        if not (
            isinstance(words, list) and all(isinstance(w, str) and w for w in words)
        ):
            bad(f"{where}.choices.{verdict}", "bad_value", detail="a list of words")


def _line_of(text: str, key: str) -> int | None:
    """The line a dotted key is written on: its last part as ``key =``, under
    its table's header when it has one."""
    parts = key.split(".")
    start = 0
    if len(parts) > 1:
        header = re.search(rf"^\s*\[{re.escape('.'.join(parts[:-1]))}\]", text, re.M)
        start = header.end() if header else 0
    found = re.compile(rf"^\s*{re.escape(parts[-1])}\s*=", re.M).search(text, start)
    if found is None:
        header = re.search(rf"^\s*\[{re.escape(key)}\]", text, re.M)
        return text.count("\n", 0, header.start()) + 1 if header else None
    return text.count("\n", 0, found.start()) + 1
