"""Deterministic synthetic sessions for benchmarks (valid input format)."""

from __future__ import annotations

import json
import random
from pathlib import Path

WORDS = (
    "hiking coffee nurse shift weekend guitar novel Seoul Shanghai marathon "
    "recipe garden exam deadline puppy travel museum jazz startup budget "
    "我 喜欢 周末 爬山 咖啡 护士 夜班 서울 주말 등산 커피 간호사"
).split()


def sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def session(rng: random.Random, index: int, rounds: int, methods: list[str]) -> dict:
    return {
        "session_id": f"bench_{index:07d}",
        "user_profile": sentence(rng, 25),
        "user_personality": "curious, introverted, witty",
        "sample_dialogues": [sentence(rng, 20), sentence(rng, 15)],
        "rounds": [
            {
                "round": k,
                "user_message": sentence(rng, 18),
                "responses": {
                    name: {
                        "text": sentence(rng, 40),
                        "latency_s": round(rng.random(), 3),
                    }
                    for name in methods
                },
            }
            for k in range(1, rounds + 1)
        ],
    }


def write_file(
    path: Path,
    target_bytes: int,
    rounds: int = 10,
    methods: tuple[str, ...] = ("Base", "RAG", "Ours", "Oracle"),
    seed: int = 7,
) -> Path:
    """Write sessions until the file reaches ``target_bytes``; reuse if present."""
    if path.exists() and path.stat().st_size >= target_bytes:
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    written = index = 0
    with path.open("w", encoding="utf-8") as out:
        while written < target_bytes:
            line = json.dumps(
                session(rng, index, rounds, list(methods)), ensure_ascii=False
            )
            out.write(line + "\n")
            written += len(line.encode()) + 1
            index += 1
    return path
