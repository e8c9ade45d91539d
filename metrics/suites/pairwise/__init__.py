"""Pairwise suite (needs a judge): the judge compares two methods' replies to
the same user message, in both orders, as MT-Bench does (Zheng et al., 2023).

For each (session, round) and each pair of methods (every pair, or each
method against ``pairwise_baseline``) the judge sees the profile, the
personality, the user's earlier messages (the history both methods share;
their earlier replies differ, so they are left out) and the two replies as
A and B, once in each order. Agreeing verdicts stand; a flip is a tie and
counts as inconsistent. Each method gets a row ``pairwise@<opponent>``:
1 won, 0.5 tie, 0 lost (the opponent's row holds the complement).

Summary per method: ``pairwise_winrate``, the mean over sessions of the
method's per-session share of comparisons won (ties count half), with a
percentile bootstrap CI over sessions (inside [0, 1]); ``bt_score``, the
Bradley–Terry strength (``metrics/suites/pairwise/ranking.py``: baseline 0, bootstrap CI
over sessions, leaving out resamples in which some methods won or lost
everything, and none when more than 5% of them did). The
judge's position bias goes to the results' ``judge_validity``:
``position_consistency`` (share of comparisons whose two orders agree) and
``first_position_rate`` (share of decisive single-order verdicts that chose
the first reply; 0.5 is no preference).

>>> from metrics.suites.pairwise import parse_pairwise
>>> parse_pairwise("B is warmer.\\n\\\\boxed{B}").score, parse_pairwise("\\\\boxed{tie}").score
(0.0, 0.5)
>>> parse_pairwise("A is better").note.code
'no_verdict'
>>> parse_pairwise("My final verdict is [[A>B]]").score
1.0
>>> reconcile(1.0, 1.0), reconcile(1.0, 0.0), reconcile(0.5, 0.5)
((1.0, True), (0.5, False), (0.5, True))
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import Any

from config import DEFAULTS
from core.i18n import LazyText
from core.status import RowStatus
from dataset.replies import replied
from metrics import protocols, stats
from metrics.dialogue import FIRST_MESSAGE
from metrics.judging import (
    Batch,
    Judge,
    Outcome,
    judge_items,
    prompt_sizes,
    verdict_of,
)
from metrics.notes import Note, note
from metrics.rows import ResultRow, RowKey, result_row
from metrics.suite import (
    Chart,
    Column,
    Format,
    JudgeMode,
    JudgeUse,
    LazyModes,
    Metric,
    Option,
    Panel,
    ProtocolMode,
    Suite,
    Table,
    _l,
)
from metrics.suites.pairwise.length_control import table_rows
from metrics.suites.pairwise.summary import bt_baseline, summarize, validity

# The protocol mode it asks by name, with the fields it fills in; the
# checker reads it from the registry (metrics/protocol_checks.py)
PROTOCOL_MODE = ProtocolMode(
    "pairwise",
    "choice",
    frozenset(
        {
            "profile",
            "personality",
            "history",
            "user_message",
            "response_a",
            "response_b",
        }
    ),
)
# The default protocol's mode (protocols/personasteer.toml), read on first
# use (reading a protocol runs the checker, which reads the registry); a run
# with another protocol takes its own (``mode_of``).
MODES = LazyModes(lambda: [protocols.builtin(protocols.DEFAULT).modes["pairwise"]])


def __getattr__(name: str) -> Any:
    """``PAIRWISE`` and ``parse_pairwise``, read on first use."""
    if name == "PAIRWISE":
        return MODES[0]
    if name == "parse_pairwise":
        return MODES[0].parse
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def mode_of(options: dict[str, Any]) -> JudgeMode | None:
    return protocols.from_options(options).modes.get("pairwise")


def reconcile(first: float, second: float) -> tuple[float, bool]:
    """The share method a won from its two orders (``second`` already seen
    from a's side): agreeing verdicts stand, a flip is a tie."""
    return (first, True) if first == second else (0.5, False)


# (session, round index, method a, method b): one comparison to judge
Pair = tuple[dict[str, Any], int, str, str]


def validate_baseline(value: object) -> str | None:
    if value in (None, ""):
        return None
    if not isinstance(value, str) or len(value) > 255:
        raise ValueError("pairwise_baseline must be a method name")
    return value


def pairs(methods: list[str], options: dict[str, Any]) -> list[tuple[str, str]]:
    """Each method against the baseline, or every pair (each against the
    first beyond ``MAX_COMPARED_METHODS``)."""
    baseline = options.get("pairwise_baseline")
    if baseline:
        return [(m, baseline) for m in methods if m != baseline]
    return stats.method_pairs(methods, DEFAULTS["MAX_COMPARED_METHODS"])


def shared_history(session: dict[str, Any], index: int, budget: int | None) -> str:
    """The user's messages before round ``index``, newest kept within budget."""
    lines = [f"User: {r['user_message']}" for r in session["rounds"][:index]]
    kept: list[str] = []
    for line in reversed(lines):
        if budget is not None and kept and sum(map(len, kept)) + len(line) > budget:
            break
        kept.insert(0, line)
    return "\n".join(kept) or FIRST_MESSAGE


def _fields(session: dict[str, Any], index: int, budget: int | None) -> dict[str, Any]:
    return {
        "profile": session["user_profile"],
        "personality": session["user_personality"],
        "history": shared_history(session, index, budget),
        "user_message": session["rounds"][index]["user_message"],
    }


def run(
    sessions: list[dict[str, Any]],
    methods: list[str],
    judge: Judge | None,
    options: dict[str, Any],
) -> list[ResultRow]:
    compared = pairs(methods, options)
    baseline = options.get("pairwise_baseline")
    keys = [  # a pair with a missing reply is not judged (metrics/replies.py)
        (session, index, a, b)
        for session in sessions
        for index, round_ in enumerate(session["rounds"])
        for a, b in compared
        if replied(round_, a) and replied(round_, b)
    ]
    if baseline and baseline not in methods:
        reason = note("baseline_not_a_method", method=baseline)
        return [
            row
            for key in _row_keys(sessions, methods)
            for row in [result_row(key, f"pairwise@{baseline}", None, note=reason)]
        ]
    if judge is None:
        return [row for key in keys for row in _both(key, None, note("no_judge"))]
    mode = mode_of(options)
    if mode is None:
        name = protocols.from_options(options).name
        reason = note("protocol_lacks", protocol=name, part="pairwise")
        return [row for key in keys for row in _both(key, None, reason)]
    batch, rows = Batch(judge), []
    budget = options.get("history_chars")
    for key in keys:
        session, index, a, b = key
        fields = _fields(session, index, budget)
        responses = session["rounds"][index]["responses"]
        items = []
        for first, second in ((a, b), (b, a)):
            items += judge_items(
                mode,
                1,
                **fields,
                response_a=responses[first]["text"],
                response_b=responses[second]["text"],
            )
        rows += batch.add(items, partial(_rows, key, mode))
    return rows + batch.flush()


def _row_keys(sessions: list[dict[str, Any]], methods: list[str]) -> Iterator[RowKey]:
    for session in sessions:
        for round_ in session["rounds"]:
            for method in filter(partial(replied, round_), methods):
                yield {
                    "session_id": session["session_id"],
                    "round": round_["round"],
                    "method": method,
                }


def _both(
    key: Pair,
    value: float | None,
    reason: Note | None = None,
    detail: dict[str, Any] | None = None,
) -> list[ResultRow]:
    """Method a's row against b and b's mirror row against a."""
    session, index, a, b = key
    where: RowKey = {
        "session_id": session["session_id"],
        "round": session["rounds"][index]["round"],
    }
    mirror = None if value is None else 1.0 - value
    flipped = dict(detail or {})
    if "chars" in flipped:  # [own reply, opponent's reply], from each side
        flipped["chars"] = flipped["chars"][::-1]
    return [
        result_row(
            {**where, "method": a},
            f"pairwise@{b}",
            value,
            note=reason,
            detail={**(detail or {}), "primary": True},
        ),
        result_row(
            {**where, "method": b},
            f"pairwise@{a}",
            mirror,
            note=reason,
            detail={**flipped, "primary": False},
        ),
    ]


def _rows(key: Pair, mode: JudgeMode, outcomes: list[Outcome]) -> list[ResultRow]:
    session, index, a, b = key
    responses = session["rounds"][index]["responses"]
    detail: dict[str, Any] = {
        "prompt_version": mode.prompt,
        # the replies' lengths (characters), a's first: length control reads them
        "chars": [len(responses[a]["text"]), len(responses[b]["text"])],
        "first_wins": [o.verdict["score"] if o.verdict else None for o in outcomes],
        "reasoning": [
            o.verdict.get("reasoning") if o.verdict else None for o in outcomes
        ],
    }
    if any(getattr(o, "reasked", 0) for o in outcomes):  # the format was quoted
        detail["reasked"] = sum(getattr(o, "reasked", 0) for o in outcomes)
    failed = [o for o in outcomes if o.status != RowStatus.OK]
    if failed:
        detail["raw"] = failed[0].raw
        return _both(key, None, failed[0].note, detail)
    first, swapped = (verdict_of(o)["score"] for o in outcomes)
    value, consistent = reconcile(first, 1.0 - swapped)
    return _both(key, value, None, {**detail, "consistent": consistent})


def estimate(
    session: dict[str, Any],
    methods: list[str],
    window: int | None,
    options: dict[str, Any],
) -> tuple[int, int]:
    """Two calls (both orders) per (round, pair of methods); none when the
    run's protocol has no pairwise mode (ALOE).

    >>> s = {"user_profile": "p", "user_personality": "q", "rounds": [
    ...     {"round": 1, "user_message": "hi", "responses": {m: {"text": "ok"} for m in "ABC"}}]}
    >>> aloe = {"protocol": protocols.builtin("aloe").stored()}
    >>> estimate(s, ["A", "B", "C"], None, {})[0], estimate(s, ["A", "B", "C"], None, aloe)[0]
    (6, 0)
    """
    mode = mode_of(options)
    if mode is None:
        return 0, 0
    compared = pairs(methods, {})
    fixed, uses = prompt_sizes([mode])
    fixed += uses["profile"] * len(session["user_profile"])
    fixed += uses["personality"] * len(session["user_personality"])
    calls = chars = 0
    for index, round_ in enumerate(session["rounds"]):
        shared = uses["history"] * len(shared_history(session, index, window))
        shared += uses["user_message"] * len(round_["user_message"])
        for a, b in compared:
            if not (replied(round_, a) and replied(round_, b)):
                continue
            replies = uses["response_a"] * len(round_["responses"][a]["text"])
            replies += uses["response_b"] * len(round_["responses"][b]["text"])
            calls += 2
            chars += 2 * (fixed + shared + replies)
    return calls, chars


__all__ = ["bt_baseline", "parse_pairwise", "summarize", "validity"]

RATE, UNIT = Format.RATE, (0.0, 1.0)
CI_FREE: dict[str, Any] = {"ranked": False, "in_table": False, "source": "pairwise"}


def _interval_ends(
    stem: str,
    label: LazyText,
    bounds: tuple[float, float] | None,
    fmt: Format = Format.SCORE,
) -> list[Metric]:
    """``<stem>_ci_low`` and ``_ci_high``: the value's label, a judge's work,
    neither ranked nor a table column of their own."""
    return [
        Metric(
            f"{stem}_ci_{end}",
            label,
            "summary",
            True,
            bounds,
            fmt,
            needs_judge=True,
            **CI_FREE,
        )
        for end in ("low", "high")
    ]


METRICS = (
    Metric(
        "pairwise",
        _l("Pairwise win (1 won, ½ tie, 0 lost)"),
        "row",
        True,
        UNIT,
        RATE,
        keyed=True,
        key_is_method=True,
        needs_judge=True,
        description=_l(
            "Against the opponent named after @: both orders agree, else a tie."
        ),
    ),
    Metric(
        "pairwise_winrate",
        _l("Pairwise win rate"),
        "summary",
        True,
        UNIT,
        RATE,
        needs_judge=True,
        source="pairwise",
        description=_l(
            "Share of pairwise comparisons won, ties counting half: the mean over sessions of each session's share."
        ),
        basis=_l("mean over sessions of the share of comparisons won"),
    ),
    *_interval_ends("pairwise_winrate", _l("Pairwise win rate"), UNIT, RATE),
    Metric(
        "bt_score",
        _l("Bradley–Terry strength"),
        "summary",
        True,
        None,
        needs_judge=True,
        source="pairwise",
        description=_l(
            "Log-odds of beating the baseline method (strength 0), fitted by maximum likelihood."
        ),
        basis=_l("Bradley–Terry maximum-likelihood strength"),
    ),
    *_interval_ends("bt", _l("Bradley–Terry strength"), None),
    Metric(
        "pairwise_winrate_lc",
        _l("Length-controlled win rate"),
        "summary",
        True,
        UNIT,
        RATE,
        needs_judge=True,
        source="pairwise",
        ranked=False,
        in_table=False,
        description=_l(
            "The win rate the judge's preference would give at equal reply lengths: a logistic model of the verdicts on the methods and tanh of the normalised length difference (AlpacaEval 2.0)."
        ),
        basis=_l(
            "model's win probability at zero length difference, mean over sessions"
        ),
    ),
    *_interval_ends(
        "pairwise_winrate_lc", _l("Length-controlled win rate"), UNIT, RATE
    ),
    Metric(
        "bt_lc_score",
        _l("Length-controlled Bradley–Terry strength"),
        "summary",
        True,
        None,
        needs_judge=True,
        source="pairwise",
        ranked=False,
        in_table=False,
        description=_l(
            "Log-odds of beating the baseline method at equal reply lengths (the length term of the model set to 0)."
        ),
        basis=_l("length-controlled Bradley–Terry strength"),
    ),
    *_interval_ends("bt_lc", _l("Length-controlled Bradley–Terry strength"), None),
    Metric(
        "pairwise_longer_wins_rate",
        _l("Win rate if the longer reply always won"),
        "summary",
        True,
        UNIT,
        RATE,
        needs_judge=True,
        source="pairwise",
        ranked=False,
        in_table=False,
        description=_l(
            "The win rate a judge that always picks the longer reply (equal lengths a tie) would give on the same comparisons: a raw win rate close to it may be length, not quality."
        ),
        basis=_l("mean over sessions of the share the longer reply would win"),
    ),
    *_interval_ends(
        "pairwise_longer_wins_rate",
        _l("Win rate if the longer reply always won"),
        UNIT,
        RATE,
    ),
    Metric(
        "bt_resamples_left_out",
        _l("Bradley–Terry resamples left out"),
        "summary",
        False,
        (0.0, None),
        Format.COUNT,
        needs_judge=True,
        **CI_FREE,
        description=_l(
            "Bootstrap resamples in which a method won or lost every comparison (no finite strengths): left out of the Bradley–Terry interval."
        ),
    ),
)

SUITE = Suite(
    name="pairwise",
    label=_l("Pairwise judge (both orders)"),
    description=_l(
        "The judge compares two methods' replies to the same message, in both orders; a verdict that flips with the order counts as a tie."
    ),
    metrics=METRICS,
    run=run,
    summarize=summarize,
    judge=JudgeUse.REQUIRED,
    modes=MODES,
    protocol_modes=(PROTOCOL_MODE,),
    options=(
        Option("pairwise_baseline", _l("Pairwise baseline method"), validate_baseline),
    ),
    estimate=estimate,
    reads_missing=True,  # pairs within a round: a pair with a missing side is skipped
    summary_details=True,  # position consistency reads each comparison's verdicts
    validity=(
        ("position_consistency", "validity_no_comparisons"),
        ("first_position_rate", "validity_no_decisive"),
        ("length_pairwise_effect", "validity_no_length_fit"),
    ),
    order=15,
    by_default=False,  # two calls per pair of methods per round: opt in
    methods_note=(
        "Pairwise preferences were judged in both orders of the two responses; a "
        "verdict that changed with the order was counted as a tie (MT-Bench). Win "
        "rates count ties as half; Bradley-Terry strengths were fitted by maximum "
        "likelihood (Newton's method with an L2 penalty of 1e-4 on the strengths; "
        "checked against choix) with the first method (or the pairwise baseline) "
        "fixed at 0 and 95% CIs from 500 bootstrap resamples of sessions; when some "
        "methods won or lost every comparison against the rest (separation), no "
        "finite strength exists and none was reported; resamples that were "
        "separated were left out and counted, and no interval was given when they "
        "exceeded 5%. Length-controlled win rates and strengths were fitted as in "
        "AlpacaEval 2.0 (Dubois et al. 2024) without its instruction term, logit "
        "P(a beats b) = b_a - b_b + g*tanh(dl/s) with dl the difference in "
        "characters and s its root mean square, and read at equal lengths."
    ),
    panel=Panel(
        charts=(
            Chart(
                "pairwise_matrix",
                "heatmap",
                _l("Win rate of the row method against the column method"),
                "panel.matrix",
                columns="panel.methods",
            ),
            Chart(
                "bt_forest",
                "forest",
                _l("Bradley–Terry strength (95% bootstrap CI; baseline 0)"),
                "panel.bt",
                series=(("bt", "bt_score"),),
                y_metric="bt_score",
            ),
        ),
        tables=(
            Table(
                "pairwise-length",
                _l("Length-controlled win rates (at equal reply lengths)"),
                (
                    Column("method", _l("Method")),
                    Column("pairwise_winrate", _l("Win rate"), "score"),
                    Column(
                        "pairwise_longer_wins_rate",
                        _l("If the longer reply always won"),
                        "score",
                    ),
                    Column(
                        "pairwise_winrate_lc", _l("Length-controlled win rate"), "score"
                    ),
                    Column("pairwise_winrate_lc_ci_low", _l("95% CI low"), "score"),
                    Column("pairwise_winrate_lc_ci_high", _l("95% CI high"), "score"),
                    Column(
                        "bt_lc_score",
                        _l("Length-controlled Bradley–Terry strength"),
                        "score",
                    ),
                    Column("bt_lc_ci_low", _l("95% CI low"), "score"),
                    Column("bt_lc_ci_high", _l("95% CI high"), "score"),
                ),
                table_rows,
            ),
        ),
        empty=_l(
            "No pairwise verdicts to chart: the pairwise suite needs a configured judge and at least two methods."
        ),
    ),
)
