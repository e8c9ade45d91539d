"""Rewrite the ``comparisons``, ``summary`` and ``summary_notes`` blocks of
the witness's example documents
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


def recompared(doc: dict, block: str = "comparisons"):
    from metrics import engine, registry

    rows = doc["rows"]
    suites = doc["run"]["suites"]
    methods = doc["run"]["file"]["methods"]

    def rows_of(suite):
        return [r for r in rows if registry.spec(r["metric"]).suite == suite.name]

    missing = bool((doc["run"].get("counts") or {}).get("missing"))
    found = engine.aggregate(rows_of, suites, methods, replies_missing=missing)
    if block == "summary_notes":
        from metrics.results import summary_notes

        return summary_notes(found)
    return found[block]


def replaced(text: str, comparisons, block: str = "comparisons") -> str:
    """``text`` with its top-level ``block`` rewritten in the document's own
    indentation; every other byte is kept."""
    unit = len(text.splitlines()[1]) - len(text.splitlines()[1].lstrip(" "))
    key = "\n" + " " * unit + f'"{block}": '
    start = text.index(key) + len(key)
    _, length = json.JSONDecoder().raw_decode(text[start:])
    block = json.dumps(comparisons, ensure_ascii=False, indent=unit)
    block = block.replace("\n", "\n" + " " * unit)
    return text[:start] + block + text[start + length :]


BLOCKS = ("comparisons", "summary", "summary_notes")
# of the summary, only the keys this module's changes reach: summaries need
# row details (Bradley–Terry, ALMP) a document's rows do not carry
SUMMARY_KEYS = ("pairwise_winrate_ci_low", "pairwise_winrate_ci_high")


def merged(block: str, old, fresh):
    """The block to write: ``fresh`` comparisons; in the summary and its
    notes only ``SUMMARY_KEYS`` taken from ``fresh``."""
    if block == "comparisons":
        return fresh
    found = json.loads(json.dumps(old))
    for method in set(found) | set(fresh):
        mine, theirs = found.setdefault(method, {}), fresh.get(method, {})
        for key in SUMMARY_KEYS:
            if key in theirs:
                mine[key] = theirs[key]
            elif block == "summary_notes":
                mine.pop(key, None)
        if not mine:
            del found[method]
    return found


def main(check: bool) -> int:
    changed = []
    for path in sorted(EXAMPLES.glob("*.json")):
        for block in BLOCKS:
            text = path.read_text(encoding="utf-8")
            doc = json.loads(text)
            try:
                fresh = json.loads(json.dumps(recompared(doc, block)))
            except AssertionError:  # a suite needs row details a document lacks
                print(f"{path.name}: re-run `flask evaluate` (rows without details)")
                break
            fresh = merged(block, doc.get(block) or {}, fresh)
            if fresh != doc.get(block):
                changed.append(f"{path.name} {block}")
                if not check:
                    path.write_text(replaced(text, fresh, block), encoding="utf-8")
    print("\n".join(changed) or "no change")
    return 0


if __name__ == "__main__":
    sys.exit(main("--check" in sys.argv[1:]))
