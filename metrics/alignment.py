"""Alignment suite: judge requests per (session, round, method), rows from
verdicts, and the AL(k) statistics.

The summary is computed over AL(k), the per-round mean across sessions, and
the regression is fitted on (k, AL(k)) — not on the flattened list of all
scores, which is what the public seed got wrong:

>>> rows = [
...     {"session_id": s, "round": k, "method": "M", "metric": "al",
...      "value": v, "status": "ok"}
...     for s, start in (("a", 50), ("b", 30))
...     for k, v in zip(range(1, 6), range(start, start + 50, 10))
... ]
>>> summary = summarize(rows, ["M"])["summary"]["M"]
>>> summary["al_slope"], summary["al_intercept"], summary["al_r2"], summary["al_avg"]
(10.0, 30.0, 1.0, 60.0)
"""

from __future__ import annotations

from collections import defaultdict
from statistics import fmean, pstdev

from metrics import stats
from verdicts import DIMENSIONS, JudgeItem, load_prompt

PROMPTS = {"alignment": "alignment_v1", "binary": "binary_v1"}
ROW_METRICS = ("al", *(f"al_{d}" for d in DIMENSIONS), "binary")


def user_message(round_: dict, response: dict) -> str:
    """On-policy logs may override the user message per method."""
    return response.get("user_message") or round_["user_message"]


def history(session: dict, method: str, upto: int) -> str:
    """That method's dialogue before round index ``upto``."""
    turns = []
    for round_ in session["rounds"][:upto]:
        response = round_["responses"][method]
        turns.append(
            f"User: {user_message(round_, response)}\nAssistant: {response['text']}"
        )
    return "\n\n".join(turns) or "(this is the first message)"


def judge_items(session: dict, method: str, index: int, samples: int) -> dict:
    """``{mode: [JudgeItem per sample]}`` for one (session, round, method)."""
    round_ = session["rounds"][index]
    response = round_["responses"][method]
    fields = {
        "profile": session["user_profile"],
        "personality": session["user_personality"],
        "history": history(session, method, index),
        "user_message": user_message(round_, response),
        "response": response["text"],
    }
    items = {}
    for mode, version in PROMPTS.items():
        messages = tuple(load_prompt(version).render(**fields))
        items[mode] = [
            JudgeItem(mode, version, messages, sample) for sample in range(samples)
        ]
    return items


def rows_from_outcomes(key: dict, mode: str, outcomes: list) -> list[dict]:
    """Rows for one (session, round, method) and mode from its samples."""
    scored = [o for o in outcomes if o.status == "ok"]
    detail = {
        "prompt_version": PROMPTS[mode],
        "samples": [o.verdict["score"] if o.verdict else None for o in outcomes],
        "reasoning": scored[0].verdict.get("reasoning") if scored else None,
        "flags": sorted({f for o in scored for f in o.verdict.get("flags", [])}),
    }
    if not scored:
        failed = outcomes[0]
        detail["raw"] = failed.raw
        status = (
            "unscored" if any(o.status == "unscored" for o in outcomes) else "error"
        )
        metrics = (
            ("al", *(f"al_{d}" for d in DIMENSIONS))
            if mode == "alignment"
            else ("binary",)
        )
        return [
            {
                **key,
                "metric": m,
                "value": None,
                "status": status,
                "note": failed.note,
                "detail": detail,
            }
            for m in metrics
        ]
    if mode == "binary":
        return [_binary_row(key, scored, detail)]
    return _alignment_rows(key, scored, detail)


def _binary_row(key: dict, scored: list, detail: dict) -> dict:
    votes = [o.verdict["score"] for o in scored]
    ones, zeros = votes.count(1.0), votes.count(0.0)
    if ones == zeros:
        note = "samples tied; use an odd number of samples"
        return {
            **key,
            "metric": "binary",
            "value": None,
            "status": "unscored",
            "note": note,
            "detail": detail,
        }
    value = 1.0 if ones > zeros else 0.0
    return {
        **key,
        "metric": "binary",
        "value": value,
        "status": "ok",
        "note": None,
        "detail": detail,
    }


