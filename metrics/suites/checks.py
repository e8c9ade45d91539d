"""Protocol checks (needs a judge): the yes/no or scored checks a judge
protocol declares beside the suites' own modes, asked once per (session,
round, method), and the protocol's derived labels, each a rule over the
checks' verdicts (``docs/protocols.md`` "Checks and derived labels";
``protocols/prefeval.toml`` is the shipped example).

A check's prompt has the fields of a criterion mode (``prompt_fields``: the
file's earlier turns, ``meta.history``, before the method's rounds; the
session's ``meta.reference``, for PrefEval the preference the reply is
checked against; a check showing ``$reference`` is not applicable to a
session without one).

Rows: ``check@<mode>`` (1 yes / 0 no, or the score) and ``label@<name>``
(1 when the label is one of the rule's successes, else 0; the label itself
in ``detail.label``). A label is unscored, with the checks it waited for,
when a check it needs has no verdict; a check it does not need (PrefEval's
hallucination check when nothing was acknowledged) may be missing.

Summary, per method: each check's rate and the first label's success rate
with a Wilson interval, overall and by the number of filler turns before
the judged round (``meta.inter_turns.count``, recorded by the PrefEval
importer) as a curve, with each label's share at every point.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from functools import partial
from statistics import fmean
from typing import Any, cast

from core.i18n import LazyText
from core.status import RowStatus
from metrics import protocols
from metrics.dialogue import history, user_message
from metrics.judging import (
    Batch,
    Judge,
    Outcome,
    judge_items,
    prompt_sizes,
    verdict_of,
)
from metrics.notes import note
from metrics.prompt_fields import prompt_fields
from metrics.rows import ResultRow, RowKey, result_row
from metrics.suite import (
    Chart,
    Column,
    Format,
    JudgeMode,
    JudgeUse,
    LazyModes,
    Level,
    Metric,
    Panel,
    Suite,
    SuiteSummary,
    SummaryRows,
    Table,
    _l,
)

Z95 = 1.959963984540054  # scipy.special.ndtri(0.975)
ItemKey = tuple[str, str, str, int | None]  # (metric, method, session, round)
XKey = tuple[str, str, int | None]  # (label metric, method, inter-turns x)


def checks_of(options: dict[str, Any]) -> dict[str, JudgeMode]:
    return protocols.from_options(options).checks


def _keys(
    sessions: list[dict[str, Any]], methods: list[str]
) -> Iterator[tuple[dict[str, Any], int, RowKey]]:
    for session in sessions:
        for index, round_ in enumerate(session["rounds"]):
            for method in methods:
                key: RowKey = {
                    "session_id": session["session_id"],
                    "round": round_["round"],
                    "method": method,
                }
                yield session, index, key


def needs_reference(mode: JudgeMode) -> bool:
    """Whether a check's prompt shows ``$reference`` (the session's
    ``meta.reference``: PrefEval's preference), without which it cannot be
    asked."""
    prompt = mode.template
    names = {*prompt.system.get_identifiers(), *prompt.user.get_identifiers()}
    return "reference" in names


def inter_turns(session: dict[str, Any]) -> int | None:
    """The number of filler turns before the judged round, when recorded."""
    found = ((session.get("meta") or {}).get("inter_turns") or {}).get("count")
    if isinstance(found, bool) or not isinstance(found, int) or found < 0:
        return None
    return found


def run(
    sessions: list[dict[str, Any]],
    methods: list[str],
    judge: Judge | None,
    options: dict[str, Any],
) -> list[ResultRow]:
    protocol = protocols.from_options(options)
    checks = protocol.checks
    if not checks:
        name = protocol.name
        return [
            result_row(
                key,
                "check",
                None,
                note=note("protocol_lacks", protocol=name, part="checks"),
            )
            for _, _, key in _keys(sessions, methods)
        ]
    x = {s["session_id"]: inter_turns(s) for s in sessions}
    recorded = list(_recorded_rows(sessions, methods, checks, x))
    recorded += list(_label_rows(recorded, protocol, x, RECORDED))
    if judge is None:  # the recorded judges' verdicts still count: no call
        return recorded + [
            result_row(key, f"{kind}@{name}", None, note=note("no_judge"))
            for _, _, key in _keys(sessions, methods)
            for kind, names in (("check", checks), ("label", protocol.labels))
            for name in names
        ]
    samples = int(options.get("samples", 1))
    rows: list[ResultRow] = []
    batch = Batch(judge)
    for session, index, key in _keys(sessions, methods):
        fields = prompt_fields(
            session, key["method"], index, history(session, key["method"], index)
        )
        reference = (session.get("meta") or {}).get("reference")
        given = isinstance(reference, str) and reference.strip()
        for name, mode in checks.items():
            if needs_reference(mode) and not given:
                missing = note("missing_field", field="meta.reference")
                rows.append(result_row(key, f"check@{name}", None, note=missing))
                continue
            items = judge_items(mode, samples, **fields)
            rows += batch.add(items, partial(_check_rows, key, mode))
    rows += batch.flush()
    return rows + list(_label_rows(rows, protocol, x)) + recorded


def _check_rows(
    key: RowKey, mode: JudgeMode, outcomes: list[Outcome]
) -> list[ResultRow]:
    ok = [verdict_of(o) for o in outcomes if o.status == RowStatus.OK]
    metric = f"check@{mode.name}"
    detail: dict[str, Any] = {
        "prompt_version": mode.prompt,
        "samples": [o.verdict["score"] if o.verdict else None for o in outcomes],
        "reasoning": ok[0].get("reasoning") if ok else None,
    }
    reasked = sum(getattr(o, "reasked", 0) for o in outcomes)
    if reasked:
        detail["reasked"] = reasked
    if not ok:
        failed = outcomes[0]
        detail["raw"] = failed.raw
        unscored = any(o.status == RowStatus.UNSCORED for o in outcomes)
        status = RowStatus.UNSCORED if unscored else RowStatus.ERROR
        return [result_row(key, metric, None, status, failed.note, detail)]
    votes = [verdict["score"] for verdict in ok]
    if mode.verdict.kind != "binary":
        return [result_row(key, metric, fmean(votes), detail=detail)]
    ones, zeros = votes.count(1.0), votes.count(0.0)
    if ones == zeros:
        return [result_row(key, metric, None, note=note("samples_tied"), detail=detail)]
    return [result_row(key, metric, 1.0 if ones > zeros else 0.0, detail=detail)]


RECORDED = "recorded_"  # rows of a recorded judge: recorded_check@<judge>@<check>


def _recorded_rows(
    sessions: list[dict[str, Any]],
    methods: list[str],
    checks: dict[str, Any],
    x: dict[str, Any],
) -> Iterator[ResultRow]:
    """The verdicts judges made elsewhere on the protocol's checks, carried
    by the file (a reply's ``judges.<judge>.<check>``, ``{"value": 0 or 1,
    "scale": [0, 1]}``: PrefEval's own judge, from a run file's
    ``evaluation_error_analysis``): rows ``recorded_check@<judge>@<check>``,
    no call, never a human label."""
    for session, index, key in _keys(sessions, methods):
        response = session["rounds"][index]["responses"][key["method"]]
        judges = response.get("judges") if isinstance(response, dict) else None
        judges = judges if isinstance(judges, dict) else {}
        for judge in sorted(judges):
            for check in checks:
                found = (judges[judge] or {}).get(check)
                if not isinstance(found, dict) or found.get("scale") != [0, 1]:
                    continue
                if found.get("value") not in (0, 1):
                    continue
                detail = {
                    "judge": judge,
                    "recorded": True,
                    "inter_turns": x.get(session["session_id"]),
                }
                metric = f"{RECORDED}check@{judge}@{check}"
                yield result_row(key, metric, float(found["value"]), detail=detail)


def _label_rows(
    rows: list[ResultRow],
    protocol: protocols.Protocol,
    x: dict[str, Any],
    prefix: str = "",
) -> Iterator[ResultRow]:
    """Each derived label of each item from its checks' rows (one judge's
    rows: a panel's judges run the suite each); with ``prefix``
    ``recorded_``, each recorded judge's labels from its verdicts
    (``recorded_label@<judge>@<label>``)."""
    # (judge, session, round, method) -> check -> verdict
    verdicts: dict[tuple[str, str, int | None, str], dict[str, float | None]] = {}
    head = f"{prefix}check@"
    for row in rows:
        metric = row["metric"]
        if not metric.startswith(head):
            continue
        judge, _, check = metric[len(head) :].rpartition("@")
        item = (judge, row["session_id"], row["round"], row["method"])
        verdicts.setdefault(item, {})[check] = row["value"]
    for (judge, session_id, round_, method), found in verdicts.items():
        key: RowKey = {"session_id": session_id, "round": round_, "method": method}
        who = f"{judge}@" if prefix else ""
        for name, label in protocol.labels.items():
            detail: dict[str, Any] = {"inter_turns": x.get(session_id)}
            if prefix:
                detail.update(judge=judge, recorded=True)
            chosen, waiting = label.decide(found)
            if chosen is None:
                why = note("label_undecided", checks=", ".join(waiting) or "-")
                for metric in (
                    f"{prefix}label@{who}{name}",
                    *(f"{prefix}label_is@{who}{name}:{kind}" for kind in label.labels),
                ):
                    yield result_row(key, metric, None, RowStatus.UNSCORED, why, detail)
                continue
            value = 1.0 if chosen in label.success else 0.0
            detail["label"] = chosen
            yield result_row(key, f"{prefix}label@{who}{name}", value, detail=detail)
            for kind in label.labels:  # one-hot: each label's share is a mean
                is_it = 1.0 if kind == chosen else 0.0
                metric = f"{prefix}label_is@{who}{name}:{kind}"
                yield result_row(key, metric, is_it, detail=detail)


# summary metric of each row kind (recorded_check: read by _agreement)
SUMMARY_OF = {
    "check": "check_rate",
    "label": "label_rate",
    "label_is": "label_share",
    "recorded_label": "recorded_label_rate",
    "recorded_label_is": "recorded_label_share",
}


def _points(
    curve: dict[str, Any],
    metric: str,
    by_x: dict[XKey, list[float]],
    kinds: dict[XKey, Counter[str | None]],
    unscored: Counter[XKey],
) -> None:
    """``metric``'s points by number of inter-turns, per method, into ``curve``."""
    for (m, method, x), values in sorted(
        by_x.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2] or 0)
    ):
        if m != metric or x is None or method not in curve:
            continue
        counted = kinds.get((metric, method, x), Counter[str | None]())
        total = sum(counted.values())
        curve[method].append(
            {
                "k": x,
                **_share(values),
                "labels": {
                    label: {"n": count, "share": count / total if total else None}
                    for label, count in sorted(counted.items())
                },
                "unscored": unscored[(metric, method, x)],
            }
        )


