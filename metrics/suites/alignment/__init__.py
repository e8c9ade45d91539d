"""Alignment suite (needs a judge): rows per (session, round, method) from
the judge's verdicts (``docs/metrics/alignment.md``); the AL(k) statistics
are in :mod:`metrics.suites.alignment.summary`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from functools import partial
from statistics import fmean, pstdev
from typing import Any

from core.i18n import LazyText
from core.status import RowStatus
from metrics import protocols
from metrics.dialogue import History, history, user_message
from metrics.judging import (
    Batch,
    Judge,
    JudgeItem,
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
    Format,
    JudgeMode,
    JudgeUse,
    LazyModes,
    Level,
    Metric,
    Panel,
    ProtocolMode,
    Suite,
    _l,
)
from metrics.suites.alignment import criteria, judge_checks
from metrics.suites.alignment.summary import (
    DIMENSIONS,
    MIN_ROUND_SESSIONS,
    summarize,
)

# What the suite fills in for its modes' templates (``request_items``)
FIELDS = frozenset({"profile", "personality", "history", "user_message", "response"})
# The protocol modes it asks by name: the checker reads their kinds and
# fields from the registry (metrics/protocol_checks.py)
PROTOCOL_MODES = (
    ProtocolMode("alignment", "score", FIELDS),
    ProtocolMode("binary", "binary", FIELDS),
)


def _default_modes() -> tuple[JudgeMode, JudgeMode]:
    """The modes of the default protocol (protocols/personasteer.toml); a
    run with another protocol takes its modes from it (``modes_of``)."""
    found = protocols.builtin(protocols.DEFAULT).modes
    return found["alignment"], found["binary"]


# read on first use: reading a protocol runs the checker, which reads the
# registry of suites (this one among them)
MODES = LazyModes(_default_modes)
_LAZY: dict[str, Callable[[], object]] = {
    "ALIGNMENT": lambda: MODES[0],
    "BINARY": lambda: MODES[1],
    "parse_alignment": lambda: MODES[0].parse,
    "parse_binary": lambda: MODES[1].parse,
}


def __getattr__(name: str) -> Any:
    """``ALIGNMENT``, ``BINARY`` and their parsers, read on first use."""
    if name in _LAZY:
        return _LAZY[name]()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def modes_of(options: dict[str, Any]) -> dict[str, JudgeMode]:
    """``{name: mode}`` of the run's protocol that this suite asks."""
    found = protocols.from_options(options).modes
    return {name: found[name] for name in ("alignment", "binary") if name in found}


def request_items(
    session: dict[str, Any],
    method: str,
    index: int,
    samples: int,
    history_text: str | None = None,
    modes: Sequence[JudgeMode] = MODES,
) -> dict[JudgeMode, list[JudgeItem]]:
    """``{mode: [JudgeItem per sample]}`` for one (session, round, method);
    ``history_text`` is the method's dialogue so far (whole when not given)."""
    round_ = session["rounds"][index]
    response = round_["responses"][method]
    fields = {
        "profile": session["user_profile"],
        "personality": session["user_personality"],
        "history": history(session, method, index)
        if history_text is None
        else history_text,
        "user_message": user_message(round_, response),
        "response": response["text"],
    }
    return {mode: judge_items(mode, samples, **fields) for mode in modes}


def rows_from_outcomes(
    key: RowKey, mode: JudgeMode, outcomes: list[Outcome], truncated: int = 0
) -> list[ResultRow]:
    """Rows for one (session, round, method) and mode from its samples;
    ``truncated``: turns of history left out of the prompt."""
    ok = [verdict_of(o) for o in outcomes if o.status == RowStatus.OK]
    detail: dict[str, Any] = {
        "prompt_version": mode.prompt,
        "samples": [o.verdict["score"] if o.verdict else None for o in outcomes],
        "reasoning": ok[0].get("reasoning") if ok else None,
        "flags": sorted({f for verdict in ok for f in verdict.get("flags", [])}),
    }
    if truncated:
        detail["history_truncated"] = truncated
    reasked = sum(getattr(o, "reasked", 0) for o in outcomes)
    if reasked:  # asked again, quoting the format (or for more tokens)
        detail["reasked"] = reasked
    if not ok:
        failed = outcomes[0]
        detail["raw"] = failed.raw
        unscored = any(o.status == RowStatus.UNSCORED for o in outcomes)
        status = RowStatus.UNSCORED if unscored else RowStatus.ERROR
        metrics = ("al", *(f"al_{d}" for d in mode.dimensions))
        metrics = metrics if mode.name == "alignment" else ("binary",)
        return [result_row(key, m, None, status, failed.note, detail) for m in metrics]
    if mode.name == "binary":
        return [_binary_row(key, ok, detail)]
    return _alignment_rows(key, ok, detail, mode.dimensions)


