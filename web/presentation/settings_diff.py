"""What differs between the runs of a comparison: the settings behind their
numbers (judge, sampling, history window, prompts or protocol, suites, suite
options, data file), listed only where two runs differ, so a reader sees at
once whether a difference of scores could come from a difference of setup.

>>> from types import SimpleNamespace as Side
>>> a = Side(label="a", judge={"models": ["m1"], "temperature": 0.0, "samples": 1},
...          facts={"suites": ["alignment"], "file_sha256": "ab" * 32, "options": {}})
>>> b = Side(label="b", judge={"models": ["m2"], "temperature": 0.0, "samples": 1},
...          facts={"suites": ["alignment"], "file_sha256": "ab" * 32, "options": {}})
>>> [(str(row["setting"]), row["values"]) for row in settings_diff([a, b])]
[('Judge', ['m1', 'm2'])]
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from core.i18n import LazyText, _l
from metrics.comparison import Side


def _judge(side: Side) -> dict[str, Any]:
    return side.judge or {}


def _json(value: object) -> str:
    return "—" if value in (None, {}, []) else json.dumps(value, sort_keys=True)


# each setting's label and how a side's value of it reads
SETTINGS: tuple[tuple[LazyText, Callable[[Side], str]], ...] = (
    (
        _l("Judge"),
        lambda s: ", ".join(_judge(s).get("models") or [_judge(s).get("model") or "—"]),
    ),
    (_l("Temperature"), lambda s: _json(_judge(s).get("temperature"))),
    (_l("Samples"), lambda s: _json(_judge(s).get("samples"))),
    (
        _l("History window (characters)"),
        lambda s: _json(_judge(s).get("history_chars")),
    ),
    (
        _l("Prompts"),
        lambda s: (
            ", ".join(
                f"{k}: {v}" for k, v in sorted((_judge(s).get("prompts") or {}).items())
            )
            or "—"
        ),
    ),
    (
        _l("Protocol"),
        lambda s: ((_judge(s).get("protocol") or {}).get("sha256") or "—")[:12],
    ),
    (_l("Suites"), lambda s: ", ".join(s.facts.get("suites") or [])),
    (_l("Suite options"), lambda s: _json(s.facts.get("options"))),
    (_l("Data file (SHA-256)"), lambda s: (s.facts.get("file_sha256") or "—")[:12]),
)


def settings_diff(sides: Iterable[Side]) -> list[dict[str, Any]]:
    """``[{"setting", "values"}]`` for the settings that are not the same in
    every run (values in the order of ``sides``)."""
    rows: list[dict[str, Any]] = []
    for setting, read in SETTINGS:
        values = [read(side) for side in sides]
        if len(set(values)) > 1:
            rows.append({"setting": setting, "values": values})
    return rows
