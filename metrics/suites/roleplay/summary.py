"""The roleplay suite's summary: JERA and ALMP means over sessions with
t-intervals, and the ALMP drill-down of the dashboard."""

from __future__ import annotations

from typing import Any

from core.status import RowStatus
from metrics import row_source
from metrics.columns import RowColumns
from metrics.rows import session_summary
from metrics.suite import (
    SuiteSummary,
    SummaryRows,
)
from metrics.suites.roleplay.verdicts import JERA_ROWS, JERA_SCALES

PANEL_SESSIONS = 50  # ALMP drill-down entries per method on the dashboard


# -- summary ----------------------------------------------------------------
def _almp_panel(
    rows: RowColumns, methods: list[str]
) -> dict[str, list[dict[str, Any]]]:
    """The first ``PANEL_SESSIONS`` sessions by id of each method (not the
    first to arrive: the same sessions whatever order the rows came in)."""
    panel: dict[str, list[dict[str, Any]]] = {method: [] for method in methods}
    for row in rows.dicts(rows.where("almp", scored=False, status=RowStatus.OK)):
        entries = panel.get(row["method"])
        if entries is None:
            continue
        detail = row["detail"]
        assert detail is not None  # an ok almp row always carries its matches
        entries.append(
            {
                "session_id": row["session_id"],
                "matched": detail["matched"],
                "missed": detail["missed"],
            }
        )
        if len(entries) > 2 * PANEL_SESSIONS:  # bounded: keep the smallest ids
            entries[:] = sorted(entries, key=_session_id)[:PANEL_SESSIONS]
    return {m: sorted(e, key=_session_id)[:PANEL_SESSIONS] for m, e in panel.items()}


def _session_id(entry: dict[str, Any]) -> str:
    session_id: str = entry["session_id"]
    return session_id


def summarize(rows: SummaryRows, methods: list[str]) -> SuiteSummary:
    """Means over sessions with t-intervals (panel ``ci``)."""
    rows = row_source.all_rows(rows, details=True)
    found = session_summary(rows, (*JERA_ROWS, "almp"), methods, streamed=False)
    values, summary, cis = found.values, found.summary, found.intervals
    jera_panel = {
        method: {s: cis[method][f"jera_{s}"]["mean"] for s in JERA_SCALES}
        for method in methods
    }
    almp = _almp_panel(rows, methods)
    return {
        "summary": summary,
        "session_values": {"jera": values["jera"], "almp": values["almp"]},
        "panel": {"jera": jera_panel, "almp": almp, "ci": cis},
    }


def almp_table_rows(panel: dict[str, Any], methods: list[str]) -> list[dict[str, Any]]:
    """One row per (method, session) of the ALMP drill-down entries.

    >>> entry = {"session_id": "s", "missed": ["shy"], "matched": [
    ...     {"attribute": "kind", "observed": "warm", "reason": "wordnet kind.a.01"}]}
    >>> almp_table_rows({"almp": {"M": [entry]}}, ["M"])[0]["matched"]
    'kind ≈ warm (wordnet kind.a.01)'
    """
    rows = []
    for method in methods:
        for entry in panel.get("almp", {}).get(method, []):
            matched = ", ".join(
                f"{m['attribute']} ≈ {m['observed']} ({m['reason']})"
                for m in entry["matched"]
            )
            rows.append(
                {
                    "method": method,
                    "session_id": entry["session_id"],
                    "matched": matched or "—",
                    "missed": ", ".join(entry["missed"]) or "—",
                }
            )
    return rows
