"""Checks of the optional session blocks that enable suites: sample
dialogues, attributes, persona, target order, slot maps and the per-response
``sim`` block (pure)."""

from __future__ import annotations

import math
import re

from dataset.fields import FieldChecks, JSONObject, KeyPath, is_number, type_name

CRITERION = re.compile(r"[a-z0-9_-]{1,40}")  # a human score's criterion
# a recorded judge's name: no "@" or ":" (its rows' ids are
# recorded@<judge>@<criterion>:<low>-<high>, at most 128 characters)
JUDGE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/+-]{0,47}")


class BlockChecks(FieldChecks):
    def _check_optional_blocks(self, session: JSONObject) -> None:
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

    def _check_slot_map(
        self, parent: JSONObject, base: KeyPath, key: str, updates: bool = False
    ) -> None:
        """``{topic: {field: str | [str]}}`` for ground truth and memory
        snapshots; ``updates`` (a response's ``slots``) also allows ``null``
        (delete) and ``{"value": str | [str], "append": bool}``
        (``metrics/slot_matching.memory_state``)."""
        slots = self._object(parent, base, key)
        if slots is None:
            return
        path = (*base, key)
        if len(slots) > self.limits.max_topics:
            self.error(
                path, "too_many_topics", count=len(slots), limit=self.limits.max_topics
            )
        for topic, fields in slots.items():
            topic_path = (*path, topic)
            if len(topic) > self.limits.max_key_chars:
                self.error(
                    topic_path,
                    "too_long",
                    length=len(topic),
                    limit=self.limits.max_key_chars,
                )
            if not isinstance(fields, dict):
                self.error(
                    topic_path, "wrong_type", expected="object", found=type_name(fields)
                )
                continue
            if len(fields) > self.limits.max_list_items:
                self.error(
                    topic_path,
                    "too_many_items",
                    count=len(fields),
                    limit=self.limits.max_list_items,
                )
                continue
            for name in fields:
                if len(name) > self.limits.max_key_chars:
                    self.error(
                        (*topic_path, name[:64]),
                        "too_long",
                        length=len(name),
                        limit=self.limits.max_key_chars,
                    )
                if updates:
                    self._check_slot_update(fields, topic_path, name)
                else:
                    self._string_list(fields, topic_path, name, True, numbers=True)

    def _check_slot_update(self, fields: JSONObject, path: KeyPath, name: str) -> None:
        update = fields[name]
        if update is None:  # a deletion
            return
        if not isinstance(update, dict):
            self._string_list(fields, path, name, True, numbers=True)
            return
        path = (*path, name)
        if "value" not in update:
            self.error((*path, "value"), "missing_field")
        else:
            self._string_list(update, path, "value", True, numbers=True)
        self._typed(update, path, "append", lambda v: isinstance(v, bool), "boolean")

    def _check_human(self, response: JSONObject, path: KeyPath) -> None:
        """``{"al": 0-100, "binary": 0 | 1}``, both optional: human labels the
        judge is checked against."""
        human = self._object(response, path, "human")
        if human is None:
            return
        path = (*path, "human")
        al = self._typed(human, path, "al", is_number, "number")
        if al is not None and not (math.isfinite(al) and 0 <= al <= 100):
            self.error((*path, "al"), "human_al_range")
        binary = human.get("binary")
        if binary is not None and (type(binary) is not int or binary not in (0, 1)):
            self.error((*path, "binary"), "human_binary_value")
        if "scores" in human:
            self._check_human_scores(human, path)

    def _check_judges(self, response: JSONObject, path: KeyPath) -> None:
        """``{judge: {criterion: {"value", "scale"}}}``: verdicts a judge
        made elsewhere (recorded judges), each score as a human score's."""
        judges = self._object(response, path, "judges") or {}
        for name in judges:
            if not JUDGE_NAME.fullmatch(name):
                self.error((*path, "judges", name[:64]), "recorded_judge_name")
                continue
            self._check_human_scores(judges, (*path, "judges"), name)

    def _check_human_scores(
        self, human: JSONObject, path: KeyPath, key: str = "scores"
    ) -> None:
        """``{criterion: {"value": number, "scale": [low, high]}}``: a human
        score on the criterion's own scale (integers, low < high), the value
        within it; criteria named as metric keys (``[a-z0-9_-]``, ≤ 40)."""
        scores = self._object(human, path, key)
        for criterion, score in (scores or {}).items():
            where = (*path, key, criterion)
            if not CRITERION.fullmatch(criterion):
                self.error(where, "human_criterion_name")
                continue
            if not isinstance(score, dict):
                self.error(
                    where, "wrong_type", expected="object", found=type_name(score)
                )
                continue
            scale = score.get("scale")
            if not (
                isinstance(scale, list)
                and len(scale) == 2
                and all(type(end) is int for end in scale)
                and scale[0] < scale[1]
            ):
                self.error((*where, "scale"), "human_score_scale")
                continue
            value = self._typed(score, where, "value", is_number, "number", True)
            if value is not None and not (
                math.isfinite(value) and scale[0] <= value <= scale[1]
            ):
                self.error(
                    (*where, "value"), "human_score_range", low=scale[0], high=scale[1]
                )

    def _check_sim(self, response: JSONObject, path: KeyPath) -> None:
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
