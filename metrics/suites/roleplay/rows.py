"""The rows of one (session, method) scene from the judge's outcomes: JERA's
rows and the ALMP row, with the reason when a mode failed."""

from __future__ import annotations

from statistics import fmean, pstdev
from typing import Any

from core.status import RowStatus
from metrics import lexicon
from metrics.judging import Outcome, verdict_of
from metrics.notes import Note, note
from metrics.rows import ResultRow, RowKey, result_row
from metrics.suites.roleplay.matching import (
    match_attributes,
    norm_attribute,
)
from metrics.suites.roleplay.verdicts import (
    ALMP_EXTRACT,
    ALMP_INFER,
    JERA,
    JERA_ROWS,
    JERA_SCALES,
)

OK, UNSCORED, ERROR = RowStatus.OK, RowStatus.UNSCORED, RowStatus.ERROR


def _failure(
    labelled: list[tuple[str, Outcome]],
) -> tuple[str, Note | None, str | None, str]:
    """Status, note, raw text and mode of judge calls none of which scored."""
    mode, first = next((m, o) for m, o in labelled if o.status != OK)
    unscored = any(o.status == UNSCORED for _, o in labelled)
    return UNSCORED if unscored else ERROR, first.note, first.raw, mode


def jera_rows(key: RowKey, outcomes: list[Outcome]) -> list[ResultRow]:
    """The four JERA rows of one (session, method) from its judge samples.

    >>> from types import SimpleNamespace as Outcome
    >>> parts = dict.fromkeys(JERA_SCALES, 70.0)
    >>> ok = Outcome(status="ok", verdict={"score": 210.0, "parts": parts})
    >>> [row["value"] for row in jera_rows({"session_id": "s"}, [ok])]
    [210.0, 70.0, 70.0, 70.0]
    """
    scored = [verdict_of(o) for o in outcomes if o.status == OK]
    detail: dict[str, Any] = {  # JSON-ready
        "prompt_version": JERA.prompt,
        "samples": [o.verdict["score"] if o.verdict else None for o in outcomes],
    }
    if not scored:
        status, reason, raw, mode = _failure([("jera", o) for o in outcomes])
        detail.update(raw=raw, failed_mode=mode)
        return [result_row(key, m, None, status, reason, detail) for m in JERA_ROWS]
    totals = [verdict["score"] for verdict in scored]
    detail.update(reasoning=scored[0].get("reasoning"), spread=pstdev(totals))
    rows = [result_row(key, "jera", fmean(totals), detail=detail)]
    for scale in JERA_SCALES:
        value = fmean(verdict["parts"][scale] for verdict in scored)
        rows.append(result_row(key, f"jera_{scale}", value))
    return rows


def _union(*lists: list[str]) -> list[str]:
    seen: dict[str, str] = {}
    for attribute in (a for items in lists for a in items):
        seen.setdefault(norm_attribute(attribute), attribute)
    return list(seen.values())


def almp_row(
    key: RowKey,
    attributes: list[str],
    extracted: list[Outcome],
    inferred: list[Outcome],
) -> ResultRow:
    """Per sample with both calls scored: R = union, ALMP; the row is the mean."""
    results = []
    for ext, inf in zip(extracted, inferred, strict=True):
        if ext.status == inf.status == OK:
            found = (
                verdict_of(ext).get("items", []),
                verdict_of(inf).get("items", []),
            )
            result = match_attributes(attributes, _union(*found))
            results.append({**result, "extracted": found[0], "inferred": found[1]})
    versions = [ALMP_EXTRACT.prompt, ALMP_INFER.prompt]
    if not results:
        labelled = [("almp_extract", o) for o in extracted]
        failure = _failure(labelled + [("almp_infer", o) for o in inferred])
        status, reason, raw, mode = failure
        detail: dict[str, Any] = {
            "prompt_versions": versions,
            "raw": raw,
            "failed_mode": mode,
        }
        return result_row(key, "almp", None, status, reason, detail)
    available, problem = lexicon.wordnet_status()
    detail = {**results[0], "wordnet": available, "prompt_versions": versions}
    detail["samples"] = [result["value"] for result in results]
    if not available:
        detail["wordnet_problem"] = problem
    unavailable = None if available else note("no_wordnet")
    return result_row(
        key, "almp", fmean(detail["samples"]), note=unavailable, detail=detail
    )


def scene_rows(
    key: RowKey,
    attributes: list[str],
    samples: int,
    truncated: int,
    outcomes: list[Outcome],
) -> list[ResultRow]:
    """Rows of one (session, method) from its outcomes, in mode order."""
    got = {
        "jera": outcomes[:samples],
        "almp_extract": outcomes[samples : 2 * samples],
        "almp_infer": outcomes[2 * samples :],
    }
    rows = jera_rows(key, got["jera"])
    if attributes:
        rows.append(almp_row(key, attributes, got["almp_extract"], got["almp_infer"]))
    if truncated:
        for row in rows:
            detail = row.get("detail")
            if detail is not None:
                detail["history_truncated"] = truncated
    return rows
