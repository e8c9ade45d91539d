"""The suite contract: everything about a suite lives in one object.

A suite module under ``metrics/suites/`` exports ``SUITE = Suite(...)``:
its name and label, the session/response fields it needs, whether it uses the
judge, its metrics with their metadata, its judge modes (prompt file and
verdict parser), its options, ``run`` and ``summarize``, and a declarative
panel the web layer turns into charts and tables. Validation, the planner,
the dashboard, the exports and the CLI read these objects; no other module
names a suite. ``CONTRIBUTING.md`` walks through adding one.

>>> toy = Suite(
...     name="toy", label=_l("Toy"), description=_l("A toy suite."),
...     metrics=(Metric("toy_len", _l("Length"), "row", bounds=(0, None)),),
...     run=lambda sessions, methods, judge, options: [],
...     summarize=lambda rows, methods: {"summary": {}},
...     session_fields=("meta",))
>>> toy.metrics[0].suite, toy.supports({"meta": {"a": 1}}), toy.supports({})
('toy', True, False)
>>> toy.metrics[0].within_bounds(3.0), toy.metrics[0].within_bounds(-1.0)
(True, False)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Literal, TypedDict, overload

from core.i18n import LazyText, _l
from metrics import columns
from metrics.row_source import RowSource
from metrics.rows import ResultRow

__all__ = ["_l"]  # suite modules take the marker from here with the contract

Level = Literal["row", "session", "summary"]


class Format(StrEnum):
    """How a value is displayed."""

    SCORE = "score"  # a real number, two decimals
    RATE = "rate"  # a fraction in [0, 1]
    COUNT = "count"  # an integer
    SECONDS = "seconds"


class JudgeUse(StrEnum):
    NONE = "none"
    REQUIRED = "required"  # judge metrics are not_configured without a judge
    OPTIONAL = "optional"  # extra metrics when a judge is configured


@dataclass(frozen=True)
class Metric:
    id: str
    label: LazyText
    level: Level
    higher_is_better: bool = True
    # (low, high); None on a side means unbounded. None = any real number.
    bounds: tuple[float | None, float | None] | None = None
    format: Format = Format.SCORE
    description: LazyText | None = None
    compare: str | None = None  # session-level metric its significance comes from
    ranked: bool = True  # the dashboard marks the best method
    in_table: bool = True  # a column of the comparison table (summary level)
    needs_judge: bool = False
    keyed: bool = False  # also emitted per key, as "<id>@<key>" (e.g. per topic)
    # the key names another method (pairwise@<opponent>): a comparison across
    # runs renames it with the method (metrics/comparison.py)
    key_is_method: bool = False
    # Summary level: with a judge panel, also "<id>@<judge model>" per judge
    # (the plain value is the panel's: every judge's rows together).
    per_judge: bool = False
    # Summary level: the row/session metric whose scored sessions the value
    # rests on (its ``<id>_n``), when neither ``compare`` nor the id without
    # ``_avg``/``_rate``/``_ci_low``/``_ci_high`` names it.
    source: str | None = None
    # Summary level: how the value is computed, when that is not the mean of
    # the per-session values its Δ is made of (said beside the Δ).
    basis: LazyText | None = None
    # Row/session level judge metrics: how two judges' values of the same
    # item are compared when runs are compared (metrics/agreement.py).
    agreement: Literal["interval", "nominal"] | None = None
    suite: str = ""  # set by the Suite that owns it

    def within_bounds(self, value: float) -> bool:
        if self.bounds is None:
            return True
        low, high = self.bounds
        return (low is None or value >= low) and (high is None or value <= high)


@dataclass(frozen=True)
class JudgeMode:
    """One kind of judge request: its prompt file and its verdict parser;
    the output format it asks for (quoted when a reply must be re-asked) and
    the JSON schema asked for as structured output (None: text only)."""

    name: str
    # its prompt file's stem in the suite's folder, e.g. "jera_v2" (stored per score)
    prompt: str
    parse: Callable[[str], Any]  # reply text -> Verdict | NoVerdict (or None)
    format: str = ""
    schema: dict[str, Any] | None = field(default=None, hash=False, compare=False)
    # From a protocol (metrics/protocols.py): the prompt itself (else the
    # suite's file ``prompts/<prompt>.txt``), its dimensions and its kind of verdict.
    template: Any = field(default=None, hash=False, compare=False)
    dimensions: tuple[str, ...] = ()
    verdict: Any = field(default=None, hash=False, compare=False)
    # A protocol's criterion mode (kind "criterion"): the criterion it
    # scores on its verdict's scale (``judge_score@<criterion>:<low>-<high>``)
    criterion: str | None = None


@dataclass(frozen=True)
class ProtocolMode:
    """A mode of a judge protocol that a suite asks by its name (a protocol
    file's ``[modes.<name>]``): the kind of verdict it must give and the
    ``$fields`` its templates may use, the ones the suite fills in. The
    protocol checker (``metrics/protocol_checks.py``) reads these from the
    registry; a mode of another name is a criterion or a yes/no check."""

    name: str
    kind: Literal["score", "binary", "choice"]
    fields: frozenset[str]


class LazyModes(Sequence[JudgeMode]):
    """A suite's judge modes, read on first use: modes taken from a protocol
    cannot be read while the suite is imported (reading a protocol runs the
    checker, which asks the registry for the suites' protocol modes)."""

    def __init__(self, load: Callable[[], Iterable[JudgeMode]]) -> None:
        self._load = load
        self._modes: tuple[JudgeMode, ...] | None = None

    def _found(self) -> tuple[JudgeMode, ...]:
        if self._modes is None:
            self._modes = tuple(self._load())
        return self._modes

    @overload
    def __getitem__(self, index: int) -> JudgeMode: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[JudgeMode]: ...
    def __getitem__(self, index: int | slice) -> JudgeMode | Sequence[JudgeMode]:
        return self._found()[index]

    def __len__(self) -> int:
        return len(self._found())

    def __repr__(self) -> str:
        return f"LazyModes({self._found()!r})"


@dataclass(frozen=True)
class Option:
    """A per-run option of a suite, validated before the run is created."""

    name: str
    label: LazyText
    validate: Callable[[Any], Any]  # raw value (None: absent) -> value, or ValueError
    problem: str = "bad_option"  # problem code of a rejected value
    problem_message: LazyText | None = None  # its template, if not a core one


ChartKind = Literal[
    "curve", "radar", "bars", "stacked_bars", "bars_ci", "heatmap", "box", "forest"
]


@dataclass(frozen=True)
class Chart:
    """A chart of the suite's panel. ``source`` says where its values are:
    ``summary``, ``curves.<metric>``, ``panel`` or ``panel.<key>`` (the data
    ``summarize`` returned under ``panel``). ``series`` pairs a data key with
    the metric whose label names it."""

    id: str
    kind: ChartKind
    title: LazyText
    source: str
    series: tuple[tuple[str, str], ...] = ()
    x_title: LazyText | None = None
    y_title: LazyText | None = None
    empty: LazyText | None = None  # why it can be empty (else the panel's reason)
    y_metric: str | None = None  # y axis titled with this metric's label
    y_range: tuple[float, float] | None = None
    # heatmap: where the column names are; curve: where its series' names
    # are (else one series per method)
    columns: str | None = None
    marks: str | None = None  # box plot: a marker value per method
    mark_label: LazyText | None = None
    x_at_points: bool = False  # curve: a tick at each point's x (a sparse x)


def series(*metric_ids: str) -> tuple[tuple[str, str], ...]:
    """Series whose data keys are metric ids."""
    return tuple((metric_id, metric_id) for metric_id in metric_ids)


@dataclass(frozen=True)
class Column:
    key: str
    label: LazyText | str
    format: Literal["text", "metric", "score", "p", "count", "flag", "choice"] = "text"
    choices: Mapping[str, LazyText] = field(default_factory=dict)


@dataclass(frozen=True)
class Table:
    id: str
    title: LazyText
    columns: tuple[Column, ...]
    rows: Callable[
        [dict[str, Any], list[str]], list[dict[str, Any]]
    ]  # (panel data, methods) -> rows


@dataclass(frozen=True)
class Panel:
    charts: tuple[Chart, ...] = ()
    tables: tuple[Table, ...] = ()
    empty: LazyText | None = None  # said when there is nothing to show


class SuiteSummary(TypedDict, total=False):
    summary: dict[str, dict[str, float | None]]  # method -> summary metric -> value
    curves: dict[str, dict[str, list[dict[str, Any]]]]  # metric -> method -> points
    session_values: dict[str, dict[str, dict[str, float]]]  # metric -> method -> sid
    # table column -> method -> its value's parts (metrics/basis.py), for
    # columns that are not a mean over sessions of session values
    value_parts: dict[str, dict[str, dict[str, Any]]]
    panel: dict[str, Any]  # JSON-ready data the panel's charts and tables read
    # the results' "judge_validity" quantities this suite measures (None:
    # not computable from this run)
    validity: dict[str, float | int | None]


# (sessions, methods, the judge: a metrics.judging.Judge or None when none is
# configured (Any here: judging imports this module), the run's options)
Runner = Callable[
    [list[dict[str, Any]], list[str], Any, dict[str, Any]], list[ResultRow]
]

# (session, methods, history window in characters, the run's options: its
# protocol says which modes are asked) -> (judge calls, prompt characters)
SUMMARY_SUFFIXES = ("_avg", "_rate", "_ci_low", "_ci_high")
Estimator = Callable[
    [dict[str, Any], list[str], int | None, dict[str, Any]], tuple[int, int]
]
# this suite's rows (finalize passes a RowSource that reads them a part at a
# time; tests and the interim summary pass columns; both iterate as dict
# rows), methods
SummaryRows = columns.Rows | RowSource
Summarizer = Callable[[SummaryRows, list[str]], SuiteSummary]


@dataclass(frozen=True)
class Suite:
    name: str
    label: LazyText
    description: LazyText
    metrics: tuple[Metric, ...]
    run: Runner  # (sessions, methods, judge or None, options) -> rows
    summarize: Summarizer  # (this suite's rows, methods) -> SuiteSummary
    session_fields: tuple[str, ...] = ()  # a session needs at least one of them
    # some response needs each of them; "a|b": either name meets it
    response_fields: tuple[str, ...] = ()
    judge: JudgeUse = JudgeUse.NONE
    modes: Sequence[JudgeMode] = ()  # a tuple, or LazyModes
    # the modes of a protocol the suite asks by name, with their kind and
    # fields (the protocol checker reads them through the registry)
    protocol_modes: tuple[ProtocolMode, ...] = ()
    options: tuple[Option, ...] = ()
    panel: Panel = Panel()
    order: int = 100  # position in lists and on the dashboard
    # The results' judge_validity quantities the suite measures (returned by
    # summarize under "validity"), each with the note code saying why it can
    # still be missing when the suite ran (metrics/validity.py).
    validity: tuple[tuple[str, str], ...] = ()
    # Chosen when a request names no suites (the upload form checks it); an
    # opt-in suite costs enough judge calls that the user should ask for it.
    by_default: bool = True
    estimate: Estimator | None = None  # judge cost of one session, per sample
    summary_details: bool = False  # summarize reads rows' details (else None)
    # the summary metric a list of runs shows for the suite ("": its first)
    lead: str = ""
    methods_note: str = ""  # English sentence for a paper's Methods section
    # run gets whole sessions whatever replies are missing, and skips them
    # itself (it pairs methods within a round); else metrics/replies.py
    # hands it the groups of methods that replied to the same rounds
    reads_missing: bool = False
    # the rubric's dimensions its judge scores (0-20 each), which a human
    # label may score too (annotation queues: pipeline/service/annotations.py)
    dimensions: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        owned = tuple(replace(metric, suite=self.name) for metric in self.metrics)
        object.__setattr__(self, "metrics", owned)

    @property
    def uses_judge(self) -> bool:
        return self.judge != JudgeUse.NONE

    @property
    def needs_judge(self) -> bool:
        return self.judge == JudgeUse.REQUIRED

    @property
    def prompts(self) -> dict[str, str]:
        """Judge mode -> prompt version, as recorded in a run's header."""
        return {mode.name: mode.prompt for mode in self.modes}

    @property
    def headline(self) -> Metric:
        """The first row- or session-level metric: failures are recorded on it."""
        return next(m for m in self.metrics if m.level != "summary")

    @property
    def lead_metric(self) -> Metric:
        """The summary metric a list of runs shows for the suite."""
        summaries = self.summary_metrics()
        return next((m for m in summaries if m.id == self.lead), summaries[0])

    def summary_metrics(self) -> list[Metric]:
        return [m for m in self.metrics if m.level == "summary"]

    def source_of(self, metric: Metric) -> str | None:
        """The row/session metric behind a summary metric (see ``source``)."""
        own = {m.id for m in self.metrics if m.level != "summary"}
        if metric.source or metric.compare:
            return metric.source or metric.compare
        for suffix in SUMMARY_SUFFIXES:
            if metric.id.endswith(suffix) and metric.id[: -len(suffix)] in own:
                return metric.id[: -len(suffix)]
        return None

    def supports(self, session: dict[str, Any]) -> bool:
        """Whether one (validated) session carries what this suite needs."""
        if self.session_fields and not any(
            session.get(name) not in (None, "", [], {}) for name in self.session_fields
        ):
            return False
        return all(
            any(_any_response_has(session, name) for name in names.split("|"))
            for names in self.response_fields
        )


def _any_response_has(session: dict[str, Any], name: str) -> bool:
    for round_ in session.get("rounds", ()):
        for response in round_.get("responses", {}).values():
            if isinstance(response, dict) and response.get(name) is not None:
                return True
    return False