def _binary_row(
    key: RowKey, ok: list[dict[str, Any]], detail: dict[str, Any]
) -> ResultRow:
    """``ok``: the verdicts of the samples that scored."""
    votes = [verdict["score"] for verdict in ok]
    ones, zeros = votes.count(1.0), votes.count(0.0)
    if ones == zeros:
        return result_row(key, "binary", None, note=note("samples_tied"), detail=detail)
    return result_row(key, "binary", 1.0 if ones > zeros else 0.0, detail=detail)


def _alignment_rows(
    key: RowKey,
    ok: list[dict[str, Any]],
    detail: dict[str, Any],
    dimensions: tuple[str, ...] = DIMENSIONS,
) -> list[ResultRow]:
    totals = [verdict["score"] for verdict in ok]
    detail = {**detail, "spread": pstdev(totals) if len(totals) > 1 else 0.0}
    flag = note("sum_mismatch") if "sum_mismatch" in detail["flags"] else None
    rows = [result_row(key, "al", fmean(totals), note=flag, detail=detail)]
    if len(detail["samples"]) > 1:  # each sample's score: samples_alpha reads them
        rows += [
            result_row(key, f"al_sample@{index + 1}", score)
            for index, score in enumerate(detail["samples"])
            if score is not None
        ]
    for dimension in dimensions:
        values = [
            verdict["parts"][dimension]
            for verdict in ok
            if dimension in verdict["parts"]
        ]
        value = fmean(values) if values else None
        missing = None if values else note("dimension_missing")
        rows.append(result_row(key, f"al_{dimension}", value, note=missing))
    return rows


def run(
    sessions: list[dict[str, Any]],
    methods: list[str],
    judge: Judge | None,
    options: dict[str, Any],
) -> list[ResultRow]:
    """Each method's history is built turn by turn within the
    ``history_chars`` window (older turns dropped first, recorded on the
    row), and judge items go out in bounded batches: memory does not grow
    with a session's length, and the judge's pool stays full."""
    facts = [
        row
        for session in sessions
        for round_ in session["rounds"]
        for method in methods
        for row in judge_checks.fact_rows(
            {
                "session_id": session["session_id"],
                "round": round_["round"],
                "method": method,
            },
            round_["responses"][method],
        )
    ]
    criterion_modes = protocols.from_options(options).criteria()
    if judge is None:
        return facts + [
            row
            for session in sessions
            for key in _keys([session], methods)
            for row in [
                *(
                    result_row(key, m, None, note=note("no_judge"))
                    for m in ("al", "binary")
                ),
                *criteria.no_judge_rows(key, criteria.asked(session, criterion_modes)),
            ]
        ]
    samples, budget = int(options.get("samples", 1)), options.get("history_chars")
    modes = modes_of(options)
    rows: list[ResultRow] = list(_lacking(sessions, methods, options, modes))
    batch = Batch(judge)
    for session in sessions:
        asked = criteria.asked(session, criterion_modes)
        for method in methods:
            window = History(budget)
            for index, round_ in enumerate(session["rounds"]):
                key: RowKey = {
                    "session_id": session["session_id"],
                    "round": round_["round"],
                    "method": method,
                }
                items = request_items(
                    session,
                    method,
                    index,
                    samples,
                    window.text(),
                    tuple(modes.values()),
                )
                for mode, mode_items in items.items():
                    build = partial(
                        rows_from_outcomes, key, mode, truncated=window.dropped
                    )
                    rows += batch.add(mode_items, build)
                if asked:  # the protocol's criteria this session names
                    fields = prompt_fields(session, method, index, window.text())
                    for mode in asked:
                        build = partial(
                            criteria.rows_from_outcomes,
                            key,
                            mode,
                            truncated=window.dropped,
                        )
                        rows += batch.add(judge_items(mode, samples, **fields), build)
                response = round_["responses"][method]
                window.add(user_message(round_, response), response["text"])
    return facts + rows + batch.flush()


