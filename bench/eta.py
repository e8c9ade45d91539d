"""Whether the run page's early time-left ranges contain the time the run
actually took (issue 61 item 4: early ETAs were 2-5x pessimistic).

One alignment run of ``SESSIONS`` x 10 units, embedded worker, on the
scripted judge at ``LATENCY_S`` per call and ``JUDGE_CONCURRENCY`` 8, polled
like the page polls (``pipeline.progress.run_progress`` every ``POLL_S``).
Every range shown is checked against the time left, measured afterwards
from the first poll that saw every unit done (the summary is not part of
the range). Reported: the first range and the time then left, and the
share of ranges that contained it, over the first third of the run and
over all of it. No baseline ratio: the figure is a share, not a time.
"""

from __future__ import annotations

import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from bench.slow_judge_drill import _app, _file
from testing.judge_server import ScriptedJudge

SESSIONS = 200  # 2,000 units: about a minute at 0.2 s and c = 8
LATENCY_S = 0.2
POLL_S = 0.5
LIMIT_S = 900.0


def run(sessions: int = SESSIONS, latency_s: float = LATENCY_S) -> dict:
    from pipeline import progress
    from tests.pipeline_support import submit
    from tests.worker_support import stop_worker

    polls: list[tuple[datetime, list[int] | None, str | None]] = []
    with tempfile.TemporaryDirectory() as tmp, ScriptedJudge(latency_s) as judge:
        workdir = Path(tmp)
        path = _file(workdir, "e", sessions)
        app = _app(workdir / "app", CHUNK_UNITS=200)
        storage = app.extensions["storage"]
        try:
            run_id = submit(app, path, judge, suites=["alignment"], use_cache=False)
            deadline, ended = time.monotonic() + LIMIT_S, None
            while ended is None and time.monotonic() < deadline:
                found, now = storage.runs.get_run(run_id), datetime.now(UTC)
                shown = progress.run_progress(found, now)
                if found.total and found.done >= found.total:
                    ended = now
                elif found.status in ("failed", "cancelled"):
                    return {"status": found.status}
                else:
                    polls.append((now, shown["eta_range"], shown["eta_note"]))
                time.sleep(POLL_S)
        finally:
            stop_worker(app)
    if ended is None:
        return {"status": f"not done after {LIMIT_S:.0f} s"}
    return _figures(polls, ended)


def _figures(polls, ended: datetime) -> dict:
    start = polls[0][0]
    took = (ended - start).total_seconds()
    checks = []  # (seconds in, contained, low, left, high)
    for now, span, _note in polls:
        if span is None:
            continue
        left = (ended - now).total_seconds()
        contained = span[0] - POLL_S <= left <= span[1] + POLL_S
        checks.append(((now - start).total_seconds(), contained, *span, left))
    early = [c for c in checks if c[0] <= took / 3]

    def share(rows: list) -> float | None:
        return round(sum(c[1] for c in rows) / len(rows), 3) if rows else None

    first = checks[0] if checks else None
    return {
        "evaluation_s": round(took, 1),
        "estimating_polls": sum(1 for p in polls if p[1] is None),
        "first_range_at_s": None if first is None else round(first[0], 1),
        "first_range_s": None if first is None else [first[2], first[3]],
        "left_at_first_range_s": None if first is None else round(first[4], 1),
        "early_ranges": len(early),
        "early_contained_share": share(early),
        "all_ranges": len(checks),
        "all_contained_share": share(checks),
    }


if __name__ == "__main__":
    import json

    args = [float(a) for a in sys.argv[1:3]]
    sessions = int(args[0]) if args else SESSIONS
    latency = args[1] if len(args) > 1 else LATENCY_S
    print(json.dumps(run(sessions, latency), indent=1))
