"""The dashboard's "Judge audit": the results' ``judge_validity`` with what
each quantity means and the threshold a reader should hold it to, in the
reader's language (``metrics/validity.py`` says why a quantity is missing)."""

from __future__ import annotations

from core.i18n import _l
from metrics import notes
from metrics.validity import judge_validity, measuring

EXPLAINED = {
    "position_consistency": (
        _l("Position consistency"),
        _l("Share of pairwise comparisons whose verdict stayed the same when the "
           "two replies swapped places. 1 is fully consistent; below about 0.8 the "
           "order of the replies sways the judge, so read the pairwise results "
           "with care (flips already count as ties)."),
    ),
    "first_position_rate": (
        _l("First-position rate"),
        _l("Among single-order verdicts that named a winner, the share that chose "
           "the reply shown first. 0.5 is no preference; beyond about 0.6 (or "
           "below 0.4) the judge favours one position."),
    ),
}  # fmt: skip


def audit_rows(run) -> list[dict] | None:
    """One row per quantity, or None when the run had no judge at all."""
    if not run.judge:
        return None
    measured = (run.aggregates or {}).get("judge_validity") or {}
    found = judge_validity(measured, list(run.suites))
    rows = []
    for key, (label, explained) in EXPLAINED.items():
        code = found["reason_codes"].get(key)
        reason = notes.translate(code, {"suite": measuring(key)}, None) if code else ""
        rows.append({"key": key, "label": str(label), "value": found[key],
                     "explained": str(explained), "reason": reason})  # fmt: skip
    return rows
