"""Prompt cache by prompt version (issue 49): the cached share of the
roleplay and slot-judge prompt tokens with the ``_v1`` prompt files and the
static-first ``_v2`` ones, and each prompt's fixed prefix in tokens
(``testing/prompt_cache_count.py``: the requests the suites build, counted by
the scripted judge's model of OpenAI's prompt cache).

``python -m bench prompt_cache``: ``sample_data.jsonl``, and the same
sessions with sample dialogues five times as long (a longer character card);
``python -m bench.prompt_cache FILE`` for another file."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from testing.prompt_cache_count import SAMPLE, count


def longer_cards(folder: Path) -> Path:
    """sample_data.jsonl with every session's sample dialogues five times."""
    lines = []
    for line in SAMPLE.read_text(encoding="utf-8").splitlines():
        session = json.loads(line)
        session["sample_dialogues"] = session["sample_dialogues"] * 5
        lines.append(json.dumps(session, ensure_ascii=False))
    path = folder / "sample_data_cards_x5.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _short(figures: dict) -> dict:
    return {
        f"{suite} {version}": f"{f['cached_share']:.1%} of {f['prompt_tokens']:,} "
        f"({f['cached_tokens']:,} cached, {f['requests']} requests)"
        for suite in ("roleplay", "slots")
        for version, f in figures[suite].items()
    }


def run() -> dict:
    with tempfile.TemporaryDirectory() as folder:
        sample, cards = count(SAMPLE), count(longer_cards(Path(folder)))
    return {
        "name": "prompt cache, prompts v1 vs v2 (scripted judge's cache model)",
        **{f"sample_data {k}": v for k, v in _short(sample).items()},
        **{f"cards x5 {k}": v for k, v in _short(cards).items()},
        "fixed prefix tokens": ", ".join(
            f"{name} {tokens}" for name, tokens in sample["fixed_prefix_tokens"].items()
        ),
    }


if __name__ == "__main__":
    print(
        json.dumps(count(Path(sys.argv[1]) if len(sys.argv) > 1 else SAMPLE), indent=1)
    )