def _agreement(
    items: dict[ItemKey, list[float]], methods: list[str], summary: dict[str, Any]
) -> list[dict[str, Any]]:
    """The run's judge against each recorded judge, check by check, on the
    items both answered: per method ``check_agreement@<judge>@<check>`` (the
    share of equal verdicts) and ``check_kappa@<judge>@<check>`` (Cohen's κ;
    None when one side is constant); the table pools the methods."""
    from metrics.agreement import cohen_kappa

    pairs: dict[tuple[str, str, str], list[tuple[float, float]]] = {}
    for (metric, method, session, round_), values in items.items():
        if not metric.startswith("recorded_check@"):
            continue
        judge, _, check = metric.split("@", 1)[1].rpartition("@")
        own = items.get((f"check@{check}", method, session, round_))
        if own:
            pair = (fmean(own), fmean(values))
            pairs.setdefault((judge, check, method), []).append(pair)
    table: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for (judge, check, method), found in sorted(pairs.items()):
        ours, theirs = [a for a, _ in found], [b for _, b in found]
        same = sum(a == b for a, b in found) / len(found)
        summary[method][f"check_agreement@{judge}@{check}"] = same
        summary[method][f"check_kappa@{judge}@{check}"] = cohen_kappa(ours, theirs)
        table.setdefault((judge, check), []).extend(found)
    return [
        {
            "judge": judge,
            "check": check,
            "n": len(found),
            "agreement": sum(a == b for a, b in found) / len(found),
            "kappa": cohen_kappa([a for a, _ in found], [b for _, b in found]),
        }
        for (judge, check), found in table.items()
    ]