def _alignment_rows(key: dict, scored: list, detail: dict) -> list[dict]:
    totals = [o.verdict["score"] for o in scored]
    detail = {**detail, "spread": pstdev(totals) if len(totals) > 1 else 0.0}
    note = "sum_mismatch" if "sum_mismatch" in detail["flags"] else None
    rows = [
        {
            **key,
            "metric": "al",
            "value": fmean(totals),
            "status": "ok",
            "note": note,
            "detail": detail,
        }
    ]
    for dimension in DIMENSIONS:
        values = [
            o.verdict["parts"][dimension]
            for o in scored
            if dimension in o.verdict["parts"]
        ]
        row = {**key, "metric": f"al_{dimension}", "detail": None}
        if values:
            rows.append({**row, "value": fmean(values), "status": "ok", "note": None})
        else:
            rows.append(
                {
                    **row,
                    "value": None,
                    "status": "unscored",
                    "note": "dimension missing from the reply",
                }
            )
    return rows


def not_configured_rows(key: dict) -> list[dict]:
    note = "no judge configured"
    return [
        {**key, "metric": m, "value": None, "status": "not_configured", "note": note}
        for m in ("al", "binary")
    ]


# -- summary ---------------------------------------------------------------
def _scored(rows, metric: str) -> dict[str, list[dict]]:
    by_method = defaultdict(list)
    for row in rows:
        if (
            row["metric"] == metric
            and row["status"] == "ok"
            and row["value"] is not None
        ):
            by_method[row["method"]].append(row)
    return by_method


def curve(rows: list[dict]) -> list[dict]:
    """AL(k): mean of scored values over sessions at each round k, with CI."""
    by_round = defaultdict(list)
    for row in rows:
        by_round[row["round"]].append(row["value"])
    return [{"k": k, **stats.mean_ci(by_round[k])} for k in sorted(by_round)]


def normalized(points: list[dict]) -> list[dict] | None:
    """N-AL(k) = (AL(k) − min) / (max − min); undefined when max = min."""
    means = [p["mean"] for p in points]
    if not means or max(means) == min(means):
        return None
    low, span = min(means), max(means) - min(means)
    return [
        {
            "k": p["k"],
            "mean": (p["mean"] - low) / span,
            "n": p["n"],
            "ci_low": None,
            "ci_high": None,
        }
        for p in points
    ]


def _curve_summary(points: list[dict], prefix: str) -> dict:
    ks = [p["k"] for p in points]
    means = [p["mean"] for p in points]
    slope, intercept, r2 = stats.ols(ks, means)
    return {
        f"{prefix}_avg": fmean(means) if means else None,
        f"{prefix}_slope": slope,
        f"{prefix}_intercept": intercept,
        f"{prefix}_r2": r2,
    }


def _session_slopes(rows: list[dict]) -> list[float]:
    by_session = defaultdict(list)
    for row in rows:
        by_session[row["session_id"]].append((row["round"], row["value"]))
    slopes = [
        stats.ols(*zip(*points, strict=True))[0]
        for points in by_session.values()
        if len(points) >= 2
    ]
    return [s for s in slopes if s is not None]


def summarize(rows: list[dict], methods: list[str]) -> dict:
    """Summary metrics, curves and per-session values for comparisons."""
    al_rows, binary_rows = _scored(rows, "al"), _scored(rows, "binary")
    summary, curves = {}, {"al": {}, "nal": {}}
    for method in methods:
        points = curve(al_rows.get(method, []))
        curves["al"][method] = points
        curves["nal"][method] = normalized(points) or []
        slopes = stats.mean_ci(_session_slopes(al_rows.get(method, [])))
        votes = [r["value"] for r in binary_rows.get(method, [])]
        summary[method] = {
            **_curve_summary(points, "al"),
            "binary_rate": sum(votes) / len(votes) if votes else None,
            "al_session_slope": slopes["mean"],
            "al_session_slope_ci_low": slopes["ci_low"],
            "al_session_slope_ci_high": slopes["ci_high"],
        }
        for dimension in DIMENSIONS:
            dim_points = curve(_scored(rows, f"al_{dimension}").get(method, []))
            summary[method][f"al_{dimension}_avg"] = (
                fmean(p["mean"] for p in dim_points) if dim_points else None
            )
    return {
        "summary": summary,
        "curves": curves,
        "session_values": session_values(rows, methods),
    }


def session_values(rows: list[dict], methods: list[str]) -> dict:
    """Per-session means of ``al`` and ``binary``, the unit of comparison."""
    values = {}
    for metric in ("al", "binary"):
        per = defaultdict(lambda: defaultdict(list))
        for method, method_rows in _scored(rows, metric).items():
            for row in method_rows:
                per[method][row["session_id"]].append(row["value"])
        values[metric] = {
            m: {s: fmean(v) for s, v in per[m].items()} for m in methods if m in per
        }
    return values