def _lacking(
    sessions: list[dict[str, Any]],
    methods: list[str],
    options: dict[str, Any],
    modes: dict[str, JudgeMode],
) -> Iterator[ResultRow]:
    """``not_applicable`` rows of what the run's protocol does not ask: the
    binary verdict, the dimensions (MT-Bench and ALOE have neither)."""
    missing = [] if "binary" in modes else ["binary"]
    asked = modes["alignment"].dimensions if "alignment" in modes else ()
    if "alignment" not in modes:
        missing += ["al", *(f"al_{d}" for d in DIMENSIONS)]
    else:
        missing += [f"al_{d}" for d in DIMENSIONS if d not in asked]
    if not missing:
        return
    name = protocols.from_options(options).name
    for key in _keys(sessions, methods):
        for metric in missing:
            part = metric.removeprefix("al_") if metric.startswith("al_") else metric
            yield result_row(
                key, metric, None, note=note("protocol_lacks", protocol=name, part=part)
            )


def estimate(
    session: dict[str, Any],
    methods: list[str],
    window: int | None,
    options: dict[str, Any],
) -> tuple[int, int]:
    """Judge calls and prompt characters of one session, per sample: a
    request per (round, method) and mode the run's protocol asks (two by
    default; ALOE and MT-Bench ask no binary verdict), each carrying the
    method's history so far within the window.

    >>> s = {"user_profile": "p", "user_personality": "q", "rounds": [
    ...     {"round": k, "user_message": "hi", "responses": {"M": {"text": "ok"}}}
    ...     for k in (1, 2)]}
    >>> aloe = {"protocol": protocols.builtin("aloe").stored()}
    >>> estimate(s, ["M"], None, {})[0], estimate(s, ["M"], None, aloe)[0]
    (4, 2)
    """
    named = criteria.asked(session, _criteria(options))
    modes = [*modes_of(options).values(), *named]
    fixed, uses = prompt_sizes(modes)
    base_extra = criteria.context_chars(session, named) if named else 0
    profile, personality = session["user_profile"], session["user_personality"]
    base = uses["profile"] * len(profile) + uses["personality"] * len(personality)
    calls = chars = 0
    for method in methods:
        history_chars = 0
        for round_ in session["rounds"]:
            response = round_["responses"][method]
            asked = len(user_message(round_, response))
            shown = history_chars if window is None else min(history_chars, window)
            calls += len(modes)
            chars += fixed + base + base_extra + uses["history"] * shown
            chars += uses["user_message"] * asked
            chars += uses["response"] * len(response["text"])
            # "User: ...\nAssistant: ..." and a blank line
            history_chars += asked + len(response["text"]) + 24
    return calls, chars


def _criteria(options: dict[str, Any]) -> dict[str, JudgeMode]:
    return protocols.from_options(options).criteria()


def _keys(sessions: list[dict[str, Any]], methods: list[str]) -> Iterator[RowKey]:
    for session in sessions:
        for round_ in session["rounds"]:
            for method in methods:
                yield {
                    "session_id": session["session_id"],
                    "round": round_["round"],
                    "method": method,
                }


def _metric(
    metric_id: str,
    label: LazyText,
    level: Level,
    bounds: tuple[float, float] | None,
    **extra: Any,
) -> Metric:
    return Metric(metric_id, label, level, True, bounds, needs_judge=True, **extra)


