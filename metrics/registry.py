"""The suite registry: every suite module under ``metrics/suites/`` exports
``SUITE``, and this is the one list validation, the planner, the dashboard,
the exports and the CLI read.

Modules are discovered on first use (no list to edit when a suite is added)
and ordered by ``Suite.order``. Tests register extra suites with
:func:`registered`.

>>> {"alignment", "slots"} <= set(names())  # among others
True
>>> orders = [suite.order for suite in suites()]
>>> orders == sorted(orders)
True
>>> spec("slot_f1@basic_info").suite, spec("al").bounds
('slots', (0.0, 100.0))
>>> spec("no_such_metric") is None
True
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator
from contextlib import contextmanager

from core import problems
from core.registry import Registry
from metrics.protocol_checks import PROTOCOL_MODES
from metrics.suite import Metric, Suite


def _discover() -> None:
    import metrics.suites as package

    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        if isinstance(getattr(module, "SUITE", None), Suite):
            register(module.SUITE)


# name -> Suite, by Suite.order. Registering a suite registers the protocol
# modes it asks by name in the checker's PROTOCOL_MODES, whose discovery is
# this one: one lock for both, so two threads never wait for each other.
SUITES: Registry[Suite] = Registry(
    "suite",
    _discover,
    lambda name, suite: (suite.order, name),
    PROTOCOL_MODES.lock,
)
_metrics: dict[str, Metric] = {}


def register(suite: Suite) -> Suite:
    """Add a suite; its name and metric ids must be new."""
    with SUITES.lock:
        if suite.name in SUITES:
            raise ValueError(f"suite {suite.name!r} is already registered")
        taken = [m.id for m in suite.metrics if m.id in _metrics]
        if taken:
            raise ValueError(f"metric ids already registered: {taken}")
        for option in suite.options:
            if option.problem_message is not None:
                problems.define(option.problem, option.problem_message)
        taken = [m.name for m in suite.protocol_modes if m.name in PROTOCOL_MODES]
        if taken:
            raise ValueError(f"protocol modes already registered: {taken}")
        SUITES.register(suite.name, suite)
        _metrics.update({metric.id: metric for metric in suite.metrics})
        for mode in suite.protocol_modes:
            PROTOCOL_MODES.register(mode.name, mode)
    return suite


def unregister(name: str) -> None:
    with SUITES.lock:
        suite = SUITES.unregister(name)
        for metric in suite.metrics:
            _metrics.pop(metric.id, None)
        for mode in suite.protocol_modes:
            PROTOCOL_MODES.unregister(mode.name)


@contextmanager
def registered(suite: Suite) -> Iterator[Suite]:
    """A suite that exists for the duration of a ``with`` block (tests)."""
    len(SUITES)  # the discovered suites first
    register(suite)
    try:
        yield suite
    finally:
        unregister(suite.name)


def suites() -> list[Suite]:
    return SUITES.entries()


def names() -> list[str]:
    return SUITES.names()


def option_names() -> set[str]:
    """Every suite option's name (the settings a run stores in its options)."""
    return {option.name for suite in suites() for option in suite.options}


def get(name: str) -> Suite:
    """The suite called ``name`` (KeyError when there is none)."""
    return SUITES.get(name)


def metrics() -> dict[str, Metric]:
    len(SUITES)
    return dict(_metrics)


def spec(metric_id: str) -> Metric | None:
    """A metric's metadata; ``<id>@<key>`` resolves to a keyed metric ``id``."""
    len(SUITES)  # discovered
    found = _metrics.get(metric_id)
    if found is None and "@" in metric_id:
        base = _metrics.get(metric_id.split("@", 1)[0])
        found = base if base is not None and (base.keyed or base.per_judge) else None
    return found
