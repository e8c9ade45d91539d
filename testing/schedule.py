"""The order the test workers take the suite in (issue 60 item 8: the full
suite on two cores).

pytest-xdist's work-stealing scheduler gives each worker an equal *count* of
tests, contiguous in collection order, and a worker that runs out steals the
last half of the longest queue (by count again). In collection order the
long tests bunch up: the fault drills, the worker drills and the witness sit
in a few folders, so the last minute of a run had one or two workers busy
with a 47 s drill while the others had nothing left to steal. Here each
worker's block of tests gets an equal share of the recorded time (longest
modules first, each to the block with the least time that has room: the
"longest processing time first" rule), and each block runs its longest
modules first, so what another worker steals from its end is short.

A module's tests stay together, in their order (its module-scoped fixtures
are built once per block it lands in). The times are per module, in
``testing/durations.json`` (``make durations`` records them); a module
without a figure counts as the median module. Stale figures cost balance,
never correctness: only the order changes.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path

DURATIONS = Path(__file__).with_name("durations.json")


def module_of(nodeid: str) -> str:
    """The test module of a node id.

    >>> module_of("tests/a/test_b.py::test_c[x-y]")
    'tests/a/test_b.py'
    """
    return nodeid.split("::", 1)[0]


def block_sizes(count: int, workers: int) -> list[int]:
    """How many tests the scheduler first sends each worker (its split of
    the pending tests over the idle workers, in turn).

    >>> block_sizes(10, 4)
    [2, 2, 3, 3]
    """
    sizes, start = [], 0
    for index in range(workers):
        size = (count - start) // (workers - index)
        sizes.append(size)
        start += size
    return sizes


def balanced_order(
    nodeids: Sequence[str], workers: int, seconds: Mapping[str, float]
) -> list[str]:
    """The node ids in the order whose equal-count blocks carry about equal
    recorded time, the longest modules at the front of each block.

    >>> ids = ["a.py::1", "a.py::2", "b.py::1", "c.py::1"]
    >>> balanced_order(ids, 2, {"a.py": 1.0, "b.py": 1.0, "c.py": 9.0})
    ['c.py::1', 'b.py::1', 'a.py::1', 'a.py::2']
    """
    modules: dict[str, list[str]] = {}
    for nodeid in nodeids:
        modules.setdefault(module_of(nodeid), []).append(nodeid)
    known = [seconds[name] for name in modules if name in seconds]
    default = statistics.median(known) if known else 1.0
    cost = {name: seconds.get(name, default) for name in modules}
    sizes = block_sizes(len(nodeids), workers)
    blocks: list[list[str]] = [[] for _ in sizes]
    loads = [0.0] * len(sizes)
    for name in sorted(modules, key=lambda name: -cost[name]):
        rest = modules[name]
        each = cost[name] / len(rest)
        while rest:  # a module larger than a block's room is split
            open_blocks = [i for i, size in enumerate(sizes) if len(blocks[i]) < size]
            chosen = min(open_blocks, key=lambda i: loads[i])
            room = sizes[chosen] - len(blocks[chosen])
            blocks[chosen].extend(rest[:room])
            loads[chosen] += each * len(rest[:room])
            rest = rest[room:]
    return [nodeid for block in blocks for nodeid in block]


def load_durations(path: Path = DURATIONS) -> dict[str, float]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # no figures: every module counts the same
        return {}


def write_durations(seconds: Mapping[str, float], path: Path = DURATIONS) -> None:
    rounded = {name: round(value, 1) for name, value in sorted(seconds.items())}
    path.write_text(json.dumps(rounded, indent=1) + "\n", encoding="utf-8")