def wilson(successes: float, n: int) -> tuple[float | None, float | None]:
    """Wilson's 95% score interval of a share (scipy's ``binomtest(k,
    n).proportion_ci(method="wilson")``); none without items.

    >>> [round(v, 4) for v in wilson(1, 4)]
    [0.0456, 0.6994]
    >>> wilson(0, 6)[0], wilson(6, 6)[1]
    (0.0, 1.0)
    """
    if n == 0:
        return None, None
    p, z2 = successes / n, Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    # the bound at 0 of all failures (at 1 of all successes) is exact on
    # paper; the float sum leaves 3e-17
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high


def _share(values: list[float]) -> dict[str, Any]:
    """Mean with Wilson's interval (every value 0 or 1; never of width 0
    with an item) or Student's t (a panel's pooled fractions; null with
    ``ci_note`` ``ci_no_variation`` when every value is the same)."""
    from metrics.stats import mean_ci

    n = len(values)
    if n == 0:
        return {"mean": None, "n": 0, "ci_low": None, "ci_high": None}
    if all(v in (0.0, 1.0) for v in values):
        low, high = wilson(sum(values), n)
        return {"mean": fmean(values), "n": n, "ci_low": low, "ci_high": high}
    return mean_ci(values)


def summarize(rows: SummaryRows, methods: list[str]) -> SuiteSummary:
    """Per method: check rates, the first label's success rate overall and
    by inter-turns (curve), each label's share at each point."""
    items: dict[ItemKey, list[float]] = {}  # -> values
    kinds: dict[XKey, Counter[str | None]] = {}  # -> labels
    unscored: Counter[XKey] = Counter()
    xs: dict[tuple[str, int | None], int | None] = {}  # (session, round) -> x
    successes: set[str] = set()  # labels that count as a success
    for row in rows:
        metric, method = row["metric"], row["method"]
        if method not in methods or "@" not in metric:
            continue
        detail = row.get("detail") or {}
        if metric.startswith(("label_is@", "recorded_label_is@")):
            if row["value"] is not None:
                items.setdefault(
                    (metric, method, row["session_id"], row["round"]), []
                ).append(row["value"])
            continue
        if metric.startswith(("label@", "recorded_label@")):
            x = detail.get("inter_turns")
            xs[(row["session_id"], row["round"])] = x
            if row["value"] is None:
                if row["status"] == RowStatus.UNSCORED:
                    unscored[(metric, method, x)] += 1
                continue
            kinds.setdefault((metric, method, x), Counter())[detail.get("label")] += 1
            if row["value"] == 1.0:
                successes.add(str(detail.get("label")))
        if row["value"] is None:
            continue
        items.setdefault((metric, method, row["session_id"], row["round"]), []).append(
            row["value"]
        )
    pooled: dict[tuple[str, str], list[float]] = {}  # (metric, method) -> item means
    by_x: dict[XKey, list[float]] = {}  # (metric, method, x) -> item means
    for (metric, method, session, round_), values in items.items():
        value = fmean(values)
        pooled.setdefault((metric, method), []).append(value)
        if metric.startswith(("label@", "recorded_label@")):
            x = xs.get((session, round_))
            by_x.setdefault((metric, method, x), []).append(value)
    summary: dict[str, dict[str, Any]] = {method: {} for method in methods}
    for (metric, method), values in sorted(pooled.items()):
        base, name = metric.split("@", 1)
        found = _share(values)
        shown = SUMMARY_OF.get(base)
        if shown is not None:
            summary[method][f"{shown}@{name}"] = found["mean"]
    labels = sorted({m for m, _ in pooled if m.startswith("label@")})
    first = labels[0] if labels else None
    curves: dict[str, dict[str, list[dict[str, Any]]]] = {}
    shares: dict[str, dict[str, list[dict[str, Any]]]] = {}
    notes: dict[str, dict[str, Any]] = {}
    for metric in labels:
        name = metric.split("@", 1)[1]
        curve = curves.setdefault(f"label_rate@{name}", {m: [] for m in methods})
        for (m, method), values in pooled.items():
            if m == metric and m == first:
                found = _share(values)
                summary[method]["label_rate"] = found["mean"]
                summary[method]["label_rate_ci_low"] = found["ci_low"]
                summary[method]["label_rate_ci_high"] = found["ci_high"]
                if found.get("ci_note"):  # a t interval of width 0: said why
                    said = {"code": found["ci_note"]}
                    notes.setdefault(method, {}).update(
                        label_rate_ci_low=said, label_rate_ci_high=dict(said)
                    )
        _points(curve, metric, by_x, kinds, unscored)
    if first is not None:  # the error types: each label not a success, at
        # every x of the method (0 where it did not occur)
        for method in methods:
            points = curves[f"label_rate@{first.split('@', 1)[1]}"][method]
            seen = sorted({label for p in points for label in p["labels"]} - successes)
            for label in seen:
                shares[f"{method} · {label}"] = {
                    "points": [
                        {
                            "k": p["k"],
                            "mean": (p["labels"].get(label) or {}).get("share") or 0.0,
                            "n": p["n"],
                            "label": label,
                        }
                        for p in points
                        if p["n"]
                    ]
                }
    if first is not None:
        curves["label_rate"] = curves[f"label_rate@{first.split('@', 1)[1]}"]
    recorded_labels = sorted({m for m, _ in pooled if m.startswith("recorded_label@")})
    for metric in recorded_labels:  # each recorded judge's, as the run's own
        name = metric.split("@", 1)[1]
        curve = curves.setdefault(
            f"recorded_label_rate@{name}", {m: [] for m in methods}
        )
        _points(curve, metric, by_x, kinds, unscored)
    agreement = _agreement(items, methods, summary)
    table = [
        {
            "method": method,
            "k": point["k"],
            "rate": point["mean"],
            "low": point["ci_low"],
            "high": point["ci_high"],
            "n": point["n"],
            "unscored": point["unscored"],
            "labels": ", ".join(
                f"{label} {found['n']}" for label, found in point["labels"].items()
            ),
        }
        for method in methods
        for point in (curves.get("label_rate") or {}).get(method, [])
    ]
    for metric in recorded_labels:  # the first label as each recorded judge gave it
        judge, _, name = metric.split("@", 1)[1].rpartition("@")
        if first is None or name != first.split("@", 1)[1]:
            continue
        table += [
            {
                "method": method,
                "judge": judge,
                "k": point["k"],
                "rate": point["mean"],
                "low": point["ci_low"],
                "high": point["ci_high"],
                "n": point["n"],
                "unscored": point["unscored"],
                "labels": ", ".join(
                    f"{label} {found['n']}" for label, found in point["labels"].items()
                ),
            }
            for method in methods
            for point in curves[f"recorded_label_rate@{judge}@{name}"].get(method, [])
        ]
    # the first label's success per session (its rounds' mean): the paired
    # comparisons of methods (Δ of label_rate, its interval and test)
    per_session: dict[str, dict[str, list[float]]] = {}
    for (metric, method, session, _round), values in items.items():
        if metric == first:
            per_session.setdefault(method, {}).setdefault(session, []).append(
                fmean(values)
            )
    session_values = {
        "label": {
            method: {sid: fmean(v) for sid, v in found.items()}
            for method, found in per_session.items()
        }
    }
    return {
        "summary": summary,
        "session_values": session_values if first is not None else {},
        "curves": curves,
        "panel": {
            "label_shares": {name: s["points"] for name, s in shares.items()},
            "label_share_names": list(shares),
            "by_inter_turns": table,
            "recorded_agreement": agreement,
            "labels": [m.split("@", 1)[1] for m in labels],
            "notes": notes,
        },
    }


