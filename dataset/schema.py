"""Field rules of the session format (``docs/input-format.md``), pure.

``SessionChecker.check`` walks one parsed line and reports every problem it
finds instead of stopping at the first, so a user fixes a file in one pass.
Problems carry a code and the parameters of their message
(:mod:`core.problems`), so the web layer can translate them.

>>> Problem.make(3, "rounds[0].round", "round_below_one").message
'rounds[0].round: must be an integer >= 1.'
>>> type_name([1]), type_name(True), type_name(None)
('array', 'boolean', 'null')
"""

from __future__ import annotations

import json
import re

from core.problems import Problem

SESSION_FIELDS = {
    "session_id", "user_profile", "user_personality", "rounds", "sample_dialogues",
    "attributes", "persona", "target_order", "ground_truth_slots", "meta",
}  # fmt: skip
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def type_name(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    names: dict[type, str] = {str: "string", list: "array", dict: "object"}
    return names.get(type(value), "value")


def format_path(parts: tuple) -> str:
    """``rounds[2].responses.Ours``; odd keys are quoted: ``responses["a b"]``.

    Paths travel as tuples and become text only when a problem is reported,
    which keeps validation of a large valid file cheap.

    >>> format_path(("rounds", 2, "responses", "Ours"))
    'rounds[2].responses.Ours'
    >>> format_path(("rounds", 0, "responses", "my method"))
    'rounds[0].responses["my method"]'
    """
    text = ""
    for key in parts:
        if isinstance(key, int):
            text += f"[{key}]"
        elif _IDENTIFIER.match(key):
            text += f".{key}" if text else key
        else:
            text += f"[{json.dumps(key, ensure_ascii=False)}]"
    return text


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


class SessionChecker:
    """Checks lines one at a time; remembers only ids and the method set."""

    def __init__(self, sink):
        self.sink = sink
        self.seen_ids: dict[str, int] = {}
        self.methods: dict[str, None] = {}  # ordered set of the reference methods
        self.reference_line: int | None = None
        self.warned_unknown: set[str] = set()
        self.line = 0
        self.ok = True

    def error(self, path: tuple, code: str, **params) -> None:
        self.ok = False
        self.sink.error(Problem.make(self.line, format_path(path), code, **params))

    def warn(self, path: tuple, code: str, **params) -> None:
        self.sink.warning(Problem.make(self.line, format_path(path), code, **params))

    def check(self, line: int, session: dict) -> bool:
        self.line, self.ok = line, True
        self._check_id(session)
        self._string(session, (), "user_profile", required=True, non_empty=True)
        self._string(session, (), "user_personality", required=True)
        if session.get("user_personality") == "":
            self.warn(("user_personality",), "empty_personality")
        self._check_rounds(session)
        self._check_optional_blocks(session)
        for key in session.keys() - SESSION_FIELDS:
            if key not in self.warned_unknown:
                self.warned_unknown.add(key)
                self.warn((key,), "unknown_field")
        return self.ok

    # -- primitives -------------------------------------------------------
    def _typed(
        self, parent: dict, base: tuple, key: str, kinds, expected: str, required=False
    ):
        path = (*base, key)
        if key not in parent:
            if required:
                self.error(path, "missing_field")
            return None
        value = parent[key]
        if not kinds(value):
            self.error(path, "wrong_type", expected=expected, found=type_name(value))
            return None
        return value

    def _string(self, parent, base, key, required=False, non_empty=False):
        value = self._typed(
            parent, base, key, lambda v: isinstance(v, str), "string", required
        )
        if non_empty and isinstance(value, str) and not value.strip():
            self.error((*base, key), "empty_value")
        return value

    def _string_list(self, parent, base, key, allow_string=False):
        value = parent.get(key)
        if key not in parent or (allow_string and isinstance(value, str)):
            return
        expected = "string or array of strings" if allow_string else "array of strings"
        if not isinstance(value, list):
            self.error(
                (*base, key),
                "wrong_type",
                expected=expected,
                found=type_name(value),
            )
            return
        for index, item in enumerate(value):
            if not isinstance(item, str):
                path = (*base, key, index)
                self.error(path, "wrong_type", expected="string", found=type_name(item))

    def _object(self, parent, base, key, required=False) -> dict | None:
        return self._typed(
            parent, base, key, lambda v: isinstance(v, dict), "object", required
        )

    # -- session parts ----------------------------------------------------
    def _check_id(self, session: dict) -> None:
        session_id = self._string(
            session, (), "session_id", required=True, non_empty=True
        )
        if not isinstance(session_id, str) or not session_id.strip():
            return
        first = self.seen_ids.get(session_id)
        if first is not None:
            self.error(
                ("session_id",),
                "duplicate_session",
                session_id=session_id,
                first_line=first,
            )
        else:
            self.seen_ids[session_id] = self.line

    def _check_rounds(self, session: dict) -> None:
        rounds = self._typed(
            session, (), "rounds", lambda v: isinstance(v, list), "array", True
        )
        if rounds is None:
            return
        if not rounds:
            self.error(("rounds",), "empty_value")
        previous = None
        for index, round_ in enumerate(rounds):
            path = ("rounds", index)
            if not isinstance(round_, dict):
                self.error(
                    path, "wrong_type", expected="object", found=type_name(round_)
                )
                continue
            previous = self._check_round_number(round_, path, previous)
            if type(round_.get("user_message")) is not str:  # fast path when valid
                self._string(round_, path, "user_message", required=True)
            self._check_responses(round_, path)

    def _check_round_number(self, round_: dict, path: tuple, previous: int | None):
        number = round_.get("round")
        if type(number) is not int:  # bool is not int here; report via the helper
            number = self._typed(round_, path, "round", _is_int, "integer", True)
        if number is None:
            return previous
        if number < 1:
            self.error((*path, "round"), "round_below_one")
        elif previous is not None and number <= previous:
            self.error(
                (*path, "round"),
                "round_order",
                number=number,
                previous=previous,
            )
        return number

    def _check_responses(self, round_: dict, path: tuple) -> None:
        responses = round_.get("responses")
        if type(responses) is not dict:
            responses = self._object(round_, path, "responses", required=True)
        if responses is None:
            return
        path = (*path, "responses")
        if not responses:
            self.error(path, "empty_value")
            return
        for method, response in responses.items():
            self._check_response(response, (*path, method))
        self._check_method_set(responses, path)

    def _check_response(self, response, path: tuple) -> None:
        if isinstance(response, str):
            return
        if not isinstance(response, dict):
            expected = "string or object"
            self.error(path, "wrong_type", expected=expected, found=type_name(response))
            return
        if type(response.get("text")) is not str:
            self._string(response, path, "text", required=True)
        # Optional fields are checked only when present: most responses carry
        # one or two of them, and this runs for every response of every round.
        if "user_message" in response:
            self._string(response, path, "user_message")
        if "latency_s" in response:
            latency = self._typed(response, path, "latency_s", _is_number, "number")
            if latency is not None and latency < 0:
                self.error((*path, "latency_s"), "negative_latency")
        if "slots" in response:
            self._check_slot_map(response, path, "slots")
        if "sim" in response:
            self._check_sim(response, path)

    def _check_method_set(self, responses: dict, path: tuple) -> None:
        if self.reference_line is None:
            self.methods = dict.fromkeys(responses)
            self.reference_line = self.line
            return
        missing = [name for name in self.methods if name not in responses]
        extra = [name for name in responses if name not in self.methods]
        for code, names in (("method_missing", missing), ("method_extra", extra)):
            if names:
                listed = ", ".join(names)
                self.error(
                    path, code, methods=listed, reference_line=self.reference_line
                )

    def _check_optional_blocks(self, session: dict) -> None:
        self._string_list(session, (), "sample_dialogues", allow_string=True)
        self._string_list(session, (), "attributes")
        self._string_list(session, (), "target_order")
        self._check_slot_map(session, (), "ground_truth_slots")
        self._object(session, (), "meta")
        persona = self._object(session, (), "persona")
        if persona is not None:
            for key in ("type", "exploration", "ordering"):
                self._string(persona, ("persona",), key)
            self._string_list(persona, ("persona",), "moods")
            self._typed(
                persona,
                ("persona",),
                "complete",
                lambda v: isinstance(v, bool),
                "boolean",
            )

    def _check_slot_map(self, parent: dict, base: tuple, key: str) -> None:
        """``{topic: {field: str | [str]}}`` for ground truth and memory writes."""
        slots = self._object(parent, base, key)
        if slots is None:
            return
        path = (*base, key)
        for topic, fields in slots.items():
            topic_path = (*path, topic)
            if not isinstance(fields, dict):
                self.error(
                    topic_path, "wrong_type", expected="object", found=type_name(fields)
                )
                continue
            for name in fields:
                self._string_list(fields, topic_path, name, allow_string=True)

    def _check_sim(self, response: dict, path: tuple) -> None:
        sim = self._object(response, path, "sim")
        if sim is None:
            return
        path = (*path, "sim")
        for key in ("exploration", "mood", "ordering"):
            self._string(sim, path, key)
        for key in ("complete", "exit"):
            self._typed(sim, path, key, lambda v: isinstance(v, bool), "boolean")
        for key in ("order", "tracking"):
            self._string_list(sim, path, key)
