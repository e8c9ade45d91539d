"""Rewrite the ``comparisons`` block of the witness's example documents
(``tests/witness/examples/*.json``) from their own rows, by the current
product (``metrics.engine.aggregate``), after a change of a comparison's
method (issue 58: Pratt's zeros, paired effect sizes, exact small-sample
intervals). Every other block stays as the product wrote it.

A suite whose summary needs the rows' details (roleplay's ALMP matches),
which a document does not carry, cannot be recomputed here: that document is
named, and its comparisons come from a new ``flask evaluate`` of its input
(tests/witness/test_reference.py says how).

``python -m tests.witness.recompare [--check]``: ``--check`` only lists the
documents whose comparisons would change.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

EXAMPLES = Path(__file__).parent / "examples"


def recompared(doc: dict) -> list[dict]:
    from metrics import engine, registry

    rows = doc["rows"]
    suites = doc["run"]["suites"]
    methods = doc["run"]["file"]["methods"]

    def rows_of(suite):
        return [r for r in rows if registry.spec(r["metric"]).suite == suite.name]

    missing = bool((doc["run"].get("counts") or {}).get("missing"))
    return engine.aggregate(rows_of, suites, methods, replies_missing=missing)[
        "comparisons"
    ]


def replaced(text: str, comparisons: list[dict]) -> str:
    """``text`` with its top-level comparisons block rewritten in the
    document's own indentation; every other byte is kept."""
    unit = len(text.splitlines()[1]) - len(text.splitlines()[1].lstrip(" "))
    key = "\n" + " " * unit + '"comparisons": '
    start = text.index(key) + len(key)
    _, length = json.JSONDecoder().raw_decode(text[start:])
    block = json.dumps(comparisons, ensure_ascii=False, indent=unit)
    block = block.replace("\n", "\n" + " " * unit)
    return text[:start] + block + text[start + length :]


def main(check: bool) -> int:
    changed = []
    for path in sorted(EXAMPLES.glob("*.json")):
        text = path.read_text(encoding="utf-8")
        doc = json.loads(text)
        try:
            fresh = json.loads(json.dumps(recompared(doc)))
        except AssertionError:  # a suite needs row details a document lacks
            print(f"{path.name}: re-run `flask evaluate` (rows without details)")
            continue
        if fresh != doc["comparisons"]:
            changed.append(path.name)
            if not check:
                path.write_text(replaced(text, fresh), encoding="utf-8")
    print("\n".join(changed) or "no change")
    return 0


if __name__ == "__main__":
    sys.exit(main("--check" in sys.argv[1:]))