def estimate(
    session: dict[str, Any],
    methods: list[str],
    window: int | None,
    options: dict[str, Any],
) -> tuple[int, int]:
    """One request per check of the run's protocol per (round, method)."""
    checks = checks_of(options).values()
    if not checks:
        return 0, 0
    fixed, uses = prompt_sizes(checks)
    calls = chars = 0
    reference = (session.get("meta") or {}).get("reference")
    extra = uses["reference"] * len(reference if isinstance(reference, str) else "")
    for round_ in session["rounds"]:
        for method in methods:
            response = round_["responses"][method]
            calls += len(checks)
            chars += fixed + extra
            chars += uses["profile"] * len(session["user_profile"])
            chars += uses["user_message"] * len(user_message(round_, response))
            chars += uses["response"] * len(response["text"])
    return calls, chars


UNIT = (0.0, 1.0)
METRICS = (
    Metric(
        "check",
        _l("Protocol check"),
        "row",
        True,
        None,
        keyed=True,
        ranked=False,
        needs_judge=True,
        agreement="nominal",
        description=_l(
            "One check of the judge protocol (check@<name>): 1 yes, 0 no, or the check's score."
        ),
    ),
    Metric(
        "label",
        _l("Derived label"),
        "row",
        True,
        UNIT,
        Format.RATE,
        keyed=True,
        needs_judge=True,
        agreement="nominal",
        description=_l(
            "The protocol's label from its checks' verdicts (label@<name>): 1 when it is a success, else 0; the label in the row's detail."
        ),
    ),
    Metric(
        "label_is",
        _l("Is this label"),
        "row",
        True,
        UNIT,
        Format.RATE,
        keyed=True,
        ranked=False,
        needs_judge=True,
        agreement="nominal",
        description=_l(
            "1 when the derived label is this one, else 0 (label_is@<name>:<label>): each label's share is their mean."
        ),
    ),
    Metric(
        "label_share",
        _l("Share of a label"),
        "summary",
        False,
        UNIT,
        Format.RATE,
        keyed=True,
        ranked=False,
        in_table=False,
        needs_judge=True,
        source="label_is",
        description=_l(
            "Share of scored replies given this label (label_share@<name>:<label>; PrefEval's error types)."
        ),
    ),
    Metric(
        "label_rate",
        _l("Success rate (derived label)"),
        "summary",
        True,
        UNIT,
        Format.RATE,
        needs_judge=True,
        keyed=True,  # label_rate@<name> for each derived label
        compare="label",  # methods compared session by session
        description=_l(
            "Share of replies whose derived label is a success (PrefEval: correct = helpful and no violation)."
        ),
        basis=_l("share of scored replies, with a Wilson interval"),
    ),
    *(
        Metric(
            f"label_rate_ci_{end}",
            _l("Success rate (derived label)"),
            "summary",
            True,
            UNIT,
            Format.RATE,
            needs_judge=True,
            in_table=False,
            ranked=False,
            source="label",
        )
        for end in ("low", "high")
    ),
    Metric(
        "check_rate",
        _l("Share of yes (check)"),
        "summary",
        True,
        UNIT,
        Format.RATE,
        keyed=True,
        ranked=False,
        in_table=False,
        needs_judge=True,
        source="check",
        description=_l("Share of replies a check answered yes (check_rate@<name>)."),
    ),
)


