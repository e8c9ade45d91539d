"""Crafted input files whose exact results are known by hand."""

from __future__ import annotations

import json
from pathlib import Path


def session(session_id: str, methods: dict[str, list[str]]) -> dict:
    rounds = len(next(iter(methods.values())))
    return {
        "session_id": session_id,
        "user_profile": "A 22-year-old nursing student in Seoul who hikes on weekends.",
        "user_personality": "curious, introverted",
        "rounds": [
            {
                "round": k + 1,
                "user_message": f"message {k + 1}",
                "responses": {name: texts[k] for name, texts in methods.items()},
            }
            for k in range(rounds)
        ],
    }


def scores(values: list[int], binary: list[int]) -> list[str]:
    return [
        f"reply [[al={a}]] [[binary={b}]]" for a, b in zip(values, binary, strict=True)
    ]


def alignment_sessions() -> list[dict]:
    """Ours: sessions [50..90] and [30..70] -> AL(k) = 40..80, slope 10, R² 1.
    Base: 40 everywhere -> slope 0, R² undefined. Binary: Ours 8/10, Base 0/10."""
    return [
        session(
            "a",
            {
                "Base": scores([40] * 5, [0] * 5),
                "Ours": scores([50, 60, 70, 80, 90], [1, 1, 1, 1, 0]),
            },
        ),
        session(
            "b",
            {
                "Base": scores([40] * 5, [0] * 5),
                "Ours": scores([30, 40, 50, 60, 70], [0, 1, 1, 1, 1]),
            },
        ),
    ]


def fault_sessions() -> list[dict]:
    """One response per fault kind (rounds 1..6), Base always clean."""
    faults = ["429", "500x2", "garbage", "garbage_once", "timeout", "401"]
    return [
        session(
            "faults",
            {
                "Base": [f"fine [[al=50]] [[binary=1]] {k}" for k in range(6)],
                "Ours": [f"[[al=70]] [[binary=1]] [[fault={f}]]" for f in faults],
            },
        )
    ]


def write(path: Path, sessions: list[dict]) -> Path:
    path.write_text("".join(json.dumps(s, ensure_ascii=False) + "\n" for s in sessions))
    return path


def per_item(suite: str) -> int:
    """Rows a suite writes per item (response or session): one per row- or
    session-level metric, so a test counting rows survives a new metric."""
    from metrics import registry

    return sum(metric.level != "summary" for metric in registry.get(suite).metrics)
