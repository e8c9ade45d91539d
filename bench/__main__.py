"""``python -m bench`` (or ``make bench``): run every benchmark, print a table,
write ``bench/results.json``. Not part of the test suite's pass/fail."""

from __future__ import annotations

import json
import platform
import sys
from datetime import UTC, datetime
from pathlib import Path

from bench import (
    bounds_drill,
    client_cpu,
    convert_memory,
    cost_drill,
    dashboard,
    dashboard_browser,
    economics,
    eta,
    floor,
    handoff,
    judge_orchestration,
    load,
    pacing,
    pacing_peers,
    paid_once_drill,
    pairwise,
    per_call,
    prompt_cache,
    readers,
    slow_judge_drill,
    startup,
    style,
    suites,
    team_pages,
    validation,
)

BENCHMARKS = {
    "validation": validation.run,
    "judge_orchestration": judge_orchestration.run,
    "dashboard": dashboard.run,
    "dashboard_browser": dashboard_browser.run,
    "style": style.run,
    "load": load.run,
    "team_pages": team_pages.run,
    "suites": suites.run,
    "cost_drill": cost_drill.run,
    "pairwise": pairwise.run,
    "bounds_drill": bounds_drill.run,
    "startup": startup.run,
    "handoff": handoff.run,
    "client_cpu": client_cpu.run,
    "convert_memory": convert_memory.run,
    "floor": floor.run,
    "paid_once_drill": paid_once_drill.run,
    "slow_judge_drill": slow_judge_drill.run,
    "pacing": pacing.run,
    "prompt_cache": prompt_cache.run,
    "economics": economics.run,
}
# Run only when named (``python -m bench pacing_peers``): it installs the
# peers' own environment (bench/peers/env.py), which the product never needs.
# ``readers`` needs the team services (PostgreSQL, Redis) the default lacks.
# ``eta`` is a one-minute run whose figure is a share, not a speed.
# ``per_call`` checks out an earlier commit (a git worktree) to run beside.
ON_REQUEST = {
    "pacing_peers": pacing_peers.run,
    "readers": readers.run,
    "eta": eta.run,
    "per_call": per_call.run,
}
RESULTS = Path(__file__).resolve().parent / "results.json"


def main(selected: list[str]) -> int:
    names = selected or list(BENCHMARKS)
    # A partial run (``python -m bench style``) updates just those entries.
    previous = (
        json.loads(RESULTS.read_text())["results"]
        if selected and RESULTS.exists()
        else {}
    )
    results = dict(previous)
    for name in names:
        print(f"running {name} ...", file=sys.stderr, flush=True)
        results[name] = (BENCHMARKS | ON_REQUEST)[name]()
    document = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.node()} {platform.machine()} python {platform.python_version()}",
        "results": results,
    }
    RESULTS.write_text(json.dumps(document, indent=2) + "\n")
    for name in names:
        figures = dict(results[name])
        print(f"\n{figures.pop('name', name)}")
        width = max([28, *map(len, figures)])
        for key, value in figures.items():
            print(f"  {key:<{width}} {value}")
    print(f"\nwritten to {RESULTS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
