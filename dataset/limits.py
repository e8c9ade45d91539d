"""Bounds on what one upload may ask of the server, checked at validation.

Every string and integer the database stores has a bound here (session ids
and method names ``VARCHAR(255)``, rounds a 32-bit ``INTEGER``, per-topic
metric ids ``VARCHAR(128)``), and the counts that multiply into work and rows
(sessions, rounds per session, methods, text length, slot topics) are capped,
so a small file cannot cost unbounded time or memory. The defaults live in
``config.py``; ``Limits.from_config`` reads a run's configuration.

>>> Limits().max_round
2147483647
>>> Limits.from_config({"MAX_METHODS": 3}).max_methods
3
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from config import DEFAULTS

INT32_MAX = 2**31 - 1


@dataclass(frozen=True)
class Limits:
    max_sessions: int = DEFAULTS["MAX_SESSIONS"]
    max_rounds: int = DEFAULTS["MAX_ROUNDS_PER_SESSION"]
    max_methods: int = DEFAULTS["MAX_METHODS"]
    max_text_chars: int = DEFAULTS["MAX_TEXT_CHARS"]
    max_topics: int = DEFAULTS["MAX_SLOT_TOPICS"]
    max_id_chars: int = 255  # session ids and method names: VARCHAR(255)
    max_key_chars: int = 64  # slot topics become metric ids "<metric>@<topic>"
    # a list of strings (sample dialogues, attributes, moods, a slot's values,
    # the fields of a slot topic): at most this many items, and together at
    # most max_text_chars (they reach one judge prompt)
    max_list_items: int = 1000
    max_round: int = INT32_MAX  # round numbers: INTEGER

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> Limits:
        names = {
            "max_sessions": "MAX_SESSIONS",
            "max_rounds": "MAX_ROUNDS_PER_SESSION",
            "max_methods": "MAX_METHODS",
            "max_text_chars": "MAX_TEXT_CHARS",
            "max_topics": "MAX_SLOT_TOPICS",
        }
        given = {
            f.name: config[names[f.name]]
            for f in fields(cls)
            if names.get(f.name) in config
        }
        return cls(**given)
