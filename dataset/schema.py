"""Field rules of the session format (``docs/input-format.md``), pure.

``SessionChecker.check`` walks one parsed line and reports every problem it
finds instead of stopping at the first, so a user fixes a file in one pass.
Problems carry a code and the parameters of their message
(:mod:`core.problems`), so the web layer can translate them.

Primitive checks are in :mod:`dataset.fields`, the optional suite blocks in
:mod:`dataset.blocks`, the bounds in :mod:`dataset.limits`.

>>> from core.problems import Problem
>>> Problem.make(3, "rounds[0].round", "round_below_one").message
'rounds[0].round: must be an integer >= 1.'
"""

from __future__ import annotations

import math
from typing import Any

from core.problems import Problem
from dataset.blocks import BlockChecks
from dataset.fields import (
    WARNING_LINES,
    JSONObject,
    KeyPath,
    format_path,
    is_int,
    is_number,
    type_name,
)
from dataset.replies import reply_text

__all__ = ["SESSION_FIELDS", "SessionChecker", "format_path", "type_name"]

SESSION_FIELDS = {
    "session_id",
    "user_profile",
    "user_personality",
    "rounds",
    "sample_dialogues",
    "attributes",
    "persona",
    "target_order",
    "ground_truth_slots",
    "meta",
}


UNKNOWN_KEYS = 50  # distinct unknown field names a report names


