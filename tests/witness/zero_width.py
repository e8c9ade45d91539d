"""Rewrite the witness's example documents (``tests/witness/examples/*.json``)
after issue 58's rule "an interval of width 0 is never shown as an
interval" reached every interval (t, normal and Bradley–Terry ones too):
each published interval whose ends are equal within 1e-9 becomes null, with
the note the product now writes, and nothing else changes — the rule moves
no point value, so this is what the product writes from the same rows.
(The documents' rows lack the details a new aggregate of every suite needs,
as ``tests/witness/recompare.py`` says.)

* ``curves``: a point's ``ci_low``/``ci_high`` → null, ``ci_note``
  ``ci_no_variation`` (AL(k): a t interval);
* ``summary``: ``<id>_ci_low``/``_ci_high`` → null, with ``summary_notes``
  ``ci_no_spread`` for a bootstrap (``bt_*``, ``pairwise_*``), else
  ``ci_no_variation`` (t or normal: ``al_session_slope``, simulation);
* ``judge_validity.judge_offsets``: ends → null, ``ci_note``
  ``ci_no_variation``, and ``judge_offset`` (which quoted the interval)
  → ``judge_offset_constant`` (params ``judge``, ``offset``).

``python -m tests.witness.zero_width [--check]``.
"""

from __future__ import annotations

import json
import sys

from tests.witness.recompare import EXAMPLES, replaced

ZERO = 1e-9
BOOTSTRAPPED = ("bt_", "pairwise_")


def flat(low, high) -> bool:
    return low is not None and high is not None and abs(high - low) <= ZERO


def curves(block: dict) -> dict:
    for by_method in block.values():
        for points in by_method.values():
            for point in points:
                if flat(point.get("ci_low"), point.get("ci_high")):
                    point["ci_low"] = point["ci_high"] = None
                    point["ci_note"] = "ci_no_variation"
    return block


def summary(block: dict, notes: dict) -> tuple[dict, dict]:
    for method, values in block.items():
        for key in [k for k in values if k.endswith("_ci_low")]:
            high = key[: -len("_ci_low")] + "_ci_high"
            if not flat(values[key], values.get(high)):
                continue
            values[key] = values[high] = None
            code = "ci_no_spread" if key.startswith(BOOTSTRAPPED) else "ci_no_variation"
            said = notes.setdefault(method, {})
            said[key], said[high] = {"code": code}, {"code": code}
    return block, notes


def judge_validity(block: dict) -> dict:
    for judge, found in (block.get("judge_offsets") or {}).items():
        if not flat(found.get("ci_low"), found.get("ci_high")):
            continue
        found["ci_low"] = found["ci_high"] = None
        found["ci_note"] = "ci_no_variation"
        if (found.get("note") or {}).get("code") == "judge_offset":
            params = {"judge": judge, "offset": f"{found['offset']:+.2f}"}
            found["note"] = {"code": "judge_offset_constant", "params": params}
    return block


def rewritten(doc: dict) -> dict:
    fresh = json.loads(json.dumps(doc))
    fresh["curves"] = curves(fresh.get("curves") or {})
    fresh["summary"], fresh["summary_notes"] = summary(
        fresh.get("summary") or {}, fresh.get("summary_notes") or {}
    )
    fresh["judge_validity"] = judge_validity(fresh.get("judge_validity") or {})
    return fresh


def main(check: bool) -> int:
    changed = []
    for path in sorted(EXAMPLES.glob("*.json")):
        text = path.read_text(encoding="utf-8")
        doc = json.loads(text)
        fresh = rewritten(doc)
        for block in ("curves", "summary", "summary_notes", "judge_validity"):
            if fresh[block] != doc.get(block):
                changed.append(f"{path.name} {block}")
                if not check:
                    text = replaced(text, fresh[block], block)
        if not check:
            path.write_text(text, encoding="utf-8")
    print("\n".join(changed) or "no change")
    return 0


if __name__ == "__main__":
    sys.exit(main("--check" in sys.argv[1:]))