_DIMENSION_LABELS = {
    "style": _l("Style"),
    "content": _l("Content"),
    "naturalness": _l("Naturalness"),
    "personalization": _l("Personalization"),
    "conversation": _l("Conversation"),
}
SUMMARY_FREE = {"ranked": False, "in_table": False}
METRICS = (
    _metric(
        "al",
        _l("Alignment level AL"),
        "row",
        (0.0, 100.0),
        agreement="interval",
        description=_l(
            "Judge score of one response, 0-100: five dimensions of 20 points."
        ),
    ),
    *(
        _metric(
            f"al_{d}",
            label,
            "row",
            (0.0, 20.0),
            description=_l("One of the five judge dimensions, 0-20."),
        )
        for d, label in _DIMENSION_LABELS.items()
    ),
    _metric(
        "binary",
        _l("Would keep chatting"),
        "row",
        (0.0, 1.0),
        format=Format.RATE,
        agreement="nominal",
        description=_l("The judge's yes (1) or no (0): would the user keep chatting?"),
    ),
    Metric(
        "response_chars",
        _l("Response length (characters)"),
        "row",
        True,
        (0.0, None),
        Format.COUNT,
        ranked=False,
        description=_l(
            "Characters of the response: what length control and the length bias check use."
        ),
    ),
    Metric(
        "al_sample",
        _l("AL of one judge sample"),
        "row",
        True,
        (0.0, 100.0),
        keyed=True,
        ranked=False,
        needs_judge=True,
        description=_l(
            "With several samples per item, each sample's AL (al_sample@1, @2, ...); al is their mean."
        ),
    ),
    Metric(
        "human_al",
        _l("Human AL label"),
        "row",
        True,
        (0.0, 100.0),
        description=_l(
            "The alignment score a human gave the response (field human.al)."
        ),
    ),
    Metric(
        "human_binary",
        _l("Human keep-chatting label"),
        "row",
        True,
        (0.0, 1.0),
        Format.RATE,
        description=_l(
            "A human's yes (1) or no (0) for the response (field human.binary)."
        ),
    ),
    Metric(
        "human_score",
        _l("Human score on its own scale"),
        "row",
        True,
        None,
        keyed=True,
        ranked=False,
        description=_l(
            "A human's score of the response for one criterion, on the criterion's own scale (field human.scores): human_score@<criterion>:<low>-<high>."
        ),
    ),
    Metric(
        "judge_score",
        _l("Judge's score on a criterion's scale"),
        "row",
        True,
        None,
        keyed=True,
        ranked=False,
        needs_judge=True,
        description=_l(
            "The judge's score of the response for one criterion of the run's protocol, on the scale the protocol declares for it: judge_score@<criterion>:<low>-<high>."
        ),
    ),
    Metric(
        "recorded",
        _l("Recorded judge's score"),
        "row",
        True,
        None,
        keyed=True,
        ranked=False,
        description=_l(
            "A score a judge gave the response elsewhere, carried by the file (field judges), on the criterion's own scale: recorded@<judge>@<criterion>:<low>-<high>."
        ),
    ),
    _metric(
        "al_lc",
        _l("Length-controlled AL"),
        "summary",
        None,
        source="al",
        description=_l(
            "The method's AL predicted at the run's mean log response length, from a regression of AL on method and log length."
        ),
        basis=_l(
            "item-weighted: regression prediction at the run's mean log length, not round-weighted like AL average"
        ),
    ),
    _metric(
        "al_avg",
        _l("AL average"),
        "summary",
        (0.0, 100.0),
        compare="al",
        per_judge=True,
        description=_l(
            "Mean of AL(k) over the rounds k that rest on at least 3 sessions."
        ),
        basis=_l(
            "mean over rounds k of AL(k), rounds resting on fewer than 3 sessions left out"
        ),
    ),
    _metric(
        "al_slope",
        _l("AL slope"),
        "summary",
        None,
        source="al",
        description=_l(
            "Slope of the least-squares line through (k, AL(k)) over the rounds k that rest on at least 3 sessions."
        ),
    ),
    _metric(
        "al_avg_all_rounds",
        _l("AL average, all rounds"),
        "summary",
        (0.0, 100.0),
        source="al",
        ranked=False,
        in_table=False,
        description=_l("Mean of AL(k) over every round k, sparse rounds included."),
    ),
    _metric(
        "al_slope_all_rounds",
        _l("AL slope, all rounds"),
        "summary",
        None,
        source="al",
        ranked=False,
        in_table=False,
        description=_l(
            "Slope of the least-squares line through (k, AL(k)) over every round k, sparse rounds included."
        ),
    ),
    _metric(
        "al_intercept", _l("AL intercept"), "summary", None, ranked=False, source="al"
    ),
    _metric("al_r2", _l("AL R²"), "summary", (0.0, 1.0), ranked=False, source="al"),
    _metric(
        "binary_rate",
        _l("Keep-chatting rate"),
        "summary",
        (0.0, 1.0),
        per_judge=True,
        format=Format.RATE,
        compare="binary",
        description=_l("Share of scored responses the judge would keep chatting with."),
        basis=_l("share of all scored verdicts, pooled over sessions"),
    ),
    _metric(
        "al_session_slope",
        _l("Mean per-session slope"),
        "summary",
        None,
        source="al",
        description=_l(
            "Mean of the per-session least-squares slopes of AL over rounds."
        ),
    ),
    _metric(
        "al_session_slope_ci_low",
        _l("Per-session slope, CI low"),
        "summary",
        None,
        source="al",
        **SUMMARY_FREE,
    ),
    _metric(
        "al_session_slope_ci_high",
        _l("Per-session slope, CI high"),
        "summary",
        None,
        source="al",
        **SUMMARY_FREE,
    ),
    *(
        _metric(f"al_{d}_avg", label, "summary", (0.0, 20.0), in_table=False)
        for d, label in _DIMENSION_LABELS.items()
    ),
)

