"""Page parts built once per version however many readers ask at once."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from web.presentation.single_flight import SingleFlight


def test_twenty_readers_of_a_new_version_share_one_build():
    parts, started, release, builds = (
        SingleFlight(),
        threading.Event(),
        threading.Event(),
        [],
    )

    def build():
        builds.append(1)
        started.set()
        release.wait()
        return "v1"

    with ThreadPoolExecutor(20) as pool:
        first = pool.submit(parts.get, "run", 1, build)
        started.wait()
        others = [pool.submit(parts.get, "run", 1, build) for _ in range(19)]
        release.set()
        assert {first.result(), *(f.result() for f in others)} == {"v1"}
    assert len(builds) == 1


def test_while_a_new_version_builds_readers_get_the_previous_one():
    parts, started, release = SingleFlight(), threading.Event(), threading.Event()
    parts.get("run", 1, lambda: "v1")

    def build():
        started.set()
        release.wait()
        return "v2"

    with ThreadPoolExecutor(2) as pool:
        builder = pool.submit(parts.get, "run", 2, build)
        started.wait()
        assert parts.get("run", 2, build) == "v1"  # at once, not waiting
        release.set()
        assert builder.result() == "v2"
    assert parts.get("run", 2, lambda: "never") == "v2"


def test_a_failed_build_leaves_nobody_waiting():
    parts, started, release = SingleFlight(), threading.Event(), threading.Event()

    def failing():
        started.set()
        release.wait()
        raise RuntimeError("bug")

    with ThreadPoolExecutor(2) as pool:
        builder = pool.submit(parts.get, "run", 1, failing)
        started.wait()
        waiter = pool.submit(parts.get, "run", 1, lambda: "own")
        release.set()
        with pytest.raises(RuntimeError):
            builder.result()
        assert waiter.result() == "own"
    assert parts.get("run", 1, lambda: "next") == "next"


def test_only_the_most_recent_families_are_kept():
    parts = SingleFlight(size=2)
    for family in ("a", "b", "c"):
        parts.get(family, 1, lambda family=family: family)
    assert parts.get("a", 1, lambda: "rebuilt") == "rebuilt"
    assert parts.get("c", 1, lambda: "rebuilt") == "c"
