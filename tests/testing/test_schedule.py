"""The workers' order (testing/schedule.py): equal-count blocks of about
equal recorded time, as pytest-xdist's work-stealing scheduler splits them."""

from __future__ import annotations

import doctest
import random
from types import SimpleNamespace

import pytest
from xdist.scheduler.worksteal import WorkStealingScheduling

from testing import schedule


class Config:
    """What the scheduler reads of pytest's config: ``-n N`` as ``--tx``."""

    def __init__(self, workers: int):
        self.workers = workers

    def getvalue(self, name: str) -> list[str]:
        assert name == "tx"
        return [f"{self.workers}*popen"]


class Node:
    """A worker as the scheduler sees it; keeps what it is sent."""

    shutting_down = False

    def __init__(self, name: str) -> None:
        self.gateway = SimpleNamespace(id=name)
        self.sent: list[int] = []

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent.extend(indices)

    def shutdown(self) -> None:
        """Sent when a block is too short to steal from."""


def test_doctests():
    assert doctest.testmod(schedule).failed == 0


@pytest.mark.parametrize(("count", "workers"), [(2774, 6), (2774, 4), (13, 8)])
def test_blocks_are_what_the_work_stealing_scheduler_first_sends(count, workers):
    scheduler = WorkStealingScheduling(Config(workers))
    nodes = [Node(f"gw{index}") for index in range(workers)]
    collection = [f"t.py::{index}" for index in range(count)]
    for node in nodes:
        scheduler.add_node(node)
        scheduler.add_node_collection(node, collection)
    scheduler.schedule()
    assert [len(node.sent) for node in nodes] == schedule.block_sizes(count, workers)
    assert [index for node in nodes for index in node.sent] == list(range(count))


def test_each_block_gets_about_an_equal_share_of_the_time():
    rng = random.Random(60)
    seconds = {f"m{index}.py": rng.expovariate(0.2) for index in range(120)}
    ids = [f"{name}::t{test}" for name in seconds for test in range(rng.randint(1, 30))]
    order = schedule.balanced_order(ids, 6, seconds)
    assert sorted(order) == sorted(ids)
    per_test = {
        nodeid: seconds[schedule.module_of(nodeid)]
        / sum(
            1
            for other in ids
            if schedule.module_of(other) == schedule.module_of(nodeid)
        )
        for nodeid in ids
    }
    start, loads = 0, []
    for size in schedule.block_sizes(len(ids), 6):
        loads.append(sum(per_test[nodeid] for nodeid in order[start : start + size]))
        start += size
    assert max(loads) - min(loads) <= max(seconds.values())


def test_a_module_keeps_its_order_and_one_without_a_figure_counts_as_the_median():
    ids = ["a.py::2", "a.py::1", "b.py::1", "new.py::1", "c.py::1"]
    seconds = {"a.py": 1.0, "b.py": 5.0, "c.py": 9.0}
    order = schedule.balanced_order(ids, 1, seconds)
    assert order == ["c.py::1", "b.py::1", "new.py::1", "a.py::2", "a.py::1"]


def test_durations_round_trip_and_a_missing_file_means_no_figures(tmp_path):
    path = tmp_path / "durations.json"
    assert schedule.load_durations(path) == {}
    schedule.write_durations({"b.py": 2.345, "a.py": 1.0}, path)
    assert schedule.load_durations(path) == {"a.py": 1.0, "b.py": 2.3}