def _extra(
    metric_id: str,
    label: LazyText,
    level: str,
    bounds: tuple[float, float],
    fmt: Format,
    description: LazyText,
) -> Metric:
    """A recorded judge's rows and summaries, and the agreement with one."""
    return Metric(
        metric_id,
        label,
        cast(Level, level),
        True,
        bounds,
        fmt,
        description,
        keyed=True,
        ranked=False,
        in_table=False,
        needs_judge=metric_id.startswith("check_"),
        source=SOURCES.get(metric_id),
    )


# the rows a summary value rests on (its <id>_n counts their sessions)
SOURCES = {
    "recorded_label_rate": "recorded_label",
    "recorded_label_share": "recorded_label_is",
    "check_agreement": "recorded_check",
    "check_kappa": "recorded_check",
}


METRICS += tuple(
    _extra(metric_id, label, level, bounds, fmt, description)
    for metric_id, label, level, bounds, fmt, description in (
        (
            "recorded_check",
            _l("Recorded judge's check"),
            "row",
            UNIT,
            Format.RATE,
            _l(
                "A check's verdict a judge made elsewhere, carried by the file (recorded_check@<judge>@<check>): 1 yes, 0 no; never a human label."
            ),
        ),
        (
            "recorded_label",
            _l("Recorded judge's derived label"),
            "row",
            UNIT,
            Format.RATE,
            _l(
                "The protocol's label from a recorded judge's verdicts (recorded_label@<judge>@<name>): 1 success, 0 not."
            ),
        ),
        (
            "recorded_label_is",
            _l("Recorded judge's label is this one"),
            "row",
            UNIT,
            Format.RATE,
            _l(
                "1 when a recorded judge's label is this one, else 0 (recorded_label_is@<judge>@<name>:<label>)."
            ),
        ),
        (
            "recorded_label_rate",
            _l("Success rate (recorded judge)"),
            "summary",
            UNIT,
            Format.RATE,
            _l(
                "Share of replies whose label from a recorded judge's verdicts is a success (recorded_label_rate@<judge>@<name>)."
            ),
        ),
        (
            "recorded_label_share",
            _l("Share of a label (recorded judge)"),
            "summary",
            UNIT,
            Format.RATE,
            _l(
                "Share of replies a recorded judge's verdicts give this label (recorded_label_share@<judge>@<name>:<label>)."
            ),
        ),
        (
            "check_agreement",
            _l("Same verdict as a recorded judge"),
            "summary",
            UNIT,
            Format.RATE,
            _l(
                "Share of replies on which this run's judge and a recorded judge gave the same verdict on a check (check_agreement@<judge>@<check>)."
            ),
        ),
        (
            "check_kappa",
            _l("Cohen's κ with a recorded judge"),
            "summary",
            (-1.0, 1.0),
            Format.SCORE,
            _l(
                "Cohen's kappa between this run's judge and a recorded judge on a check (check_kappa@<judge>@<check>); none when one side is constant."
            ),
        ),
    )
)