class SessionChecker(BlockChecks):
    """Checks lines one at a time; remembers only ids and the method set."""

    def check(self, line: int, session: JSONObject) -> bool:
        self.line, self.ok = line, True
        self._check_id(session)
        for key in ("user_profile", "user_personality"):
            if isinstance(session.get(key), list):  # PersonaChat's spelling
                self.error((key,), "listed_persona")
        if not isinstance(session.get("user_profile"), list):
            self._string(session, (), "user_profile", required=True, non_empty=True)
        if not isinstance(session.get("user_personality"), list):
            self._string(session, (), "user_personality", required=True)
        if session.get("user_personality") == "":
            self.warn(("user_personality",), "empty_personality")
        self._check_rounds(session)
        self._count_lacking_replies()
        self._check_optional_blocks(session)
        for key in session.keys() - SESSION_FIELDS:
            # every line that has it is counted (the warning is grouped);
            # past UNKNOWN_KEYS names, new ones are not: the report stays small
            if key in self.warned_unknown or len(self.warned_unknown) < UNKNOWN_KEYS:
                self.warned_unknown.add(key)
                self.warn((key,), "unknown_field")
        return self.ok

    # -- session parts ----------------------------------------------------
    def _check_id(self, session: JSONObject) -> None:
        session_id = self._string(
            session,
            (),
            "session_id",
            required=True,
            non_empty=True,
            limit=self.limits.max_id_chars,
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

    def _check_rounds(self, session: JSONObject) -> None:
        rounds = self._typed(
            session, (), "rounds", lambda v: isinstance(v, list), "array", True
        )
        if rounds is None:
            return
        if not rounds:
            self.error(("rounds",), "empty_value")
        if len(rounds) > self.limits.max_rounds:
            self.error(
                ("rounds",),
                "too_many_rounds",
                count=len(rounds),
                limit=self.limits.max_rounds,
            )
        previous = None
        for index, round_ in enumerate(rounds):
            path = ("rounds", index)
            if not isinstance(round_, dict):
                self.error(
                    path, "wrong_type", expected="object", found=type_name(round_)
                )
                continue
            previous = self._check_round_number(round_, path, previous)
            message = round_.get("user_message")
            if type(message) is not str or len(message) > self.limits.max_text_chars:
                self._string(round_, path, "user_message", required=True)
            self._check_responses(round_, path)

    def _check_round_number(
        self, round_: JSONObject, path: KeyPath, previous: int | None
    ) -> int | None:
        number = round_.get("round")
        if isinstance(number, str) and number.strip().isdigit():  # "3"
            self.error((*path, "round"), "round_as_string")
            return int(number)
        if type(number) is not int:  # bool is not int here; report via the helper
            number = self._typed(round_, path, "round", is_int, "integer", True)
        if number is None:
            return previous
        if number == 0 and previous is None:  # counted from 0
            self.error((*path, "round"), "round_zero_based")
            return number
        if number < 1:
            self.error((*path, "round"), "round_below_one")
        elif number > self.limits.max_round:
            self.error(
                (*path, "round"), "number_too_large", limit=self.limits.max_round
            )
        elif previous is not None and number <= previous:
            self.error(
                (*path, "round"),
                "round_order",
                number=number,
                previous=previous,
            )
        return number

    def _check_responses(self, round_: JSONObject, path: KeyPath) -> None:
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
            if len(method) > self.limits.max_id_chars:
                self.error(
                    (*path, method[:40]),
                    "too_long",
                    length=len(method),
                    limit=self.limits.max_id_chars,
                )
            self._check_response(response, (*path, method))
        self._check_method_set(responses, path)

    def _check_response(self, response: object, path: KeyPath) -> None:
        if response is None:  # a missing reply (docs/input-format.md)
            return
        if isinstance(response, str):
            self._length(response, path)
            return
        if not isinstance(response, dict):
            expected = "string or object"
            self.error(path, "wrong_type", expected=expected, found=type_name(response))
            return
        text = response.get("text")
        if type(text) is not str or len(text) > self.limits.max_text_chars:
            self._string(response, path, "text", required=True)
        # Optional fields are checked only when present: most responses carry
        # one or two of them, and this runs for every response of every round.
        if "user_message" in response:
            self._string(response, path, "user_message")
        if "latency_s" in response:
            latency = self._typed(response, path, "latency_s", is_number, "number")
            if latency is not None and not math.isfinite(latency):
                self.error((*path, "latency_s"), "not_finite")
            elif latency is not None and latency < 0:
                self.error((*path, "latency_s"), "negative_latency")
        if "slots" in response:
            self._check_slot_map(response, path, "slots", updates=True)
        if "slots_state" in response:
            self._check_slot_map(response, path, "slots_state")
        if "sim" in response:
            self._check_sim(response, path)
        if "human" in response:
            self._check_human(response, path)
        if "judges" in response:
            self._check_judges(response, path)

    def _check_method_set(self, responses: JSONObject, path: KeyPath) -> None:
        """Methods are the union over the file, in the order they first
        appear; a method may lack a reply in any round (null or absent).
        Replies are counted per method, so the report can say how many
        each one lacks (``missing_reply_warnings``)."""
        self.reply_slots += 1
        self.line_slots += 1
        for method, response in responses.items():
            if method not in self.methods:
                self.methods[method] = None
                # first seen here: every earlier line with rounds lacks it
                count, lines = self.round_lines
                self.lacking[method] = [count, list(lines)]
            if response is not None:
                self.replies[method] = self.replies.get(method, 0) + 1
                self.line_replies[method] = self.line_replies.get(method, 0) + 1
                self.to_evaluate += bool(reply_text(response).strip())
        if len(self.methods) > self.limits.max_methods and not self.reference_line:
            self.reference_line = self.line  # said once, where it happened
            self.error(
                path,
                "too_many_methods",
                count=len(self.methods),
                limit=self.limits.max_methods,
            )

    def _count_lacking_replies(self) -> None:
        """The methods this line (with rounds) lacks a reply of, counted
        with the first lines, as a grouped warning counts its lines."""
        if not self.line_slots:
            return
        for method in self.methods:
            if self.line_replies.get(method, 0) < self.line_slots:
                _count_line(self.lacking.setdefault(method, [0, []]), self.line)
        _count_line(self.round_lines, self.line)
        self.line_replies, self.line_slots = {}, 0

    def missing_reply_warnings(self) -> None:
        """One warning per method that lacks replies: how many of the
        file's rounds it has none in, on the first line lacking one, with
        the lines (sessions) lacking one counted."""
        for method in self.methods:
            missing = self.reply_slots - self.replies.get(method, 0)
            if missing:  # the path is the method: one warning (group) each
                count, lines = self.lacking[method]
                problem = Problem.make(
                    lines[0],
                    method,
                    "replies_missing",
                    missing=missing,
                    total=self.reply_slots,
                )
                self.sink.counted_warning(problem, count, lines)


def _count_line(counted: list[Any], line: int) -> None:
    """One more line in ``[count, first lines]``."""
    counted[0] += 1
    if len(counted[1]) < WARNING_LINES:
        counted[1].append(line)
