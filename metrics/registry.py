"""Suite and metric registry: the one list that validation, the run planner
and the UI read instead of hard-coding metric names.

A suite runs on a session when the session carries the fields the suite needs
(``session_fields``: the session must have at least one of them;
``response_fields``: at least one response of the session must have each).

>>> [suite.name for suite in SUITES.values()]
['alignment', 'quality', 'style', 'roleplay', 'simulation', 'slots']
>>> SUITES["slots"].session_fields
('ground_truth_slots',)
>>> METRICS["al"].bounds
(0.0, 100.0)
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Suite:
    name: str
    needs_judge: bool
    session_fields: tuple[str, ...] = ()
    response_fields: tuple[str, ...] = ()
    available: bool = False  # True once the engine has a runner for it
    optional_judge: bool = False  # asks the judge too, when one is configured

    @property
    def uses_judge(self) -> bool:
        return self.needs_judge or self.optional_judge


@dataclass(frozen=True)
class Metric:
    id: str
    suite: str
    level: str  # "row" | "session" | "summary"
    higher_is_better: bool
    bounds: tuple[float, float] | None = None
    needs_judge: bool = False
    ranked: bool = True  # the dashboard marks the best method
    compare: str | None = None  # session-level metric its significance comes from


SUITES: dict[str, Suite] = {
    suite.name: suite
    for suite in (
        Suite("alignment", needs_judge=True, available=True),
        Suite("quality", needs_judge=False, available=True),
        Suite(
            "style",
            needs_judge=False,
            session_fields=("sample_dialogues",),
            available=True,
        ),
        Suite(
            "roleplay",
            needs_judge=True,
            session_fields=("attributes", "sample_dialogues"),
            available=True,
        ),
        Suite(
            "simulation",
            needs_judge=False,
            session_fields=("persona", "target_order"),
            response_fields=("sim",),
            available=True,
        ),
        Suite(
            "slots",
            needs_judge=False,
            session_fields=("ground_truth_slots",),
            response_fields=("slots",),
            available=True,
            optional_judge=True,  # slot_judge
        ),
    )
}


def _metrics(*specs: Metric) -> dict[str, Metric]:
    return {spec.id: spec for spec in specs}


_DIMENSIONS = ("style", "content", "naturalness", "personalization", "conversation")

METRICS: dict[str, Metric] = _metrics(
    Metric("al", "alignment", "row", True, (0.0, 100.0), needs_judge=True),
    *(
        Metric(f"al_{dim}", "alignment", "row", True, (0.0, 20.0), needs_judge=True)
        for dim in _DIMENSIONS
    ),
    Metric("binary", "alignment", "row", True, (0.0, 1.0), needs_judge=True),
    Metric("al_avg", "alignment", "summary", True, (0.0, 100.0), True, compare="al"),
    Metric("al_slope", "alignment", "summary", True, None, True),
    Metric(
        "al_intercept", "alignment", "summary", True, (-1e9, 1e9), True, ranked=False
    ),
    Metric("al_r2", "alignment", "summary", True, (0.0, 1.0), True, ranked=False),
    Metric(
        "binary_rate", "alignment", "summary", True, (0.0, 1.0), True, compare="binary"
    ),
    Metric("al_session_slope", "alignment", "summary", True, None, True),
    *(
        Metric(f"al_{dim}_avg", "alignment", "summary", True, (0.0, 20.0), True)
        for dim in _DIMENSIONS
    ),
)


def summary_metrics(suite: str) -> list[Metric]:
    return [m for m in METRICS.values() if m.suite == suite and m.level == "summary"]


ALIGNMENT_DIMENSIONS = _DIMENSIONS


def session_supports(suite: Suite, session: dict) -> bool:
    """Whether one (already validated) session carries what ``suite`` needs.

    >>> session_supports(SUITES["style"], {"sample_dialogues": "Hi!"})
    True
    >>> session_supports(SUITES["slots"], {"ground_truth_slots": {}, "rounds": []})
    False
    """
    if suite.session_fields and not any(
        session.get(name) not in (None, "", [], {}) for name in suite.session_fields
    ):
        return False
    return all(_any_response_has(session, name) for name in suite.response_fields)


def _any_response_has(session: dict, name: str) -> bool:
    for round_ in session.get("rounds", ()):
        for response in round_.get("responses", {}).values():
            if isinstance(response, dict) and response.get(name) is not None:
                return True
    return False