SUITE = Suite(
    name="checks",
    label=_l("Protocol checks and derived labels"),
    description=_l(
        "The yes/no checks a judge protocol declares (PrefEval's four) and the label its rule derives from them, by number of filler turns."
    ),
    metrics=METRICS,
    run=run,
    summarize=summarize,
    judge=JudgeUse.REQUIRED,
    # the shipped example's checks; a run asks those of its own protocol
    # (``checks_of``), whose prompt versions its header records
    # read on first use: reading a protocol runs the checker, which reads the registry
    modes=LazyModes(lambda: protocols.builtin("prefeval").checks.values()),
    estimate=estimate,
    summary_details=True,  # the label and the inter-turns count are in details
    order=18,
    lead="label_rate",
    by_default=False,  # asked with a protocol that declares checks
    methods_note=(
        "The judge protocol's checks were each asked once per reply; a derived "
        "label was assigned by the protocol's rule (the first rule that holds) "
        "and left unscored when it depended on a check without a verdict. "
        "Success rates carry Wilson 95% intervals."
    ),
    panel=Panel(
        charts=(
            Chart(
                "label_curve",
                "curve",
                _l("Success rate by number of inter-turns (95% Wilson interval)"),
                "curves.label_rate",
                x_title=_l("Filler turns between the preference and the question"),
                x_at_points=True,
                y_metric="label_rate",
                y_range=(0, 1),
                empty=_l(
                    "No curve: the sessions record no number of filler turns (meta.inter_turns)."
                ),
            ),
            Chart(
                "label_shares",
                "curve",
                _l("Error types by number of inter-turns"),
                "panel.label_shares",
                x_title=_l("Filler turns between the preference and the question"),
                x_at_points=True,
                y_title=_l("Share of scored replies"),
                y_range=(0, 1),
                columns="panel.label_share_names",
            ),
        ),
        tables=(
            Table(
                "by_inter_turns",
                _l("Success rate by number of inter-turns"),
                (
                    Column("method", _l("Method")),
                    Column("judge", _l("Recorded judge")),
                    Column("k", _l("Inter-turns"), "count"),
                    Column("rate", _l("Success rate"), "score"),
                    Column("low", _l("95% CI low"), "score"),
                    Column("high", _l("95% CI high"), "score"),
                    Column("n", _l("n"), "count"),
                    Column("unscored", _l("Unscored"), "count"),
                    Column("labels", _l("Labels")),
                ),
                lambda panel, methods: list(panel.get("by_inter_turns") or []),
            ),
            Table(
                "recorded_agreement",
                _l("This run's judge against the recorded judges, check by check"),
                (
                    Column("judge", _l("Recorded judge")),
                    Column("check", _l("Check")),
                    Column("n", _l("n"), "count"),
                    Column("agreement", _l("Same verdict"), "score"),
                    Column("kappa", _l("Cohen's κ"), "score"),
                ),
                lambda panel, methods: list(panel.get("recorded_agreement") or []),
            ),
        ),
        empty=_l(
            "No checks to show: this suite needs a configured judge and a protocol that declares checks (e.g. prefeval)."
        ),
    ),
)