SUITE = Suite(
    name="alignment",
    dimensions=DIMENSIONS,
    label=_l("Persona alignment (LLM judge)"),
    description=_l(
        "An LLM judge scores every response for alignment with the user's profile and personality, round by round."
    ),
    metrics=METRICS,
    run=run,
    summarize=summarize,
    judge=JudgeUse.REQUIRED,
    modes=MODES,
    protocol_modes=PROTOCOL_MODES,
    estimate=estimate,
    order=10,
    lead="al_avg",  # the mean AL: length control needs enough sessions to fit
    methods_note=(
        "AL(k) is the mean judge score at round k over the sessions that reach "
        f"round k; the AL average and slope leave out rounds resting on fewer than "
        f"{MIN_ROUND_SESSIONS} sessions (or than the most sessions any round rests "
        "on, when that is fewer), which stay on the curve; the figures over every round "
        "are reported beside them (al_avg_all_rounds, al_slope_all_rounds)."
    ),
    validity=(
        ("length_spearman", "validity_no_variance"),
        ("cross_mode_auc", "validity_one_class"),
        ("human", "validity_no_human"),
        ("samples_alpha", "validity_one_sample"),
        ("inter_judge_alpha", "validity_one_judge"),
        ("judge_offsets", "validity_one_judge"),
    ),
    panel=Panel(
        charts=(
            Chart(
                "al_curve",
                "curve",
                _l("AL(k): alignment by round (95% CI)"),
                "curves.al",
                x_title=_l("Round k"),
                y_metric="al",
                y_range=(0, 100),
            ),
            Chart(
                "nal_curve",
                "curve",
                _l("N-AL(k): AL(k) min–max normalized per method"),
                "curves.nal",
                x_title=_l("Round k"),
                y_title=_l("0 = the method's lowest round, 1 = its highest"),
                y_range=(-0.05, 1.05),
            ),
            Chart(
                "radar",
                "radar",
                _l("Scoring dimensions (0–20)"),
                "summary",
                series=tuple((f"al_{d}_avg", f"al_{d}") for d in DIMENSIONS),
                y_range=(0, 20),
            ),
        ),
        empty=_l(
            "No judge scores to chart: the alignment suite needs a configured judge."
        ),
    ),
)
